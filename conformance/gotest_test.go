package conformance_test

import (
	"bytes"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/conformancetest"
	"github.com/testcampaign/kit/conformance/kit"
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
	conformancetest.Test(t, kit.Config{
		BaseURL: base, APIKey: key, Profile: os.Getenv("CONFORM_PROFILE"), Output: os.Stdout,
		Tags: godogFlags.Tags, Concurrency: godogFlags.Concurrency, Format: kit.FormatNone,
	}, applyGodogFlags)
}

// applyGodogFlags lets godog's own flags shape the output and order of the
// run; the tags went into the kit's selection, which checks them.
func applyGodogFlags(o *godog.Options) {
	if godogFlags.Format != "" {
		o.Format, o.Output = godogFlags.Format, os.Stdout
	}
	o.Randomize = godogFlags.Randomize
	o.StopOnFailure = godogFlags.StopOnFailure
}

func TestSuiteRunsAsAGodogTestSuite(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	var out bytes.Buffer
	suite, err := conformance.Suite(t.Context(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Tags: "@envelope", Output: &out, Format: kit.FormatCucumber,
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
	return runTestConformanceAs(t, kit.ProfileSpec, url, args...)
}

func runTestConformanceAs(t *testing.T, profile, url string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], append([]string{"-test.run=^TestConformance$", "-test.v"}, args...)...)
	cmd.Env = append(os.Environ(), "CONFORM_BASE_URL="+url, "SVC_API_KEY="+suiteKey, "CONFORM_PROFILE="+profile)
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

// TestGoTestNamesTheStepThatFailed: a rule of every response broken by an
// exchange fails, under go test, with the file and line of the step that
// sent it, not with godog's own source line alone.
func TestGoTestNamesTheStepThatFailed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(breaking(sandboxtest.NewHandler(t, sandboxtest.Options{}), nil, func(r *http.Request, res *response) {
		if r.URL.Path == "/v1/testers" {
			res.envelope(func(m map[string]any) { m["success"] = "yes" })
		}
	}))
	defer srv.Close()
	out, err := runTestConformanceAs(t, kit.ProfileSandbox, srv.URL, "-godog.tags=@bugs")
	if err == nil {
		t.Fatalf("go test passed against a deployment that breaks the envelope:\n%s", out)
	}
	if !regexp.MustCompile(`features/bugs\.feature:\d+: every response is the envelope`).MatchString(out) &&
		!regexp.MustCompile(`every response is the envelope[^\n]*sent by the step at features/bugs\.feature:\d+`).MatchString(out) {
		t.Errorf("the failure does not name the step's file and line:\n%s", out)
	}
}
