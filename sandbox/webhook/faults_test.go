package webhook_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/webhook"
)

func webhookFault(id string, spec sandbox.FaultSpec) *sandbox.Fault {
	left := 0
	return &sandbox.Fault{ID: id, FaultSpec: spec, Left: &left, Fired: 1}
}

// verifies reports whether a post carries the signature the webhook's
// secret makes for its Webhook-Timestamp and body, as a receiver checks it.
func verifies(h sandbox.Webhook, p post) bool {
	ts, err := strconv.ParseInt(p.header.Get("Webhook-Timestamp"), 10, 64)
	return err == nil && p.header.Get("Webhook-Signature") == webhook.Signature(h.Secret, ts, p.body)
}

func settled(t *testing.T, o *webhook.Outbox) sandbox.Settlement {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	return o.Settle(ctx)
}

func TestADuplicatedDeliveryComesTwiceWithOneWebhookID(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusNoContent))
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen)})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	h, e := hook("whk_000001", rcv.URL), event(1)
	fault := webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookDuplicate})
	o.Send(e, []sandbox.Webhook{h}, []*sandbox.Fault{fault})
	if s := settled(t, o); !s.Settled {
		t.Fatalf("not settled: %+v", s)
	}
	got := rcv.received()
	if len(got) != 2 {
		t.Fatalf("receiver got %d posts, want the event twice", len(got))
	}
	for i, p := range got {
		if id := p.header.Get("Webhook-Id"); id != webhook.MessageID("acct", e.ID) {
			t.Errorf("post %d: Webhook-Id %s, want the event's one", i+1, id)
		}
		if !verifies(h, p) || string(p.body) != string(e.JSON) {
			t.Errorf("post %d is not the signed event", i+1)
		}
	}
	recs := records(o)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		if r.Fault == nil || r.Fault.ID != fault.ID || r.Attempt != 1 || r.StatusCode != http.StatusNoContent {
			t.Errorf("record %+v, want a first attempt answered 204 that names %s", r, fault.ID)
		}
	}
}

func TestAReorderedDeliveryComesAfterTheNextEvent(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusNoContent))
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen)})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	h, other := hook("whk_000001", rcv.URL), hook("whk_000002", rcv.URL+"/other")
	fault := webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookReorder})
	o.Send(event(1), []sandbox.Webhook{h}, []*sandbox.Fault{fault})
	// An event to another webhook is not the next one for h.
	o.Send(event(2), []sandbox.Webhook{other}, nil)
	s := settled(t, o)
	if s.Held != 1 || !s.Settled {
		t.Fatalf("before the next event: %+v, want settled with 1 held", s)
	}
	if n := len(rcv.received()); n != 1 {
		t.Fatalf("receiver got %d posts while the reordered one is held, want only the other webhook's", n)
	}
	o.Send(event(3), []sandbox.Webhook{h}, nil)
	if s := settled(t, o); !s.Settled || s.Held != 0 {
		t.Fatalf("after the next event: %+v", s)
	}
	var order []string
	for _, p := range rcv.received()[1:] {
		order = append(order, p.header.Get("Webhook-Id"))
	}
	want := []string{webhook.MessageID("acct", "evt_000003"), webhook.MessageID("acct", "evt_000001")}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("Webhook-Ids as received (-want +got):\n%s", diff)
	}
	if r := records(o)[0]; r.EventID != "evt_000001" || r.Fault == nil || r.Fault.ID != fault.ID {
		t.Errorf("newest record %+v, want the held event with its fault", r)
	}
}

func TestADelayedDeliveryWaitsOnTheAccountsClock(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusNoContent))
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen)})
	account := sandbox.NewFrozenClock(frozen)
	o := d.NewOutbox("acct", account, nil)
	fault := webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventCampaignCreated, DelayMS: 5000})
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, []*sandbox.Fault{fault})
	if s := settled(t, o); s.Scheduled != 1 || len(rcv.received()) != 0 {
		t.Fatalf("before the delay: %+v and %d posts, want 1 scheduled and none", s, len(rcv.received()))
	}
	account.Advance(4999 * time.Millisecond)
	if s := settled(t, o); s.Scheduled != 1 {
		t.Fatalf("a millisecond early: %+v, want still scheduled", s)
	}
	account.Advance(time.Millisecond)
	r := waitRecords(t, o, 1)[0]
	if want := sandbox.At(frozen.Add(5 * time.Second)); r.At != want || r.Fault == nil {
		t.Errorf("record %+v, want an attempt at %s with the fault", r, want)
	}
	if ts := rcv.received()[0].header.Get("Webhook-Timestamp"); ts != strconv.FormatInt(frozen.Unix()+5, 10) {
		t.Errorf("Webhook-Timestamp %s, want the time it was sent", ts)
	}
}

func TestABadSignatureIsRefusedAndItsRetryVerifies(t *testing.T) {
	h := hook("whk_000001", "")
	var rcv *receiver
	rcv = newReceiver(t, func(n int) int {
		if verifies(h, rcv.received()[n-1]) {
			return http.StatusNoContent
		}
		return http.StatusUnauthorized
	})
	h.URL = rcv.URL
	account := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen), FirstRetry: time.Minute})
	o := d.NewOutbox("acct", account, nil)
	fault := webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookBadSignature})
	o.Send(event(1), []sandbox.Webhook{h}, []*sandbox.Fault{fault})
	waitRecords(t, o, 1)
	account.Advance(time.Minute)
	recs := waitRecords(t, o, 2)
	got := rcv.received()
	if !regexp.MustCompile(`^v1=[0-9a-f]{64}$`).MatchString(got[0].header.Get("Webhook-Signature")) {
		t.Errorf("forged signature %q does not have the form of a real one", got[0].header.Get("Webhook-Signature"))
	}
	if recs[1].StatusCode != http.StatusUnauthorized || recs[1].Fault == nil {
		t.Errorf("first attempt %+v, want 401 from the receiver and the fault named", recs[1])
	}
	if recs[0].StatusCode != http.StatusNoContent || recs[0].Fault != nil || !verifies(h, got[1]) {
		t.Errorf("retry %+v, want a genuine delivery that no fault touched", recs[0])
	}
}

func TestAStaleTimestampIsSignedOver(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusNoContent))
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen)})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	h := hook("whk_000001", rcv.URL)
	fault := webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookStaleTimestamp})
	o.Send(event(1), []sandbox.Webhook{h}, []*sandbox.Fault{fault})
	waitRecords(t, o, 1)
	p := rcv.received()[0]
	stale := frozen.Add(-sandbox.StaleTimestampAge).Unix()
	if ts := p.header.Get("Webhook-Timestamp"); ts != strconv.FormatInt(stale, 10) {
		t.Errorf("Webhook-Timestamp %s, want %d, ten minutes before the account's clock", ts, stale)
	}
	if !verifies(h, p) {
		t.Error("the stale delivery's signature does not verify: it must be signed over its timestamp")
	}
}

// A delivery a reorder fault holds back waits to be tried, and counts
// against Pending as a queued one does.
func TestAHeldBackDeliveryCountsAgainstPending(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusNoContent))
	d := start(t, webhook.Options{Pending: 1, Clock: sandbox.NewFrozenClock(frozen)})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	h := hook("whk_000001", rcv.URL)
	fault := webhookFault("flt_000001", sandbox.FaultSpec{Event: sandbox.EventAny, Webhook: sandbox.WebhookReorder})
	o.Send(event(1), []sandbox.Webhook{h}, []*sandbox.Fault{fault})
	o.Send(event(2), []sandbox.Webhook{h}, nil)
	r := waitRecords(t, o, 1)[0]
	if r.EventID != "evt_000002" || r.Error != "dropped: the account has too many deliveries waiting" {
		t.Errorf("record %+v, want event 2 dropped", r)
	}
	if s := settled(t, o); s.Held != 1 || len(rcv.received()) != 0 {
		t.Errorf("%+v and %d posts, want event 1 still held and nothing sent", s, len(rcv.received()))
	}
}
