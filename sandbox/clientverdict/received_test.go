package clientverdict_test

import (
	"testing"

	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/clientverdict"
)

// TestReceivedIsReadInTheJournalsWords: the trace reads what the journal
// says a client received in the words of package accounts, which keeps
// the trace and so cannot be imported by it.
func TestReceivedIsReadInTheJournalsWords(t *testing.T) {
	codes := map[uint8]bool{}
	for _, word := range []string{accounts.ReceivedAll, accounts.ReceivedNothing, accounts.ReceivedHeaders, accounts.ReceivedPartial} {
		code, ok := clientverdict.ReceivedCode(word)
		if !ok || clientverdict.ReceivedWord(code) != word || codes[code] {
			t.Errorf("%q is read as %d (%t), and shown as %q", word, code, ok, clientverdict.ReceivedWord(code))
		}
		codes[code] = true
	}
}
