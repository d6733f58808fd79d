package conformance_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// godogFlags are godog's own flags (-godog.format, -godog.tags,
// -godog.concurrency…) for TestConformance.
var godogFlags godog.Options

func init() { godog.BindFlags("godog.", flag.CommandLine, &godogFlags) }

// TestConformance checks the deployment at CONFORM_BASE_URL with the key in
// SVC_API_KEY (CONFORM_PROFILE=sandbox adds the sandbox's own choices):
//
//	CONFORM_BASE_URL=http://127.0.0.1:8080 SVC_API_KEY=svc_test_… \
//	  go test ./conformance -run TestConformance -godog.format=pretty
func TestConformance(t *testing.T) {
	base, key := os.Getenv("CONFORM_BASE_URL"), os.Getenv("SVC_API_KEY")
	if base == "" || key == "" {
		t.Skip("set CONFORM_BASE_URL and SVC_API_KEY to check a deployment")
	}
	suite, err := conformance.Suite(t.Context(), conformance.Config{
		BaseURL: base, APIKey: key, Profile: os.Getenv("CONFORM_PROFILE"), Output: os.Stdout,
	})
	if err != nil {
		t.Fatal(err)
	}
	applyGodogFlags(suite.Options)
	if code := suite.Run(); code != 0 {
		t.Errorf("godog exit status %d: the deployment deviates (see above)", code)
	}
}

// applyGodogFlags lets godog's flags narrow the suite without lifting the
// kit's own exclusions (profile, live key, opt-ins).
func applyGodogFlags(o *godog.Options) {
	if godogFlags.Format != "" {
		o.Format = godogFlags.Format
	}
	if godogFlags.Tags != "" {
		o.Tags = strings.Join([]string{godogFlags.Tags, o.Tags}, " && ")
	}
	if godogFlags.Concurrency > 0 {
		o.Concurrency = godogFlags.Concurrency
	}
	o.Randomize = godogFlags.Randomize
	o.StopOnFailure = godogFlags.StopOnFailure
}

func TestSuiteRunsAsAGodogTestSuite(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	var out bytes.Buffer
	suite, err := conformance.Suite(t.Context(), conformance.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Tags: "@envelope", Output: &out, Format: conformance.FormatCucumber,
	})
	if err != nil {
		t.Fatal(err)
	}
	if code := suite.Run(); code != 0 {
		t.Fatalf("godog exit status %d\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), `"status": "passed"`) || strings.Contains(out.String(), suiteKey) {
		t.Errorf("cucumber output lacks passed steps or shows the key:\n%.500s", out.String())
	}
}
