package sandboxtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi/client"
)

// Window limits a verdict to part of the account's history; the zero
// Window judges all the trace holds. Set one of its fields.
type Window struct {
	// Since judges the requests that arrived at or after it, on the
	// account's clock, and the delivery attempts made since.
	Since time.Time
	// After judges the requests numbered after it: the LastRequest of a
	// verdict asked for before the part to judge began.
	After int
}

// Verdict judges the client that used the key against every client rule
// of docs/contract.md (CLI): each held, broken, with the requests and
// deliveries that show it, or not exercised. Judging reads what the
// account kept and changes nothing.
func (c *Controls) Verdict(ctx context.Context, w Window) (client.Verdict, error) {
	params := &client.JudgeClientParams{}
	if !w.Since.IsZero() {
		since := w.Since.UTC()
		params.Since = &since
	}
	if w.After > 0 {
		params.After = &w.After
	}
	judged, err := answer[client.VerdictEnvelope](c.api.JudgeClient(ctx, params))
	return judged.Data, err
}

// RequireClientRulesHeld asks for the verdict on the key's client and fails
// the test, listing each broken rule with its breaks, if the client broke
// any: run the suite, then call it.
func (c *Controls) RequireClientRulesHeld(tb testing.TB, w Window) {
	tb.Helper()
	v, err := c.Verdict(context.Background(), w)
	if err != nil {
		tb.Fatalf("ask for the verdict on the client: %v", err)
	}
	if broken := BrokenRules(v); broken != "" {
		tb.Errorf("the client broke client rules of docs/contract.md:\n%s", broken)
	}
}

// BrokenRules lists the rules a verdict says the client broke, a rule and
// its breaks a few lines each; it is empty when the client broke none.
func BrokenRules(v client.Verdict) string {
	var b strings.Builder
	for _, r := range v.Rules {
		if r.Outcome != client.ClientRuleVerdictOutcomeBroken {
			continue
		}
		fmt.Fprintf(&b, "%s (%s), broken %d of %d times: %s\n", r.Id, r.Level, r.BrokenTimes, r.Judged, r.Rule)
		for _, br := range r.Breaks {
			fmt.Fprintf(&b, "  - %s\n", br.Why)
		}
		if hidden := r.BrokenTimes - len(r.Breaks); hidden > 0 {
			fmt.Fprintf(&b, "  - and %d more\n", hidden)
		}
	}
	return b.String()
}
