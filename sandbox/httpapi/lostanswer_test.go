package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

const newCampaign = `{"name":"Lost answer","platform":"ios","testersRequired":1,"rewardPerBug":1}`

// outcome is what the journal says of a request, beside what it was.
type outcome struct {
	Status     *int   `json:"status"`
	APIStatus  *int   `json:"apiStatus"`
	CarriedOut bool   `json:"carriedOut"`
	Received   string `json:"received"`
	Abandoned  bool   `json:"abandoned"`
	Pending    bool   `json:"pending"`
	Fault      *struct {
		ID string `json:"id"`
	} `json:"fault"`
}

// lastOutcome is what the journal says of the newest POST /v1/campaigns,
// once it is complete.
func (l *live) lastOutcome() outcome {
	l.t.Helper()
	for {
		var page struct{ Items []outcome }
		l.data("GET", "/_sandbox/requests?method=POST&path=/v1/campaigns&limit=1", "", &page)
		if len(page.Items) == 1 && !page.Items[0].Pending {
			return page.Items[0]
		}
	}
}

// campaignsCreated counts the campaign.created events, which a campaign
// that was carried out has made.
func (l *live) campaignsCreated() int {
	l.t.Helper()
	var page struct{ Items []struct{ Type string } }
	l.data("GET", "/_sandbox/events", "", &page)
	n := 0
	for _, e := range page.Items {
		if e.Type == "campaign.created" {
			n++
		}
	}
	return n
}

// remaining is the /v1 budget left, read from a GET that spends one.
func (l *live) remaining() string {
	l.t.Helper()
	res, _, err := l.send(context.Background(), "GET", "/v1/testers", "")
	if err != nil {
		l.t.Fatal(err)
	}
	return res.Header.Get("X-RateLimit-Remaining")
}

func (o outcome) status() int {
	if o.Status == nil {
		return 0
	}
	return *o.Status
}

// A fault of phase "after" lets the API carry the POST out and then drops
// its answer: the campaign exists, the client had nothing, and the journal
// says both.
func TestAFaultAfterTheWriteDropsTheAnswerOfAnAppliedPost(t *testing.T) {
	for _, tt := range []struct {
		network string
		lost    func(error) bool
	}{
		{"reset", func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }},
		{"close", func(err error) bool { return errors.Is(err, io.EOF) }},
	} {
		t.Run(tt.network, func(t *testing.T) {
			l := newLive(t)
			l.data("POST", "/_sandbox/faults", `{"method":"POST","path":"/v1/campaigns","network":"`+tt.network+`","phase":"after"}`, nil)
			res, _, err := l.send(context.Background(), "POST", "/v1/campaigns", newCampaign)
			if res != nil || !tt.lost(err) {
				t.Fatalf("the client got %v, %v; want no answer", res, err)
			}
			got := l.lastOutcome()
			if !got.CarriedOut || got.status() != http.StatusOK || got.Received != "nothing" || got.Abandoned || got.Fault == nil {
				t.Errorf("journal: %+v; want carried out, the API's 200, nothing received, not abandoned, the fault", got)
			}
			if n := l.campaignsCreated(); n != 1 {
				t.Errorf("%d campaigns created, want the one whose answer was lost", n)
			}
			if got := l.remaining(); got != "998" {
				t.Errorf("remaining %s after the applied POST and this GET, want 998: a request carried out counts", got)
			}
		})
	}
}

// A status fault of phase "after" answers the status in the API's place
// once the API has carried the request out, as a gateway that timed out
// after forwarding it would.
func TestAStatusAfterTheWriteAnswersInPlaceOfAnAppliedPost(t *testing.T) {
	l := newLive(t)
	l.data("POST", "/_sandbox/faults", `{"method":"POST","path":"/v1/campaigns","status":504,"phase":"after"}`, nil)
	res, _, err := l.send(context.Background(), "POST", "/v1/campaigns", newCampaign)
	if err != nil || res.StatusCode != http.StatusGatewayTimeout || res.Header.Get("X-Sandbox-Fault") == "" {
		t.Fatalf("the client got %v, %v; want the planned 504", res, err)
	}
	got := l.lastOutcome()
	if !got.CarriedOut || got.status() != http.StatusGatewayTimeout || got.Received != "all" {
		t.Errorf("journal: %+v; want carried out, the 504 sent, all of it received", got)
	}
	if n := l.campaignsCreated(); n != 1 {
		t.Errorf("%d campaigns created, want 1", n)
	}
}

// abandonDuringDelay sends a POST that a planned delay holds, gives up once
// the journal shows it waiting and, when carriedOut, once its campaign
// exists, and returns what the journal says of it.
func (l *live) abandonDuringDelay(fault string, carriedOut bool) outcome {
	l.t.Helper()
	l.data("POST", "/_sandbox/faults", fault, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := l.send(ctx, "POST", "/v1/campaigns", newCampaign)
		done <- err
	}()
	for {
		var page struct{ Items []outcome }
		l.data("GET", "/_sandbox/requests?method=POST&path=/v1/campaigns&limit=1", "", &page)
		if len(page.Items) == 1 && page.Items[0].Fault != nil && (!carriedOut || l.campaignsCreated() == 1) {
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		l.t.Fatalf("the request ended with %v, want its cancellation", err)
	}
	return l.lastOutcome()
}

// A client that gives up while a delay holds its request before the API
// leaves it not carried out: nothing made, no budget spent. One that gives
// up during a delay after the write has had nothing of the answer to a
// write that was made. The journal tells the two apart.
func TestAClientThatGivesUpDuringADelay(t *testing.T) {
	t.Run("before the write", func(t *testing.T) {
		l := newLive(t)
		got := l.abandonDuringDelay(`{"method":"POST","path":"/v1/campaigns","delayMs":30000}`, false)
		if got.CarriedOut || got.Status != nil || got.Received != "nothing" || !got.Abandoned {
			t.Errorf("journal: %+v; want not carried out, no status, nothing received, abandoned", got)
		}
		if n := l.campaignsCreated(); n != 0 {
			t.Errorf("%d campaigns created, want none", n)
		}
		if got := l.remaining(); got != "999" {
			t.Errorf("remaining %s after this GET alone, want 999: the abandoned POST spent nothing", got)
		}
	})
	t.Run("after the write", func(t *testing.T) {
		l := newLive(t)
		got := l.abandonDuringDelay(`{"method":"POST","path":"/v1/campaigns","delayMs":30000,"phase":"after"}`, true)
		if !got.CarriedOut || got.status() != http.StatusOK || got.Received != "nothing" || !got.Abandoned {
			t.Errorf("journal: %+v; want carried out, the API's 200, nothing received, abandoned", got)
		}
		if n := l.campaignsCreated(); n != 1 {
			t.Errorf("%d campaigns created, want 1", n)
		}
		if got := l.remaining(); got != "998" {
			t.Errorf("remaining %s, want 998: the POST carried out counts", got)
		}
	})
}

// What the client received of an answer a fault cut, trickled or let
// through, as the journal says it.
func TestTheJournalSaysWhatTheClientReceived(t *testing.T) {
	l := newLive(t)
	for _, tt := range []struct {
		fault      string
		carriedOut bool
		want       string
	}{
		{"", true, "all"},
		{`{"method":"POST","path":"/v1/campaigns","network":"truncate"}`, true, "partial"},
		{`{"method":"POST","path":"/v1/campaigns","network":"trickle","trickleMs":10}`, true, "all"},
		{`{"method":"POST","path":"/v1/campaigns","status":503}`, false, "all"},
		{`{"method":"POST","path":"/v1/campaigns","network":"malformed"}`, false, "all"},
		{`{"method":"POST","path":"/v1/campaigns","network":"close"}`, false, "nothing"},
	} {
		if tt.fault != "" {
			l.data("POST", "/_sandbox/faults", tt.fault, nil)
		}
		_, _, _ = l.send(context.Background(), "POST", "/v1/campaigns", newCampaign)
		if got := l.lastOutcome(); got.CarriedOut != tt.carriedOut || got.Received != tt.want {
			t.Errorf("%s: journal %+v; want carriedOut %v, received %q", tt.fault, got, tt.carriedOut, tt.want)
		}
	}
}

// A trickled answer its client leaves halfway was carried out, and the
// client had its headers and part of its body.
func TestATrickleLeftHalfwayWasReceivedInPart(t *testing.T) {
	l := newLive(t)
	l.data("POST", "/_sandbox/faults", `{"method":"POST","path":"/v1/campaigns","network":"trickle","trickleMs":30000}`, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", l.base+"/v1/campaigns", strings.NewReader(newCampaign))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The first piece comes with the headers.
	if _, err := res.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	res.Body.Close()
	got := l.lastOutcome()
	if !got.CarriedOut || got.status() != http.StatusOK || got.Received != "partial" || !got.Abandoned {
		t.Errorf("journal: %+v; want carried out, 200, part of it received, abandoned", got)
	}
}
