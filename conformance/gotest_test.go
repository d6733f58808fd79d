package conformance_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/conformancetest"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// godogFlags are godog's own flags (-godog.format, -godog.tags,
// -godog.concurrency…) for TestConformance.
var godogFlags godog.Options

func init() { godog.BindFlags("godog.", flag.CommandLine, &godogFlags) }

// TestConformance checks the deployment at CONFORM_BASE_URL with the key in
// SVC_API_KEY (CONFORM_PROFILE=sandbox adds the sandbox's own choices), one
// subtest per feature and scenario:
//
//	CONFORM_BASE_URL=http://127.0.0.1:8080 SVC_API_KEY=svc_test_… \
//	  go test ./conformance -run TestConformance -v -godog.tags=@bugs
func TestConformance(t *testing.T) {
	base, key := os.Getenv("CONFORM_BASE_URL"), os.Getenv("SVC_API_KEY")
	if base == "" || key == "" {
		t.Skip("set CONFORM_BASE_URL and SVC_API_KEY to check a deployment")
	}
	conformancetest.Test(t, conformance.Config{
		BaseURL: base, APIKey: key, Profile: os.Getenv("CONFORM_PROFILE"), Output: os.Stdout,
		Tags: godogFlags.Tags, Concurrency: godogFlags.Concurrency, Format: conformance.FormatNone,
	}, applyGodogFlags)
}

// applyGodogFlags lets godog's own flags shape the output and order of the
// run; the tags went into the kit's selection, which checks them.
func applyGodogFlags(o *godog.Options) {
	if godogFlags.Format != "" {
		// The kit's own silent formatter stays after the first comma.
		_, kit, _ := strings.Cut(o.Format, ",")
		o.Format, o.Output = godogFlags.Format+","+kit, os.Stdout
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

// runTestConformance runs this test binary's TestConformance against url
// with extra flags, as a Go team's `go test` would.
func runTestConformance(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], append([]string{"-test.run=^TestConformance$", "-test.v"}, args...)...)
	cmd.Env = append(os.Environ(), "CONFORM_BASE_URL="+url, "SVC_API_KEY="+suiteKey, "CONFORM_PROFILE=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestGoTestRunsEachScenarioAsASubtest(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	out, err := runTestConformance(t, srv.URL, "-godog.tags=@versioning")
	if err != nil {
		t.Fatalf("go test failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		"--- PASS: TestConformance/Versioning/",
		"--- PASS: TestConformance/Versioning/The_version_prefix_is_not_optional:_/campaigns",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, suiteKey) {
		t.Errorf("the output shows the key:\n%s", out)
	}
}

// TestGoTestFailsOnAnEmptySelection: a tag nobody carries must fail the test,
// as the command exits 2, rather than pass having checked nothing.
func TestGoTestFailsOnAnEmptySelection(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	out, err := runTestConformance(t, srv.URL, "-godog.tags=@bug")
	if err == nil || !strings.Contains(out, "no scenario carries the tag @bug; did you mean @bugs?") {
		t.Errorf("go test with -godog.tags=@bug: err %v, want a failure naming @bugs\n%s", err, out)
	}
}
