package sandboxtest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// driftRecorder is the test a sandbox reports its OpenAPI drift to, kept
// instead of failed, so a test can require a report as well as its absence.
type driftRecorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *driftRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *driftRecorder) reported() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errors, "\n")
}

// createWithClientHeaders creates a campaign as an SDK does, with headers of
// its own that the OpenAPI document does not declare.
func createWithClientHeaders(t *testing.T, baseURL string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/v1/campaigns",
		strings.NewReader(`{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer svc_test_client_headers")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "0f8fad5b-d9cb-469f-a165-70867728950e")
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	req.Header.Set("X-Client-Attempt", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/campaigns answered %d %s, want 200", res.StatusCode, body)
	}
}

func TestClientHeadersPassTheOpenAPICheckUnlessStrict(t *testing.T) {
	for _, tt := range []struct {
		name      string
		opts      sandboxtest.Options
		wantDrift []string
	}{
		{"by default", sandboxtest.Options{}, nil},
		{"with StrictRequestHeaders", sandboxtest.Options{StrictRequestHeaders: true}, []string{
			"request undeclared-header Idempotency-Key", "request undeclared-header Traceparent", "request undeclared-header X-Client-Attempt",
		}},
		{"with StrictRequestHeaders and the client's headers ignored", sandboxtest.Options{
			StrictRequestHeaders: true, IgnoredRequestHeaders: []string{"Idempotency-Key", "Traceparent", "X-Client-Attempt"},
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &driftRecorder{TB: t}
			srv := sandboxtest.NewServer(rec, tt.opts)
			createWithClientHeaders(t, srv.URL)

			reported := rec.reported()
			if tt.wantDrift == nil && reported != "" {
				t.Errorf("the check failed the test:\n%s", reported)
			}
			for _, want := range tt.wantDrift {
				if !strings.Contains(reported, want) {
					t.Errorf("the check did not report %q; it reported:\n%s", want, reported)
				}
			}
		})
	}
}

func TestStartAcceptsClientHeaders(t *testing.T) {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createWithClientHeaders(t, srv.URL)
	if err := srv.Close(); err != nil {
		t.Error(err)
	}
}

// With CORS origins, a browser's preflight and its request are answered as
// -cors-origins answers them, and the OpenAPI check, which describes the
// API and not Access-Control-*, leaves them to the kit; a request without
// an Origin is still checked.
func TestCORSOriginsLetABrowserInAndKeepTheCheckForTheRest(t *testing.T) {
	const origin = "https://app.example"
	rec := &driftRecorder{TB: t}
	srv := sandboxtest.NewServer(rec, sandboxtest.Options{
		CORS: httpapi.CORS{Origins: []string{origin}}, StrictRequestHeaders: true,
	})
	send := func(method string, header http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/v1/testers", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}

	preflight := send(http.MethodOptions, http.Header{
		"Origin": {origin}, "Access-Control-Request-Method": {"GET"}, "Access-Control-Request-Headers": {"authorization"},
	})
	if preflight.StatusCode != http.StatusNoContent || preflight.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("preflight: %d, Access-Control-Allow-Origin %q; want 204, %q", preflight.StatusCode, preflight.Header.Get("Access-Control-Allow-Origin"), origin)
	}
	browser := send(http.MethodGet, http.Header{"Origin": {origin}, "Authorization": {"Bearer svc_test_cors_browser"}})
	if browser.StatusCode != http.StatusOK || browser.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("GET from %s: %d, Access-Control-Allow-Origin %q; want 200, %q", origin, browser.StatusCode, browser.Header.Get("Access-Control-Allow-Origin"), origin)
	}
	if reported := rec.reported(); reported != "" {
		t.Errorf("the check failed a browser's exchanges:\n%s", reported)
	}

	send(http.MethodGet, http.Header{"Authorization": {"Bearer svc_test_cors_browser"}, "X-Client-Attempt": {"1"}})
	if reported := rec.reported(); !strings.Contains(reported, "request undeclared-header X-Client-Attempt") {
		t.Errorf("a request without Origin was not checked; the check reported:\n%s", reported)
	}
}
