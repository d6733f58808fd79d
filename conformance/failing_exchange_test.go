package conformance_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestACardShowsTheFailingExchange: a step whose request got no
// connection at all has no exchange of its own, and the report shows none
// rather than the exchange of the step before it, which did nothing wrong.
func TestACardShowsTheFailingExchange(t *testing.T) {
	t.Parallel()
	api := sandboxtest.NewHandler(t, sandboxtest.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/campaigns" {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), "Hang up") {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	feature := `Feature: Hung up
  Scenario: The second request gets no connection
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hang up", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 200
`
	if err := os.WriteFile(filepath.Join(dir, "hung.feature"), []byte(feature), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: "svc_test_hung_up_exchange", NoBuiltin: true, FeatureDirs: []string{dir},
		Explore: -1, Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Status != kit.Errored {
		t.Fatalf("scenarios %+v, want one errored", rep.Scenarios)
	}
	s := rep.Scenarios[0]
	if !strings.Contains(s.Message, "POST") || !strings.Contains(s.FailedStep, "POST") {
		t.Errorf("the card's step %q and why %q do not name the POST that got no connection", s.FailedStep, s.Message)
	}
	if strings.Contains(s.Request, "/v1/testers") || strings.Contains(s.Response, "tst_") {
		t.Errorf("the card shows the exchange before the failing one: %s → %s", s.Request, s.Response)
	}
}
