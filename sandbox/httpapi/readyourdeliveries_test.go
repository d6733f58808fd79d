package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// readRuns is how many times a receiver answers and then reads its
// delivery's record: every one of them must find it.
const readRuns = 100

// A receiver that has answered an attempt finds it in GET
// /_sandbox/deliveries read at once, with no settle: the read waits for
// the attempts already sent to be recorded.
func TestAReceiverReadsTheAttemptItAnsweredAtOnce(t *testing.T) {
	answered := make(chan string)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		// On the wire before the test hears of it.
		_ = http.NewResponseController(w).Flush()
		answered <- r.Header.Get("Webhook-Id")
	}))
	t.Cleanup(receiver.Close)
	l := newLive(t)
	l.data("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["campaign.created"]}`, nil)
	found := 0
	for run := range readRuns {
		var created struct{ ID string }
		l.data("POST", "/v1/campaigns", newCampaign, &created)
		<-answered
		var page struct {
			Items []struct {
				EventID    string `json:"eventId"`
				StatusCode int    `json:"statusCode"`
			}
		}
		l.data("GET", "/_sandbox/deliveries?limit=1", "", &page)
		var event struct {
			Items []struct{ ID string }
		}
		l.data("GET", "/_sandbox/events?limit=1", "", &event)
		if len(page.Items) == 1 && page.Items[0].EventID == event.Items[0].ID && page.Items[0].StatusCode == http.StatusNoContent {
			found++
		} else {
			t.Errorf("run %d: the newest delivery record is %+v, want event %s answered 204", run+1, page.Items, event.Items[0].ID)
		}
	}
	t.Logf("%d of %d answered attempts read at once", found, readRuns)
}

// A read, and a verdict, wait for an attempt sent to a receiver that hangs
// no longer than their bound, and answer without it.
func TestAReadDoesNotWaitForAHangingReceiver(t *testing.T) {
	release := make(chan struct{})
	reached := make(chan struct{}, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(receiver.Close)
	t.Cleanup(func() { close(release) })
	l := newLive(t)
	l.data("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["campaign.created"]}`, nil)
	l.data("POST", "/v1/campaigns", newCampaign, nil)
	<-reached
	var page struct{ Items []struct{ EventID string } }
	l.data("GET", "/_sandbox/deliveries", "", &page)
	if len(page.Items) != 0 {
		t.Errorf("records %+v of an attempt still waiting for its answer, want none", page.Items)
	}
	var verdict struct{ Deliveries int }
	l.data("GET", "/_sandbox/verdict", "", &verdict)
	if verdict.Deliveries != 0 {
		t.Errorf("the verdict judged %d attempts still waiting for their answer, want none", verdict.Deliveries)
	}
}

// A receiver that has answered an attempt finds it judged by GET
// /_sandbox/verdict asked at once, with no settle: the verdict waits for
// the attempts already sent to be recorded, as a read of the records does.
// Each run is a key of its own, so that only the attempt just answered can
// exercise CLI-14.
func TestAReceiverFindsTheAttemptItAnsweredJudgedAtOnce(t *testing.T) {
	answered := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		// On the wire before the test hears of it.
		_ = http.NewResponseController(w).Flush()
		answered <- struct{}{}
	}))
	t.Cleanup(receiver.Close)
	l := newLive(t)
	judged := 0
	for run := range readRuns {
		l.key = fmt.Sprintf("svc_test_verdict%016x", run)
		l.data("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["campaign.created"]}`, nil)
		l.data("POST", "/v1/campaigns", newCampaign, nil)
		<-answered
		var verdict struct {
			Deliveries int
			Rules      []struct{ ID, Outcome string }
		}
		l.data("GET", "/_sandbox/verdict", "", &verdict)
		outcome := ""
		for _, r := range verdict.Rules {
			if r.ID == "CLI-14" {
				outcome = r.Outcome
			}
		}
		if verdict.Deliveries == 1 && outcome == "held" {
			judged++
		} else {
			t.Errorf("run %d: the verdict judged %d deliveries and CLI-14 %q, want the answered attempt and held", run+1, verdict.Deliveries, outcome)
		}
	}
	t.Logf("%d of %d answered attempts judged at once", judged, readRuns)
}
