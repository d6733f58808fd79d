package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// unsupported are the pack's scenarios the kit cannot run to the end yet,
// each with what it lacks; every other scenario must pass, and one of these
// that passes must leave the list.
var unsupported = map[string]string{
	"A malformed answer is a 200 that is not JSON":                               "judges a planned malformed answer by the envelope rule",
	"A dropped connection leaves the account as it was, and the journal says so": "ends a scenario at a request a planned network fault drops",
	"A retry comes when the clock is moved past it":                              "cannot wait for the same event again after the clock moves",
}

// TestUserPackPassesAgainstSandbox runs the user-style scenarios of
// testdata/userpack as their README says, against a sandbox with a frozen
// clock: every one is right about the sandbox, so every failure is the
// kit's, most often the model judging traffic it did not make itself.
func TestUserPackPassesAgainstSandbox(t *testing.T) {
	t.Parallel()
	srv, startErr := sandboxtest.Start(sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if startErr != nil {
		t.Fatal(startErr)
	}
	t.Cleanup(func() {
		// The scenarios send headers and query parameters of their own, as
		// clients do; the document declares only the API's. Every other
		// drift is the sandbox's.
		if err := srv.Close(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n")[1:] {
				if !strings.Contains(line, ": request undeclared-") {
					t.Errorf("OpenAPI drift: %s", line)
				}
			}
		}
	})
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), conformance.Config{
		BaseURL: srv.URL, APIKey: "svc_test_userpack", Profile: conformance.ProfileSandbox,
		FeatureDirs: []string{"testdata/userpack"}, NoBuiltin: true, Summary: &summary,
		Explore: -1, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, s := range rep.Scenarios {
		why, open := unsupported[s.Name]
		switch failed := s.Status == conformance.Failed || s.Status == conformance.Errored; {
		case failed && !open:
			t.Errorf("%s (%s) %s: %s", s.Name, s.Location(), s.Status, s.Message)
		case !failed && open:
			t.Errorf("%s (%s) %s, though the kit %s: take it off the list", s.Name, s.Location(), s.Status, why)
		}
	}
	for _, s := range rep.With(conformance.Skipped) {
		t.Errorf("%s (%s) skipped: %s", s.Name, s.Location(), s.SkipReason)
	}
	if n := rep.Count(conformance.Passed); n < 20 {
		t.Errorf("%d scenarios passed, want at least 20", n)
	}
	if t.Failed() {
		t.Logf("summary:\n%s", summary.String())
	}
}
