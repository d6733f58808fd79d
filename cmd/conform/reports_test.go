package main

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// cucumberDoc is what a CI plugin reads of a cucumber JSON report.
type cucumberDoc []struct {
	URI      string `json:"uri"`
	Elements []struct {
		Name  string `json:"name"`
		Steps []struct {
			Name   string `json:"name"`
			Line   int    `json:"line"`
			Result struct {
				Status string `json:"status"`
				Error  string `json:"error_message"`
			} `json:"result"`
		} `json:"steps"`
	} `json:"elements"`
}

func readCucumber(t *testing.T, path string) cucumberDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no cucumber report: %v", err)
	}
	var doc cucumberDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the cucumber report is not JSON: %v\n%.500s", err, b)
	}
	return doc
}

// failedSteps lists the failed steps of a cucumber report as "uri:line
// error", and counts every step.
func (d cucumberDoc) failedSteps() (failed []string, steps int) {
	for _, f := range d {
		for _, e := range f.Elements {
			for _, s := range e.Steps {
				steps++
				if s.Result.Status == "failed" {
					failed = append(failed, f.URI+": "+s.Name+": "+s.Result.Error)
				}
			}
		}
	}
	return failed, steps
}

// reportSet is every report of one run: the summary and the three files.
type reportSet struct {
	junit, html, cucumber string
}

func newReportSet(t *testing.T) (reportSet, []string) {
	dir := t.TempDir()
	r := reportSet{filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")}
	return r, []string{"--junit", r.junit, "--html", r.html, "--cucumber", r.cucumber}
}

// agree checks that every report of a run gives the verdict its exit code
// gives: failures in junit and cucumber exactly when it exits 1, the
// verdict at the top of the HTML page and of the summary.
func (r reportSet) agree(t *testing.T, got result) {
	t.Helper()
	verdict := map[int]string{0: "CONFORMANT", 1: "NOT CONFORMANT", 2: "ERROR"}[got.code]
	if !strings.Contains(got.stderr, "RESULT: "+verdict) && got.code != kit.ExitError {
		t.Errorf("the summary does not say %s:\n%s", verdict, got.stderr)
	}
	page, err := os.ReadFile(r.html)
	if err != nil || !bytes.Contains(page, []byte(`id="verdict">`+verdict)) {
		t.Errorf("the HTML report does not lead with %s (err %v)", verdict, err)
	}
	text := html.UnescapeString(string(page))
	junitFailed := 0
	for _, s := range readJUnit(t, r.junit).Suites {
		for _, c := range s.Cases {
			if c.Failure != nil || c.Error != nil {
				junitFailed++
			}
			// The HTML page names every scenario junit does, passing or not.
			if _, name, ok := strings.Cut(c.Name, "] "); ok && !strings.Contains(text, "<td>"+name+"</td>") {
				t.Errorf("the HTML report does not list the scenario %q", name)
			}
		}
	}
	failed, steps := readCucumber(t, r.cucumber).failedSteps()
	if steps == 0 {
		t.Errorf("the cucumber report holds no step")
	}
	if want := got.code != kit.ExitConformant; (junitFailed > 0) != want || (len(failed) > 0) != want {
		t.Errorf("exit %d, but junit has %d failing case(s) and cucumber %d failed step(s): %q", got.code, junitFailed, len(failed), failed)
	}
}

// TestReportsAgreeWithTheExitCode: a correct sandbox, a deployment whose
// only deviation the explorer finds, and an unreachable one give, in every
// report, the verdict of the exit code; no report asked for is left empty.
func TestReportsAgreeWithTheExitCode(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	// The explorer creates campaigns; the @versioning scenarios read none
	// of them, so only the model's judgement of the explorer's exchanges
	// can fail this run.
	renamed := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/campaigns" && st == http.StatusOK {
				b = bytes.Replace(b, []byte(`"name":"`), []byte(`"name":"renamed `), 1)
			}
			return st, b
		}))
	for _, tt := range []struct {
		name, url string
		want      int
	}{
		{"correct", serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{})), kit.ExitConformant},
		{"broken where only the explorer looks", renamed, kit.ExitDeviations},
		{"unreachable", closed.URL, kit.ExitError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reports, flags := newReportSet(t)
			args := append([]string{"--base-url", tt.url, "--profile", "sandbox", "--tags", "@versioning", "--seed", "7", "--format", "none"}, flags...)
			got := runCLI(t, map[string]string{keyEnv: testKey}, args...)
			if got.code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", got.code, tt.want, got.stderr)
			}
			reports.agree(t, got)
		})
	}
}

// TestExploreWritesEveryReport: conform explore takes the report flags of
// a run and writes every report they ask for.
func TestExploreWritesEveryReport(t *testing.T) {
	t.Parallel()
	url := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	reports, flags := newReportSet(t)
	output := filepath.Join(t.TempDir(), "out.xml")
	args := append([]string{"explore", "--base-url", url, "--profile", "sandbox", "--explore", "2s", "--seed", "3",
		"--format", "junit", "--output", output}, flags...)
	got := runCLI(t, map[string]string{keyEnv: testKey}, args...)
	if got.code != kit.ExitConformant {
		t.Fatalf("exit %d\n%s", got.code, got.stderr)
	}
	reports.agree(t, got)
	doc := readJUnit(t, output)
	if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || !strings.Contains(doc.Suites[0].Cases[0].Name, "seed 3") {
		t.Errorf("--format junit --output of an exploration: %+v", doc)
	}
	for _, f := range []string{output, reports.junit, reports.html, reports.cucumber} {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(testKey)) {
			t.Errorf("%s shows the key whole", f)
		}
	}
}

// TestPrettyOutputPlacesARuleOnItsStep: in godog's own output, a rule an
// exchange broke fails the step that sent the exchange, with the rule's
// message, not a later step or a hook.
func TestPrettyOutputPlacesARuleOnItsStep(t *testing.T) {
	t.Parallel()
	url := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			if r.URL.Path == "/v1/testers" {
				b = bytes.Replace(b, []byte(`"success":true`), []byte(`"success":"yes"`), 1)
			}
			return st, b
		}))
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--profile", "sandbox", "--tags", "@bugs", "--explore=-1s", "--format", "pretty")
	if got.code != kit.ExitDeviations {
		t.Fatalf("exit %d, want 1\n%s", got.code, got.stderr)
	}
	if strings.Contains(got.stdout, "hook failed") {
		t.Errorf("godog's output shows a rule as a hook failure:\n%s", got.stdout)
	}
	// Only the step that makes a bug reads /v1/testers, for a tester to
	// file it.
	if !regexp.MustCompile(`And a bug with status "[a-z_]+"[^\n]*\n\s+every response is the envelope`).MatchString(got.stdout) {
		t.Errorf("godog's output does not fail the step that sent the exchange with the rule:\n%s", got.stdout)
	}
	if !strings.Contains(got.stderr, "step:    ") || !strings.Contains(got.stderr, "(features/bugs.feature:") {
		t.Errorf("the summary does not place the failure on its step's line:\n%s", got.stderr)
	}
}
