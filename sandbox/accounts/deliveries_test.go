package accounts

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// Deliveries waiting for their retries, with their events, and delivery
// records count toward the memory budget: accounts whose store alone would
// fit many times over are dropped, least recently used first, once their
// deliveries pass it.
func TestDeliveriesCountTowardTheMemoryBudget(t *testing.T) {
	const (
		budget    = 1 << 20
		accounts  = 8
		webhooks  = 16
		campaigns = 20
	)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Retries wait on frozen clocks that nothing moves: every failed
	// delivery stays pending, and its event with it.
	d := webhook.Start(webhook.Options{LoopbackOnly: true, Clock: sandbox.NewFrozenClock(frozen)})
	t.Cleanup(d.Close)
	newOutbox := func(id string, clock sandbox.Clock, budget Budget) Outbox { return d.NewOutbox(id, clock, budget) }
	campaign := sandbox.CampaignInput{Name: "A campaign whose events are worth keeping", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}
	fill := func(r *Registry, i int) *Account {
		t.Helper()
		a := r.Get(key(i))
		for range webhooks {
			if _, err := a.Store.CreateWebhook(t.Context(), sandbox.WebhookInput{URL: failing.URL, Events: []string{sandbox.EventAny}}); err != nil {
				t.Fatalf("account %d: %v", i, err)
			}
		}
		for range campaigns {
			if _, err := a.Store.CreateCampaign(t.Context(), campaign); err != nil {
				t.Fatalf("account %d: %v", i, err)
			}
		}
		if a.Outbox != nil {
			if s := a.Outbox.Settle(t.Context()); !s.Settled || s.Scheduled == 0 {
				t.Fatalf("account %d: deliveries %+v, want settled with retries pending", i, s)
			}
		}
		return a
	}

	withoutDeliveries := newRegistry(t, Config{Max: 100, MemoryBudget: 1 << 40, FrozenAt: frozen})
	fill(withoutDeliveries, 0)
	storeBytes := withoutDeliveries.MemoryUsed()
	if accounts*storeBytes > budget/2 {
		t.Fatalf("the store alone takes %d bytes an account: the test needs writes that fit the budget many times over", storeBytes)
	}

	r := newRegistry(t, Config{Max: 100, MemoryBudget: budget, FrozenAt: frozen, NewOutbox: newOutbox})
	first := fill(r, 0)
	perAccount := r.MemoryUsed()
	if perAccount < storeBytes+webhooks*campaigns*(jobBytesAtLeast) {
		t.Fatalf("one account with %d deliveries pending holds %d bytes by the budget, %d of them its store's: its deliveries are not counted",
			webhooks*campaigns, perAccount, storeBytes)
	}
	for i := 1; i < accounts; i++ {
		fill(r, i)
	}
	if used := r.MemoryUsed(); used > budget {
		t.Errorf("%d bytes counted, over the budget of %d", used, budget)
	}
	if !first.dropped {
		t.Error("the least recently used account is held although its deliveries and seven others' pass the budget")
	}
	if _, held := r.Held(key(accounts - 1)); !held {
		t.Error("the newest account was dropped")
	}
	r.Close()
	if used := r.MemoryUsed(); used != 0 {
		t.Errorf("%d bytes counted after every account was dropped", used)
	}
}

// jobBytesAtLeast is less than what a pending delivery costs by any count:
// its job alone, without its event.
const jobBytesAtLeast = 256
