package conformance_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestAShouldBreakWaitsForTheLastStep: a deployment echoes the key in an
// error's message, which breaks a @should rule of every response. Without
// --strict the break waits for the scenario's last step, so a later
// check the deployment fails still fails the scenario instead of being
// skipped under a warning; a scenario whose own checks hold only warns.
// With --strict the break fails both.
func TestAShouldBreakWaitsForTheLastStep(t *testing.T) {
	t.Parallel()
	srv := serve(t, breaking(sandboxtest.NewHandler(t, sandboxtest.Options{}), nil, func(r *http.Request, res *response) {
		if r.URL.Path == "/v1/nowhere" {
			res.errorObject(func(e map[string]any) { e["message"] = r.Header.Get("Authorization") })
		}
	}))
	dir := t.TempDir()
	feature := `Feature: Echoed key
  Scenario: A later check fails
    When I send a GET request to "/v1/nowhere"
    Then the response status should be 200

  Scenario: Every check holds
    When I send a GET request to "/v1/nowhere"
    Then the response status should be 404
`
	if err := os.WriteFile(filepath.Join(dir, "echo.feature"), []byte(feature), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		strict bool
		want   map[string]kit.Status
	}{
		{false, map[string]kit.Status{"A later check fails": kit.Failed, "Every check holds": kit.Warned}},
		{true, map[string]kit.Status{"A later check fails": kit.Failed, "Every check holds": kit.Failed}},
	} {
		rep, err := conformance.Run(context.Background(), kit.Config{
			BaseURL: srv.URL, APIKey: "svc_test_should_waits_0001", NoBuiltin: true, FeatureDirs: []string{dir},
			Strict: tt.strict, Explore: -1, Timeout: time.Minute,
		})
		if err != nil {
			t.Fatalf("strict %t: Run: %v", tt.strict, err)
		}
		for _, s := range rep.Scenarios {
			if s.Status != tt.want[s.Name] {
				t.Errorf("strict %t: %q is %s, want %s (rule %q, step %q: %s)", tt.strict, s.Name, s.Status, tt.want[s.Name], s.Rule, s.FailedStep, s.Message)
			}
		}
		if len(rep.Scenarios) != len(tt.want) {
			t.Errorf("strict %t: %d scenarios, want %d", tt.strict, len(rep.Scenarios), len(tt.want))
		}
	}
}
