package sandboxtest_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// getCampaigns is an SDK's call with its retry loop: a 503 is retried once,
// after wait has been given the answer's Retry-After.
func getCampaigns(t *testing.T, baseURL, key string, wait func(retryAfter time.Duration)) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequest(http.MethodGet, baseURL+"/v1/campaigns", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || attempt == 2 {
			return
		}
		seconds, err := strconv.Atoi(res.Header.Get("Retry-After"))
		if err != nil {
			t.Fatalf("Retry-After %q: %v", res.Header.Get("Retry-After"), err)
		}
		wait(time.Duration(seconds) * time.Second)
	}
}

// TestRequireClientRulesHeldFailsAClientThatRetriesTooSoon runs a client
// that retries a 503 before its Retry-After, and one that waits, then
// asks the verdict as a suite would: the first fails the test with the
// rule and what the client did, the second passes.
func TestRequireClientRulesHeldFailsAClientThatRetriesTooSoon(t *testing.T) {
	srv := sandboxtest.NewServer(t, sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, tc := range []struct {
		name  string
		waits bool
	}{
		{"waits out Retry-After", true},
		{"retries at once", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "svc_test_verdict_" + strconv.FormatBool(tc.waits)
			controls := sandboxtest.NewControls(srv.URL, key)
			if _, err := controls.PlanFault(t.Context(), client.FaultPlanCreate{Path: new("/v1/campaigns"), Status: new(503)}); err != nil {
				t.Fatal(err)
			}
			getCampaigns(t, srv.URL, key, func(retryAfter time.Duration) {
				if !tc.waits {
					return
				}
				// The account's clock is frozen: the client's wait is
				// a move of it.
				if _, err := controls.AdvanceClock(t.Context(), retryAfter); err != nil {
					t.Fatal(err)
				}
			})
			suite := &driftRecorder{TB: t}
			controls.RequireClientRulesHeld(suite, sandboxtest.Window{})
			failure := suite.reported()
			if tc.waits {
				if failure != "" {
					t.Errorf("a client that waited out Retry-After failed the test:\n%s", failure)
				}
				return
			}
			for _, want := range []string{
				"CLI-6 (should), broken 1 of 1 times",
				"GET /v1/campaigns (request 1) was answered 503 with Retry-After asking for 1.000 s, and GET /v1/campaigns (request 2) was sent",
			} {
				if !strings.Contains(failure, want) {
					t.Errorf("the failure does not say %q:\n%s", want, failure)
				}
			}
		})
	}
}

// TestVerdictWindow judges only what came after a verdict's LastRequest,
// or since a time: a test judges its own part of a shared account.
func TestVerdictWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := sandboxtest.NewServer(t, sandboxtest.Options{Now: now})
	const key = "svc_test_verdict_window"
	controls := sandboxtest.NewControls(srv.URL, key)
	if _, err := controls.PlanFault(t.Context(), client.FaultPlanCreate{Path: new("/v1/campaigns"), Status: new(503)}); err != nil {
		t.Fatal(err)
	}
	getCampaigns(t, srv.URL, key, func(time.Duration) {})
	before, err := controls.Verdict(t.Context(), sandboxtest.Window{})
	if err != nil {
		t.Fatal(err)
	}
	if before.Held || before.LastRequest != 2 || before.Requests != 2 {
		t.Fatalf("the verdict on a retry too soon: held %v, last request %d, %d judged", before.Held, before.LastRequest, before.Requests)
	}
	moved, err := controls.AdvanceClock(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	getCampaigns(t, srv.URL, key, func(time.Duration) {})
	for name, w := range map[string]sandboxtest.Window{
		"after": {After: before.LastRequest},
		"since": {Since: moved},
	} {
		v, err := controls.Verdict(t.Context(), w)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Held || v.Requests != 1 || v.LastRequest != 3 {
			t.Errorf("%s: held %v, %d judged, last request %d; want held, 1, 3:\n%s", name, v.Held, v.Requests, v.LastRequest, sandboxtest.BrokenRules(v))
		}
	}
	_, err = controls.Verdict(t.Context(), sandboxtest.Window{After: 1, Since: now})
	var refused *sandboxtest.ControlError
	if !errors.As(err, &refused) || refused.Status != http.StatusBadRequest || refused.Code != client.ErrorCodeINVALIDPARAMETER {
		t.Errorf("since and after together: %v, want 400 INVALID_PARAMETER", err)
	}
}
