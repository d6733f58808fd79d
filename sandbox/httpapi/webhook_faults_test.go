package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// seen is one POST as a receiver that checks signatures sees it.
type seen struct {
	webhookID string
	eventID   string
	timestamp int64
	genuine   bool
}

// verifyingReceiver checks every delivery's signature with the webhook's
// secret, as a receiver should, answers 401 to one that does not verify
// and 204 to the rest, and keeps what it saw.
type verifyingReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	posts  []seen
}

func newVerifyingReceiver(t *testing.T) *verifyingReceiver {
	t.Helper()
	r := &verifyingReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var event struct{ ID string }
		_ = json.Unmarshal(body, &event)
		ts, err := strconv.ParseInt(req.Header.Get("Webhook-Timestamp"), 10, 64)
		r.mu.Lock()
		genuine := err == nil && req.Header.Get("Webhook-Signature") == webhook.Signature(r.secret, ts, body)
		r.posts = append(r.posts, seen{req.Header.Get("Webhook-Id"), event.ID, ts, genuine})
		r.mu.Unlock()
		if !genuine {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// since returns what the receiver saw after its first n posts.
func (r *verifyingReceiver) since(n int) []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.posts[n:]...)
}

type faultedDelivery struct {
	EventID    string `json:"eventId"`
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	StatusCode int    `json:"statusCode"`
	Fault      *struct {
		ID      string `json:"id"`
		Event   string `json:"event"`
		Webhook string `json:"webhook"`
		DelayMS int    `json:"delayMs"`
	} `json:"fault"`
}

// settle waits, through the control, until no delivery is in flight,
// queued or due, and returns how they stand.
func (l *live) settle() sandbox.Settlement {
	l.t.Helper()
	var s sandbox.Settlement
	l.data("POST", "/_sandbox/deliveries/settle", `{"timeoutMs":10000}`, &s)
	if !s.Settled {
		l.t.Fatalf("deliveries did not settle: %+v", s)
	}
	return s
}

func (l *live) newestDeliveries(n int) []faultedDelivery {
	l.t.Helper()
	var page struct{ Items []faultedDelivery }
	l.data("GET", "/_sandbox/deliveries?limit="+strconv.Itoa(n), "", &page)
	return page.Items
}

// Each webhook fault, planned through the control, as a receiver on a real
// port sees it, and as the deliveries and the faults list say.
func TestWebhookFaultsAsAReceiverSeesThem(t *testing.T) {
	// Retries and delays are due on the account's clock or, at the latest,
	// in real time: long ones, so that only the moves the test makes
	// bring them.
	srv := sandboxtest.NewServer(t, sandboxtest.Options{Now: frozenAt, ControlMinuteLimit: 1 << 20, WebhookRetry: time.Hour})
	l := &live{t: t, base: srv.URL, key: testKey}
	rcv := newVerifyingReceiver(t)
	var hook struct{ Secret string }
	l.data("POST", "/v1/webhooks", `{"url":"`+rcv.URL+`","events":["*"]}`, &hook)
	rcv.secret = hook.Secret

	t.Run("duplicate", func(t *testing.T) {
		l.t = t
		var planned sandbox.Fault
		l.data("POST", "/_sandbox/faults", `{"event":"campaign.created","webhook":"duplicate","count":2}`, &planned)
		before := len(rcv.since(0))
		l.data("POST", "/v1/campaigns", validCampaign, nil)
		l.settle()
		got := rcv.since(before)
		if len(got) != 2 || got[0].webhookID != got[1].webhookID || got[0].eventID != got[1].eventID || !got[0].genuine || !got[1].genuine {
			t.Fatalf("receiver saw %+v, want one genuine event twice with one Webhook-Id", got)
		}
		for _, d := range l.newestDeliveries(2) {
			if d.Fault == nil || d.Fault.ID != planned.ID || d.Fault.Webhook != "duplicate" || d.Attempt != 1 || d.StatusCode != 204 {
				t.Errorf("delivery %+v, want a first attempt answered 204 naming %s", d, planned.ID)
			}
		}
		var faults struct{ Items []sandbox.Fault }
		l.data("GET", "/_sandbox/faults", "", &faults)
		if len(faults.Items) != 1 || *faults.Items[0].Left != 1 || faults.Items[0].Fired != 1 || faults.Items[0].Event != "campaign.created" {
			t.Errorf("faults %+v, want the duplicate fault with 1 left and 1 fired", faults.Items)
		}
		var journal struct {
			Items []struct {
				Method, Path   string
				DeliveryFaults []sandbox.Fault
			}
		}
		l.data("GET", "/_sandbox/requests?limit=1&method=POST&path=/v1/campaigns", "", &journal)
		if len(journal.Items) != 1 || len(journal.Items[0].DeliveryFaults) != 1 || journal.Items[0].DeliveryFaults[0].ID != planned.ID {
			t.Errorf("journal %+v, want the create that made the event naming %s", journal.Items, planned.ID)
		}
		var cleared struct{ Cleared int }
		l.data("DELETE", "/_sandbox/faults", "", &cleared)
		if cleared.Cleared != 1 {
			t.Errorf("cleared %d, want the webhook fault", cleared.Cleared)
		}
	})

	t.Run("staleTimestamp", func(t *testing.T) {
		l.t = t
		l.data("POST", "/_sandbox/faults", `{"event":"*","webhook":"staleTimestamp"}`, nil)
		before := len(rcv.since(0))
		l.data("POST", "/v1/campaigns", validCampaign, nil)
		l.settle()
		got := rcv.since(before)
		want := frozenAt.Add(-10 * time.Minute).Unix()
		if len(got) != 1 || got[0].timestamp != want || !got[0].genuine {
			t.Fatalf("receiver saw %+v, want one genuine delivery stamped %d, ten minutes before the account's clock", got, want)
		}
	})

	t.Run("badSignature", func(t *testing.T) {
		l.t = t
		l.data("POST", "/_sandbox/faults", `{"event":"*","webhook":"badSignature"}`, nil)
		before := len(rcv.since(0))
		l.data("POST", "/v1/campaigns", validCampaign, nil)
		if s := l.settle(); s.Scheduled != 1 {
			t.Fatalf("after the forged delivery: %+v, want its retry scheduled", s)
		}
		l.data("POST", "/_sandbox/clock", `{"advance":"1h"}`, nil)
		l.settle()
		got := rcv.since(before)
		if len(got) != 2 || got[0].genuine || !got[1].genuine || got[0].webhookID != got[1].webhookID {
			t.Fatalf("receiver saw %+v, want a forged delivery, refused, then its genuine retry", got)
		}
		retry, forged := l.newestDeliveries(2)[0], l.newestDeliveries(2)[1]
		if forged.StatusCode != 401 || forged.Fault == nil || forged.Fault.Webhook != "badSignature" || retry.Fault != nil || retry.Attempt != 2 {
			t.Errorf("deliveries %+v then %+v, want the forged one refused with its fault, then a retry no fault touched", forged, retry)
		}
	})

	t.Run("delayMs", func(t *testing.T) {
		l.t = t
		l.data("POST", "/_sandbox/faults", `{"event":"campaign.created","delayMs":30000}`, nil)
		before := len(rcv.since(0))
		l.data("POST", "/v1/campaigns", validCampaign, nil)
		if s := l.settle(); s.Scheduled != 1 || len(rcv.since(before)) != 0 {
			t.Fatalf("before the delay: %+v and %d posts, want it scheduled and nothing sent", s, len(rcv.since(before)))
		}
		var clock struct{ Now string }
		l.data("POST", "/_sandbox/clock", `{"advance":"30s"}`, &clock)
		l.settle()
		if got := rcv.since(before); len(got) != 1 || !got[0].genuine {
			t.Fatalf("receiver saw %+v, want the delayed delivery", got)
		}
		if d := l.newestDeliveries(1)[0]; d.At != clock.Now || d.Fault == nil || d.Fault.DelayMS != 30000 {
			t.Errorf("delivery %+v, want it attempted at %s with its fault", d, clock.Now)
		}
	})

	t.Run("reorder", func(t *testing.T) {
		l.t = t
		l.data("POST", "/_sandbox/faults", `{"event":"bug.created","webhook":"reorder"}`, nil)
		before := len(rcv.since(0))
		l.data("POST", "/_sandbox/bugs", `{"campaignId":"cmp_000001","title":"Crash on checkout","severity":"high"}`, nil)
		if s := l.settle(); s.Held != 1 || len(rcv.since(before)) != 0 {
			t.Fatalf("before the next event: %+v and %d posts, want one held and nothing sent", s, len(rcv.since(before)))
		}
		l.data("POST", "/v1/campaigns", validCampaign, nil)
		if s := l.settle(); s.Held != 0 {
			t.Fatalf("after the next event: %+v, want nothing held", s)
		}
		got := rcv.since(before)
		// Event IDs count up: the bug's event is the older.
		if len(got) != 2 || got[0].eventID <= got[1].eventID || !got[0].genuine || !got[1].genuine {
			t.Fatalf("receiver saw %+v, want the campaign's event, then the bug's", got)
		}
		var delivered []string
		for _, d := range l.newestDeliveries(2) {
			delivered = append([]string{d.EventID}, delivered...)
		}
		if diff := cmp.Diff([]string{got[0].eventID, got[1].eventID}, delivered); diff != "" {
			t.Errorf("the deliveries' order is not the receiver's (-receiver +deliveries):\n%s", diff)
		}
		if l.newestDeliveries(1)[0].Fault == nil {
			t.Errorf("the reordered delivery, the newest, does not name its fault")
		}
	})
}
