package conformance_test

import (
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestUserPackPassesAgainstSandbox runs the user-style scenarios of
// testdata/userpack as their README says, against a sandbox with a frozen
// clock: every one is right about the sandbox, so every failure is the
// kit's, most often the model judging traffic it did not make itself.
func TestUserPackPassesAgainstSandbox(t *testing.T) {
	t.Parallel()
	srv, startErr := sandboxtest.Start(frozen)
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
	wantPackPasses(t, srv.URL, "svc_test_userpack_qa7f3k2", "testdata/userpack", 20)
}
