package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// A decoder's test plans a success the API could send but never does, with
// its own body and headers: before the API, nothing is carried out; after
// it, the write is made and the stub answers in its place. Either way the
// answer is marked, and the journal says what the client got and, after
// the API, what the API answered.
func TestAStubbedSuccessAnswersInTheAPIsPlace(t *testing.T) {
	const stub = `{"success":true,"data":{"id":"cmp_999999","status":"archived_soon","extra":[1,2]}}`
	body, _ := json.Marshal(stub)
	for _, tt := range []struct {
		phase      string
		carriedOut bool
		created    int
		apiStatus  int
	}{
		{phase: "before"},
		{phase: "after", carriedOut: true, created: 1, apiStatus: http.StatusOK},
	} {
		t.Run(tt.phase, func(t *testing.T) {
			l := newLive(t)
			l.data("POST", "/_sandbox/faults", `{"method":"POST","path":"/v1/campaigns","status":201,"phase":"`+tt.phase+`",
				"headers":{"X-Request-Id":"req_stub"},"body":`+string(body)+`}`, nil)
			res, raw, err := l.send(context.Background(), "POST", "/v1/campaigns", newCampaign)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusCreated || string(raw) != stub {
				t.Errorf("answered %d %s, want the stub's 201 and body", res.StatusCode, raw)
			}
			if res.Header.Get("X-Sandbox-Fault") == "" || res.Header.Get("X-Request-Id") != "req_stub" || res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v, want X-Sandbox-Fault, the planned X-Request-Id and a JSON Content-Type", res.Header)
			}
			got := l.lastOutcome()
			if got.status() != http.StatusCreated || got.CarriedOut != tt.carriedOut || got.Received != "all" || got.Fault == nil {
				t.Errorf("journal: %+v; want the stub's 201 sent whole, carried out %v, the fault", got, tt.carriedOut)
			}
			apiStatus := 0
			if got.APIStatus != nil {
				apiStatus = *got.APIStatus
			}
			if apiStatus != tt.apiStatus {
				t.Errorf("journal apiStatus %d, want %d", apiStatus, tt.apiStatus)
			}
			if n := l.campaignsCreated(); n != tt.created {
				t.Errorf("%d campaigns created, want %d", n, tt.created)
			}
		})
	}
}

// Answers with no body: a 200 planned without one is empty, a 204 and a
// 304 carry no length, and a redirect sends the client where its Location
// says, which a client's HTTP stack follows.
func TestStubsWithoutABody(t *testing.T) {
	l := newLive(t)
	for _, tt := range []struct {
		fault  string
		status int
		length string
	}{
		{fault: `{"status":200}`, status: http.StatusOK, length: "0"},
		{fault: `{"status":204,"headers":{"ETag":"\"v2\""}}`, status: http.StatusNoContent},
		{fault: `{"method":"GET","status":304}`, status: http.StatusNotModified},
	} {
		l.data("POST", "/_sandbox/faults", tt.fault, nil)
		res, raw, err := l.send(context.Background(), "GET", "/v1/campaigns", "")
		if err != nil {
			t.Fatalf("%s: %v", tt.fault, err)
		}
		if res.StatusCode != tt.status || len(raw) != 0 || res.Header.Get("Content-Length") != tt.length ||
			res.Header.Get("Content-Type") != "" || res.Header.Get("X-Sandbox-Fault") == "" {
			t.Errorf("%s: %d %q, Content-Length %q, Content-Type %q; want %d, no body, Content-Length %q, no Content-Type, X-Sandbox-Fault",
				tt.fault, res.StatusCode, raw, res.Header.Get("Content-Length"), res.Header.Get("Content-Type"), tt.status, tt.length)
		}
	}

	l.data("POST", "/_sandbox/faults", `{"method":"GET","path":"/v1/campaigns","status":307,"headers":{"Location":"/v1/testers"}}`, nil)
	res, _, err := l.send(context.Background(), "GET", "/v1/campaigns", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/v1/testers" {
		t.Errorf("followed to %s, answered %d; want the redirect followed to /v1/testers", res.Request.URL.Path, res.StatusCode)
	}
	got := l.journal("?limit=2")
	if len(got) != 2 || got[1].Path != "/v1/campaigns" || got[1].Status == nil || *got[1].Status != http.StatusTemporaryRedirect || got[0].Path != "/v1/testers" {
		t.Errorf("journal %+v, want the 307 and then the GET it sent the client to", got)
	}
}
