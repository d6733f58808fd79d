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
	"time"

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

// Once every delivery is done, an outbox is charged for the records it keeps
// and no more: the jobs, their events and the copies and held deliveries
// that faults make are given back.
func TestAnOutboxGivesBackWhatItsDeliveriesHeld(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusNoContent))
	account := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen)})
	m := &meter{}
	o := d.NewOutbox("acct", account, m)
	h := hook("whk_000001", rcv.URL)
	faults := []*sandbox.Fault{
		webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookDuplicate}),
		// Held back until the delayed event after it, and sent after that.
		webhookFault("flt_000002", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookReorder}),
		webhookFault("flt_000003", sandbox.FaultSpec{Event: sandbox.EventAny, DelayMS: 1000}),
	}
	const plain = 20
	for i, f := range faults {
		o.Send(event(i+1), []sandbox.Webhook{h}, []*sandbox.Fault{f})
	}
	for n := range plain {
		o.Send(event(len(faults)+n+1), []sandbox.Webhook{h}, nil)
	}
	account.Advance(time.Second)
	// The duplicate is recorded twice.
	want := len(faults) + plain + 1
	waitRecords(t, o, want)
	if s := settled(t, o); !s.Settled || s.Held != 0 || s.Scheduled != 0 {
		t.Fatalf("after every delivery: %+v, want settled with nothing held or scheduled", s)
	}
	// The dispatcher's Close waits for the attempts, which charge the meter
	// after their records are kept.
	d.Close()

	recs := records(o)
	if len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	var kept int64
	for _, r := range recs {
		kept += webhook.RecordCharge(r)
	}
	m.mu.Lock()
	held := m.held
	m.mu.Unlock()
	if held > kept+webhook.MeterStep {
		t.Errorf("the meter holds %d bytes for %d records that account for %d", held, len(recs), kept)
	}
}
