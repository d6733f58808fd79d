package sandboxtest_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

const campaign = `{"name":"Receiver","platform":"ios","testersRequired":1,"rewardPerBug":1}`

// register registers r for every event, gives it the webhook's secret, and
// returns the secret.
func (a *account) register(r *sandboxtest.Receiver) string {
	a.t.Helper()
	res, body := a.send("POST", "/v1/webhooks", `{"url":"`+r.URL+`","events":["*"]}`)
	var created struct{ Data struct{ Secret string } }
	if err := json.Unmarshal([]byte(body), &created); err != nil || res.StatusCode != http.StatusOK {
		a.t.Fatalf("register: %d %s", res.StatusCode, body)
	}
	r.SetSecret(created.Data.Secret)
	return created.Data.Secret
}

// Under a frozen clock a delivery is stamped in 2026-01-01, far from the
// test's own time: the receiver checks it against X-Sandbox-Now, verifies
// it, and refuses those a webhook fault forged or staled.
func TestTheReceiverVerifiesAgainstTheAccountsClock(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{Now: frozenAt})
	r := sandboxtest.NewReceiver(t)
	secret := a.register(r)
	bad, stale := client.WebhookFaultBadSignature, client.WebhookFaultStaleTimestamp
	for _, kind := range []client.WebhookFault{bad, stale} {
		event := client.EventFilter("*")
		if _, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{Event: &event, Webhook: &kind}); err != nil {
			t.Fatal(err)
		}
	}
	var got []sandboxtest.Delivery
	for n := range 3 {
		// One at a time, so that they arrive in the order planned.
		a.send("POST", "/v1/campaigns", campaign)
		var err error
		if got, err = r.Await(t.Context(), n+1); err != nil {
			t.Fatal(err)
		}
	}
	wants := []error{sandboxtest.ErrBadSignature, sandboxtest.ErrStaleTimestamp, nil}
	for i, d := range got {
		if !errors.Is(d.Err, wants[i]) || (wants[i] == nil) != (d.Err == nil) {
			t.Errorf("delivery %d: %v, want %v", i+1, d.Err, wants[i])
		}
	}
	// By the test's own clock, a year past the frozen one, it is stale.
	if err := sandboxtest.VerifyDelivery(secret, got[2].Header, got[2].Body, frozenAt.AddDate(1, 0, 0), sandboxtest.DefaultTolerance); !errors.Is(err, sandboxtest.ErrStaleTimestamp) {
		t.Errorf("checked against a clock a year on: %v, want it stale", err)
	}
	// The receiver has answered: the records show each attempt at once.
	page, err := a.ctl.Deliveries(t.Context(), sandboxtest.Page{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if page.Items == nil || len(page.Items) != 3 || page.Items[0].StatusCode != http.StatusNoContent || page.Items[2].StatusCode != http.StatusBadRequest {
		t.Errorf("records %+v, want the three answers, newest first", page.Items)
	}
}

// The lost answer, planned with the constructors: the POST is carried
// out, its client gets no answer, and the journal says so; the journal's
// headers are lists of strings.
func TestLostAnswerIsCarriedOutAndJournaled(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	if _, err := a.ctl.PlanFault(t.Context(), sandboxtest.On(sandboxtest.LostAnswer(), client.FaultMethodPOST, "/v1/campaigns")); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", a.baseURL+"/v1/campaigns", strings.NewReader(campaign))
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "lost-answer-test/1")
	if res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("got %d, want no answer", res.StatusCode)
	}
	page, err := a.ctl.Requests(t.Context(), sandboxtest.RequestFilter{}, sandboxtest.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	entry := page.Items[0]
	if !entry.CarriedOut || entry.Received != client.LoggedRequestReceivedNothing || entry.Status == nil || *entry.Status != http.StatusOK {
		t.Errorf("journal: carriedOut %v, received %s, status %v; want carried out, nothing received, the API's 200", entry.CarriedOut, entry.Received, entry.Status)
	}
	if ua := entry.Headers["User-Agent"][0]; ua != "lost-answer-test/1" {
		t.Errorf("User-Agent %q", ua)
	}
	if _, err := a.ctl.PlanFault(t.Context(), sandboxtest.On(sandboxtest.StatusFault(503), client.FaultMethodGET, "/v1/testers")); err != nil {
		t.Fatal(err)
	}
	if res, _ := a.send("GET", "/v1/testers", ""); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("StatusFault(503): %d", res.StatusCode)
	}
}

// A stubbed success answers in the API's place: before the API nothing is
// made; with phase after the campaign is made, and the journal has the
// API's own status beside the stub's.
func TestStubAnswersInTheAPIsPlaceInEitherPhase(t *testing.T) {
	const stub = `{"success":true,"data":{"id":"cmp_000042","status":"paused","region":"eu"}}`
	for _, phase := range []client.FaultPhase{client.FaultPhaseBefore, client.FaultPhaseAfter} {
		t.Run(string(phase), func(t *testing.T) {
			a := newAccount(t, sandboxtest.Options{})
			fault := sandboxtest.On(sandboxtest.Stub(http.StatusOK, stub), client.FaultMethodPOST, "/v1/campaigns")
			fault.Phase = &phase
			if _, err := a.ctl.PlanFault(t.Context(), fault); err != nil {
				t.Fatal(err)
			}
			res, body := a.send("POST", "/v1/campaigns", campaign)
			if res.StatusCode != http.StatusOK || body != stub || res.Header.Get("X-Sandbox-Fault") == "" {
				t.Errorf("answered %d %s, want the stub, marked", res.StatusCode, body)
			}
			page, err := a.ctl.Requests(t.Context(), sandboxtest.RequestFilter{}, sandboxtest.Page{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			entry := page.Items[0]
			after := phase == client.FaultPhaseAfter
			if entry.CarriedOut != after || entry.Status == nil || *entry.Status != http.StatusOK || (entry.ApiStatus != nil) != after {
				t.Errorf("journal: carriedOut %v, status %v, apiStatus %v; want carried out %v, the stub's 200, the API's status only after it", entry.CarriedOut, entry.Status, entry.ApiStatus, after)
			}
		})
	}
}

// DelayFault plans its duration as delayMs, in whole milliseconds up to
// the sandbox's bound, and the request it holds back is then carried out
// and answered as usual.
func TestDelayFaultHoldsTheRequestBackThenCarriesItOut(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	before := a.campaigns()
	for _, tt := range []struct {
		d      time.Duration
		wantMs int
	}{{time.Millisecond, 1}, {1500*time.Millisecond + time.Microsecond, 1500}, {sandbox.MaxFaultDelay, 30000}} {
		planned, err := a.ctl.PlanFault(t.Context(), sandboxtest.On(sandboxtest.DelayFault(tt.d), client.FaultMethodGET, "/v1/testers"))
		if err != nil || planned.DelayMs != tt.wantMs {
			t.Errorf("DelayFault(%v) planned delayMs %d (%v), want %d", tt.d, planned.DelayMs, err, tt.wantMs)
		}
	}
	_, err := a.ctl.PlanFault(t.Context(), sandboxtest.DelayFault(sandbox.MaxFaultDelay+time.Millisecond))
	var refused *sandboxtest.ControlError
	if !errors.As(err, &refused) || refused.Status != http.StatusBadRequest || len(refused.Details) != 1 || refused.Details[0].Field != "delayMs" {
		t.Errorf("DelayFault(%v) returned %v, want a 400 on delayMs", sandbox.MaxFaultDelay+time.Millisecond, err)
	}
	delayed, err := a.ctl.PlanFault(t.Context(), sandboxtest.On(sandboxtest.DelayFault(time.Millisecond), client.FaultMethodPOST, "/v1/campaigns"))
	if err != nil {
		t.Fatal(err)
	}
	res, body := a.send("POST", "/v1/campaigns", campaign)
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Sandbox-Fault") != delayed.Id {
		t.Errorf("delayed POST answered %d, X-Sandbox-Fault %q: %s; want the API's 200 from %s", res.StatusCode, res.Header.Get("X-Sandbox-Fault"), body, delayed.Id)
	}
	if n := a.campaigns(); n != before+1 {
		t.Errorf("%d campaigns after the delayed POST, want %d", n, before+1)
	}
}
