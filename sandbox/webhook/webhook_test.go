package webhook_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/store"
	"github.com/testcampaign/kit/sandbox/webhook"
)

var frozen = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// setup returns a store whose events go to a dispatcher, and an account in it.
func setup(t *testing.T, opts webhook.Options) (*store.Store, string) {
	t.Helper()
	seed, err := fixtures.Load(fixtures.Default())
	if err != nil {
		t.Fatal(err)
	}
	var dispatcher *webhook.Dispatcher
	clock := sandbox.NewFrozenClock(frozen)
	st, err := store.New(clock, seed, store.WithEventListener(func(e sandbox.Event) { dispatcher.Notify(e) }))
	if err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Clock, opts.Logger = st, clock, slog.New(slog.DiscardHandler)
	dispatcher = webhook.Start(opts)
	t.Cleanup(dispatcher.Close)
	account := sandbox.Account{ID: "acct"}
	if err := st.EnsureAccount(account); err != nil {
		t.Fatal(err)
	}
	return st, account.ID
}

type received struct {
	header http.Header
	body   []byte
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDeliversSignedEventsAndRetriesFailures(t *testing.T) {
	var mu sync.Mutex
	var got []received
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, received{r.Header.Clone(), body})
		if len(got) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer receiver.Close()

	st, account := setup(t, webhook.Options{FirstRetry: 10 * time.Millisecond})
	hook, err := st.CreateWebhook(account, sandbox.WebhookInput{URL: receiver.URL, Events: []string{sandbox.EventCampaignCreated}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateWebhook(account, sandbox.WebhookInput{URL: receiver.URL, Events: []string{sandbox.EventBugUpdated}}); err != nil {
		t.Fatal(err)
	}
	campaign, err := st.CreateCampaign(account, sandbox.CampaignInput{Name: "Hooked", Platform: "web", TestersRequired: 2, RewardPerBug: "3.10"})
	if err != nil {
		t.Fatal(err)
	}

	waitFor(t, "a retried delivery", func() bool {
		page, _ := st.Deliveries(account, sandbox.PageRequest{Limit: 10})
		return len(page.Items) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("receiver got %d posts, want 2 (one failure, one retry)", len(got))
	}
	for _, r := range got {
		ts := r.header.Get("Webhook-Timestamp")
		n, _ := strconv.ParseInt(ts, 10, 64)
		if want := webhook.Signature(hook.Secret, n, r.body); r.header.Get("Webhook-Signature") != want || n != frozen.Unix() {
			t.Errorf("signature %q at %s, want %q at %d", r.header.Get("Webhook-Signature"), ts, want, frozen.Unix())
		}
		var payload struct {
			ID, Type, CreatedAt string
			Data                struct{ ID, RewardPerBug json.RawMessage }
		}
		if err := json.Unmarshal(r.body, &payload); err != nil {
			t.Fatal(err)
		}
		if payload.Type != "campaign.created" || r.header.Get("Webhook-Id") != payload.ID || string(payload.Data.RewardPerBug) != "3.10" ||
			string(payload.Data.ID) != `"`+campaign.ID+`"` || payload.CreatedAt != "2026-07-01T12:00:00Z" {
			t.Errorf("payload %s with Webhook-Id %s", r.body, r.header.Get("Webhook-Id"))
		}
	}
	page, _ := st.Deliveries(account, sandbox.PageRequest{Limit: 10})
	retried, first := page.Items[0], page.Items[1]
	next := frozen.Add(10 * time.Millisecond)
	want := []sandbox.Delivery{
		{WebhookID: hook.ID, EventID: "evt_000001", EventType: "campaign.created", URL: receiver.URL, Attempt: 1, StatusCode: 503, Error: "receiver answered 503", NextAttemptAt: &next},
		{WebhookID: hook.ID, EventID: "evt_000001", EventType: "campaign.created", URL: receiver.URL, Attempt: 2, StatusCode: 200},
	}
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		name := p.Last().String()
		return name == ".ID" || name == ".At" || name == ".Seq" || name == ".AccountID"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, []sandbox.Delivery{first, retried}, ignore); diff != "" {
		t.Errorf("recorded attempts (-want +got):\n%s", diff)
	}
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	var posts atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer receiver.Close()
	st, account := setup(t, webhook.Options{FirstRetry: time.Millisecond, MaxAttempts: 3})
	if _, err := st.CreateWebhook(account, sandbox.WebhookInput{URL: receiver.URL, Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCampaign(account, sandbox.CampaignInput{Name: "x", Platform: "ios", TestersRequired: 1, RewardPerBug: "0"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three attempts", func() bool {
		page, _ := st.Deliveries(account, sandbox.PageRequest{Limit: 10})
		return len(page.Items) == 3
	})
	time.Sleep(50 * time.Millisecond)
	page, _ := st.Deliveries(account, sandbox.PageRequest{Limit: 10})
	if posts.Load() != 3 || len(page.Items) != 3 || page.Items[0].NextAttemptAt != nil {
		t.Errorf("%d posts, %d records, last %+v; want 3 and no further attempt", posts.Load(), len(page.Items), page.Items[0])
	}
}

func TestSlowReceiverNeverBlocksWrites(t *testing.T) {
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer receiver.Close()
	defer close(release)
	st, account := setup(t, webhook.Options{Workers: 1, QueueSize: 2})
	if _, err := st.CreateWebhook(account, sandbox.WebhookInput{URL: receiver.URL, Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	for range 20 {
		if _, err := st.CreateCampaign(account, sandbox.CampaignInput{Name: "x", Platform: "ios", TestersRequired: 1, RewardPerBug: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	if elapsed := time.Since(started); elapsed > 2*time.Second {
		t.Errorf("20 writes took %v behind a stuck receiver", elapsed)
	}
	page, _ := st.Deliveries(account, sandbox.PageRequest{Limit: 100})
	if len(page.Items) < 17 || page.Items[0].Error == "" {
		t.Errorf("%d recorded attempts; want the overflow recorded as dropped", len(page.Items))
	}
}

func TestUnreachableReceiverIsRecorded(t *testing.T) {
	st, account := setup(t, webhook.Options{MaxAttempts: 1})
	if _, err := st.CreateWebhook(account, sandbox.WebhookInput{URL: "http://127.0.0.1:1/nothing", Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCampaign(account, sandbox.CampaignInput{Name: "x", Platform: "ios", TestersRequired: 1, RewardPerBug: "0"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a failed attempt", func() bool {
		page, _ := st.Deliveries(account, sandbox.PageRequest{Limit: 1})
		return len(page.Items) == 1 && page.Items[0].Error != "" && page.Items[0].StatusCode == 0
	})
}
