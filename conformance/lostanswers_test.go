package conformance_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestLostAnswersPassAgainstSandbox runs the scenarios of
// testdata/lostanswers, a QA engineer's checks of what a request whose
// answer a planned fault took away did to the account, as their README
// says, against a sandbox with a running clock and one with a frozen
// clock. Every one is right about the sandbox, so every failure is the
// kit's: most often the model counting a truncated, trickled or delayed
// request otherwise than the contract does (FAULT-27).
func TestLostAnswersPassAgainstSandbox(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts sandboxtest.Options
	}{{"running clock", sandboxtest.Options{}}, {"frozen clock", frozen}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, sandboxtest.NewHandler(t, tt.opts))
			wantPackPasses(t, srv.URL, "svc_test_lostanswers_qa9d", "testdata/lostanswers", 12)
		})
	}
}

// wantPackPasses runs the scenarios of dir alone, as a QA engineer's pack
// is run, against baseURL as key: every one must pass, at least minPassed
// of them, none failed, errored or skipped.
func wantPackPasses(t *testing.T, baseURL, key, dir string, minPassed int) {
	t.Helper()
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: baseURL, APIKey: key, Profile: kit.ProfileSandbox,
		FeatureDirs: []string{dir}, NoBuiltin: true, Summary: &summary,
		Explore: -1, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, s := range append(rep.With(kit.Failed), rep.With(kit.Errored)...) {
		t.Errorf("%s (%s) %s: %s", s.Name, s.Location(), s.Status, s.Message)
	}
	for _, s := range rep.With(kit.Skipped) {
		t.Errorf("%s (%s) skipped: %s", s.Name, s.Location(), s.SkipReason)
	}
	if n := rep.Count(kit.Passed); n < minPassed {
		t.Errorf("%d scenarios passed, want at least %d", n, minPassed)
	}
	if t.Failed() {
		t.Logf("summary:\n%s", summary.String())
	}
}
