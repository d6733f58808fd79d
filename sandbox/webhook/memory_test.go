package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// meter adds up what outboxes charge.
type meter struct {
	mu   sync.Mutex
	held int64
}

func (m *meter) Hold(n int64)    { m.mu.Lock(); m.held += n; m.mu.Unlock() }
func (m *meter) Release(n int64) { m.mu.Lock(); m.held -= n; m.mu.Unlock() }

func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// What outboxes charge the memory budget covers the heap they keep at their
// worst: every delivery pending a retry, with an event as large as a bug's
// description allows, and every record kept.
func TestWhatAnOutboxChargesCoversWhatItKeeps(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures under the race detector are not the sandbox's")
	}
	for _, hooks := range []int{1, 16} {
		t.Run(fmt.Sprintf("%d webhooks", hooks), func(t *testing.T) { checkChargeCoversHeap(t, hooks) })
	}
}

func checkChargeCoversHeap(t *testing.T, hooks int) {
	const outboxes = 8
	// A receiver that keeps nothing of what it gets.
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(rcv.Close)
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen), LoopbackOnly: true})
	var hookList []sandbox.Webhook
	for i := range hooks {
		hookList = append(hookList, hook(fmt.Sprintf("whk_%06d", i+1), rcv.URL))
	}
	description := strings.Repeat("x", sandbox.MaxBugDescriptionLength)
	m := &meter{}
	before := heapLive()
	kept := make([]*webhook.Outbox, outboxes)
	for i := range kept {
		o := d.NewOutbox(fmt.Sprintf("acct%02d", i), sandbox.NewFrozenClock(frozen), m)
		kept[i] = o
		// Enough events to fill the pending deliveries and the records.
		for n := range 1000 {
			e := event(n + 1)
			e.JSON = fmt.Appendf(nil, `{"id":%q,"data":{"description":%q}}`, e.ID, description)
			o.Send(e, hookList, nil)
		}
		settled(t, o)
	}
	heap := heapLive() - before
	m.mu.Lock()
	charged := m.held
	m.mu.Unlock()
	t.Logf("%d outboxes keep %d KiB of heap, %d KiB an outbox; charged %d KiB an outbox", outboxes, heap>>10, heap/outboxes>>10, charged/outboxes>>10)
	if heap > charged {
		t.Errorf("outboxes keep %d bytes and are charged %d", heap, charged)
	}
	runtime.KeepAlive(kept)
}
