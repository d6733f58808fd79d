package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// hookReceiver records the Webhook-Id of every POST and answers status.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	ids []string
}

func newHookReceiver(t *testing.T, handler http.HandlerFunc) *hookReceiver {
	t.Helper()
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("Webhook-Id"))
		r.mu.Unlock()
		handler(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

func answer(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }
}

type delivery struct {
	WebhookID     string  `json:"webhookId"`
	EventID       string  `json:"eventId"`
	StatusCode    int     `json:"statusCode"`
	Error         string  `json:"error"`
	Attempt       int     `json:"attempt"`
	At            string  `json:"at"`
	NextAttemptAt *string `json:"nextAttemptAt"`
}

func (c *client) deliveries() []delivery {
	c.t.Helper()
	var got page[delivery]
	c.ok("GET", "/_sandbox/deliveries?limit=100", "", &got)
	return got.Items
}

// hookClient is a client of a sandbox whose accounts' outboxes it can wait on.
type hookClient struct {
	*client
	sb *sandboxtest.Sandbox
}

func newHookClient(t *testing.T, opts sandboxtest.Options) hookClient {
	t.Helper()
	sb := sandboxtest.New(t, opts)
	return hookClient{&client{t: t, handler: sb.Handler, key: testKey}, sb}
}

// waitDeliveries waits until the account has recorded n deliveries, on its
// outbox rather than by polling the controls, whose budget it would spend,
// and returns them as GET /_sandbox/deliveries lists them.
func (c hookClient) waitDeliveries(n int) []delivery {
	c.t.Helper()
	outbox := c.sb.Accounts.Get(c.key).Outbox.(*webhook.Outbox)
	for {
		recorded := outbox.Recorded()
		if len(outbox.Deliveries(sandbox.PageRequest{Limit: n}).Items) >= n {
			return c.deliveries()
		}
		select {
		case <-recorded:
		case <-time.After(10 * time.Second):
			c.t.Fatalf("%d deliveries recorded, want %d: %+v", len(c.deliveries()), n, c.deliveries())
		}
	}
}

func TestSeventeenthWebhookIsRefused(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	for i := range 16 {
		c.ok("POST", "/v1/webhooks", fmt.Sprintf(`{"url":"http://127.0.0.1:9/hook/%d","events":["*"]}`, i), nil)
	}
	res := c.fails("POST", "/v1/webhooks", `{"url":"http://127.0.0.1:9/hook/17","events":["*"]}`, http.StatusConflict, "LIMIT_REACHED")
	if !strings.Contains(res.env.Error.Message, "16") {
		t.Errorf("message %q does not name the cap", res.env.Error.Message)
	}
}

// TestResetCancelsRetriesAndRenewsWebhookIds also shows how a frozen-clock
// sandbox retries: moving the account's clock makes the retry due.
func TestResetCancelsRetriesAndRenewsWebhookIds(t *testing.T) {
	failing := newHookReceiver(t, answer(http.StatusInternalServerError))
	c := newHookClient(t, sandboxtest.Options{Now: frozenAt, WebhookRetry: time.Hour})
	register := `{"url":"` + failing.URL + `","events":["campaign.created"]}`
	c.ok("POST", "/v1/webhooks", register, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	c.waitDeliveries(1)
	c.ok("POST", "/_sandbox/clock", `{"advance":"1h"}`, nil)
	c.waitDeliveries(2)
	clock := c.sb.Accounts.Get(testKey).Frozen
	if n := clock.Waiting(); n != 1 {
		t.Fatalf("%d retries scheduled after the second failure, want 1", n)
	}
	c.ok("POST", "/_sandbox/reset", "", nil)
	if got := c.deliveries(); len(got) != 0 {
		t.Errorf("the reset account shows %d old deliveries", len(got))
	}
	if n := clock.Waiting(); n != 0 {
		t.Errorf("%d retries of the old account still scheduled after the reset", n)
	}

	ok := newHookReceiver(t, answer(http.StatusNoContent))
	c.ok("POST", "/v1/webhooks", `{"url":"`+ok.URL+`","events":["campaign.created"]}`, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	c.waitDeliveries(1)
	if n := len(failing.received()); n != 2 {
		t.Errorf("the old receiver got %d attempts, want the 2 before the reset", n)
	}
	first, again := failing.received()[0], ok.received()[0]
	// Both are evt_000001 of the same key, before and after the reset.
	if first == again {
		t.Errorf("Webhook-Id %s repeats after a reset; receivers that de-duplicate would drop the new event", again)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target := newHookReceiver(t, answer(http.StatusOK))
	redirecting := newHookReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	c := newHookClient(t, sandboxtest.Options{})
	c.ok("POST", "/v1/webhooks", `{"url":"`+redirecting.URL+`","events":["*"]}`, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	got := c.waitDeliveries(1)[0]
	if got.StatusCode != http.StatusTemporaryRedirect || !strings.Contains(got.Error, "redirects are not followed") || got.NextAttemptAt == nil {
		t.Errorf("redirected attempt recorded as %+v, want a failed 307 to retry", got)
	}
	if n := len(target.received()); n != 0 {
		t.Errorf("the redirect's target got %d deliveries", n)
	}
}

func TestDenyPrivateRefusesALoopbackReceiver(t *testing.T) {
	recv := newHookReceiver(t, answer(http.StatusOK))
	c := newHookClient(t, sandboxtest.Options{WebhookDenyPrivate: true})
	c.ok("POST", "/v1/webhooks", `{"url":"`+recv.URL+`","events":["*"]}`, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	got := c.waitDeliveries(1)[0]
	if got.Error != "destination not allowed by the sandbox's egress policy" || got.NextAttemptAt != nil {
		t.Errorf("loopback receiver under deny-private: %+v, want the policy's refusal, not retried", got)
	}
	if strings.Contains(got.Error, "127.0.0.1") {
		t.Errorf("the refusal names the address: %q", got.Error)
	}
	if n := len(recv.received()); n != 0 {
		t.Errorf("the refused receiver got %d deliveries", n)
	}
}

func TestDeliveryTimesHaveThreeFractionalDigits(t *testing.T) {
	recv := newHookReceiver(t, answer(http.StatusInternalServerError))
	c := newHookClient(t, sandboxtest.Options{Now: frozenAt, WebhookRetry: time.Hour})
	c.ok("POST", "/v1/webhooks", `{"url":"`+recv.URL+`","events":["*"]}`, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	got := c.waitDeliveries(1)[0]
	if got.At != "2026-03-14T15:09:26.000Z" || got.NextAttemptAt == nil || *got.NextAttemptAt != "2026-03-14T16:09:26.000Z" {
		t.Errorf("delivery times %q and %v, want the account's frozen clock to the millisecond", got.At, got.NextAttemptAt)
	}
}

// A test waits for its account's deliveries by asking the sandbox to settle:
// the answer comes once every attempt made or due is recorded, and says how
// many retries wait for a clock that has not reached them.
func TestSettleAnswersOnceDeliveriesAreDone(t *testing.T) {
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	receiver := newHookReceiver(t, answer(http.StatusServiceUnavailable))
	c := newClient(t, sandboxtest.Options{Now: at, WebhookRetry: time.Hour})
	c.ok("POST", "/v1/webhooks", fmt.Sprintf(`{"url":%q,"events":["campaign.created"]}`, receiver.URL), nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	var settled sandbox.Settlement
	c.ok("POST", "/_sandbox/deliveries/settle", `{"timeoutMs":10000}`, &settled)
	if !settled.Settled || settled.Scheduled != 1 || len(c.deliveries()) != 1 {
		t.Fatalf("after the first attempt: %+v, %d deliveries; want settled, one retry scheduled, one record", settled, len(c.deliveries()))
	}
	c.ok("POST", "/_sandbox/clock", `{"advance":"1h"}`, nil)
	c.ok("POST", "/_sandbox/deliveries/settle", `{}`, &settled)
	if got := c.deliveries(); !settled.Settled || len(got) != 2 || got[0].Attempt != 2 {
		t.Errorf("after the move: %+v, deliveries %+v; want the retry made and recorded", settled, got)
	}
	c.fails("POST", "/_sandbox/deliveries/settle", `{"timeoutMs":0}`, http.StatusBadRequest, "VALIDATION_ERROR")
	c.fails("POST", "/_sandbox/deliveries/settle", `{"timeout":5}`, http.StatusBadRequest, "VALIDATION_ERROR")
}
