package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestVerdictStepsAgainstSandbox runs testdata/clientverdict against a
// sandbox with a frozen clock: asserting that a client which retried a 503
// at once held every client rule fails the scenario, with the rule and its
// break. testdata/catalogue/verdict.feature has the scenarios that pass.
func TestVerdictStepsAgainstSandbox(t *testing.T) {
	t.Parallel()
	srv, err := sandboxtest.Start(frozen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: "svc_test_verdict_steps", Profile: kit.ProfileSandbox,
		FeatureDirs: []string{"testdata/clientverdict"}, NoBuiltin: true, Explore: -1, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	failed := rep.With(kit.Failed)
	if len(failed) != 1 || !strings.HasPrefix(failed[0].Name, "Holding every client rule fails") {
		for _, s := range append(failed, rep.With(kit.Errored)...) {
			t.Errorf("%s %s: %s", s.Name, s.Status, s.Message)
		}
		t.Fatalf("want exactly the scenario that holds a broken client to every rule to fail")
	}
	for _, want := range []string{"the client broke client rules:", "CLI-6 broken:", "GET /v1/campaigns (request 1) was answered 503 with Retry-After asking for 1.000 s"} {
		if !strings.Contains(failed[0].Message, want) {
			t.Errorf("the failure does not say %q:\n%s", want, failed[0].Message)
		}
	}
}
