package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// junitDoc is what a CI system reads of a junit report.
type junitDoc struct {
	Timestamp  string `xml:"timestamp,attr"`
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Suites []struct {
		Timestamp string `xml:"timestamp,attr"`
		Cases     []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no junit report: %v", err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit does not parse: %v\n%s", err, b)
	}
	return doc
}

// TestJUnitOnExit2: an unreachable deployment still leaves a junit report,
// one error case saying why, so that the pipeline's report step has a
// verdict to show.
func TestJUnitOnExit2(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", closed.URL, "--format", "none", "--junit", junit, "--html", html)
	if got.code != kit.ExitError {
		t.Fatalf("exit %d, want 2\n%s", got.code, got.stderr)
	}
	doc := readJUnit(t, junit)
	if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Error == nil ||
		!strings.Contains(doc.Suites[0].Cases[0].Error.Message, "cannot reach") {
		t.Errorf("junit of an unreachable run: %+v", doc)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("cannot reach")) {
		t.Errorf("the HTML report does not say why the run stopped")
	}
	if n := strings.Count(got.stderr, "cannot reach"); n != 1 {
		t.Errorf("the error is printed %d times, want once:\n%s", n, got.stderr)
	}
}

// TestEveryExit2WritesItsReports: a usage error found before any request
// (no key, a URL without a scheme, a stray argument…) still writes every
// report file the job asked for, --output included, each with one error
// case naming the cause, as a failed connection does.
func TestEveryExit2WritesItsReports(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	withKey := map[string]string{keyEnv: testKey}
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		cause string
	}{
		{"no key in the environment", nil, []string{"--base-url", url}, keyEnv},
		{"no base URL", withKey, nil, "--base-url is required"},
		{"a URL without a scheme", withKey, []string{"--base-url", "127.0.0.1:8080"}, "not an absolute http(s) URL"},
		{"a base URL ending in /v1", withKey, []string{"--base-url", url + "/v1"}, "ends in /v1"},
		{"an unknown profile", withKey, []string{"--base-url", url, "--profile", "prod"}, "unknown profile"},
		{"a stray argument", withKey, []string{"--base-url", url, "run"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			junit, output, cucumber := filepath.Join(dir, "r.xml"), filepath.Join(dir, "out.xml"), filepath.Join(dir, "r.json")
			args := append([]string{"--format", "junit", "--output", output, "--junit", junit, "--cucumber", cucumber}, tt.args...)
			got := runCLI(t, tt.env, args...)
			if got.code != kit.ExitError {
				t.Fatalf("exit %d, want 2\n%s", got.code, got.stderr)
			}
			for _, path := range []string{junit, output} {
				doc := readJUnit(t, path)
				if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Error == nil ||
					!strings.Contains(doc.Suites[0].Cases[0].Error.Message, tt.cause) {
					t.Errorf("%s: want one error case naming %q, got %+v", filepath.Base(path), tt.cause, doc)
				}
			}
			if failed, _ := readCucumber(t, cucumber).failedSteps(); len(failed) != 1 || !strings.Contains(failed[0], tt.cause) {
				t.Errorf("cucumber report: failed steps %q, want one naming %q", failed, tt.cause)
			}
			if !strings.Contains(got.stderr, "wrote "+junit) {
				t.Errorf("stderr does not name the reports written:\n%s", got.stderr)
			}
		})
	}
	t.Cleanup(func() {
		if n := requests.Load(); n != 0 {
			t.Errorf("%d request(s) sent by runs refused as usage errors", n)
		}
	})
}

// TestOneScenarioCountInEveryOutput: under --profile spec the @sandbox
// scenarios are disabled; they are summed up apart, not junit test cases,
// and the pretty output, the summary and the junit report give one count
// of the scenarios the run selected.
func TestOneScenarioCountInEveryOutput(t *testing.T) {
	t.Parallel()
	url := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	junit := filepath.Join(t.TempDir(), "r.xml")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--tags", "@auth", "--format", "pretty", "--junit", junit)
	if got.code != kit.ExitConformant {
		t.Fatalf("exit %d, want 0\n%s", got.code, got.stderr)
	}
	countRe := regexp.MustCompile(`(\d+) scenarios: \d+ passed, .*; (\d+) disabled`)
	pretty, summary := countRe.FindStringSubmatch(got.stdout), countRe.FindStringSubmatch(got.stderr)
	if pretty == nil || summary == nil {
		t.Fatalf("no scenario count in the pretty output or the summary:\n%s\n%s", got.stdout, got.stderr)
	}
	if pretty[0] != summary[0] {
		t.Errorf("the pretty output counts %q, the summary %q", pretty[0], summary[0])
	}
	if summary[2] == "0" {
		t.Errorf("no @sandbox scenario disabled under --profile spec: %q", summary[0])
	}
	doc := readJUnit(t, junit)
	cases := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			if c.Skipped != nil && c.Skipped.Type == "disabled" {
				t.Errorf("disabled scenario %q is a junit test case", c.Name)
			}
		}
	}
	props := map[string]string{}
	for _, p := range doc.Properties {
		props[p.Name] = p.Value
	}
	if n := fmt.Sprint(cases); n != summary[1] || props["scenarios"] != summary[1] || props["disabled"] != summary[2] {
		t.Errorf("junit holds %d cases, properties scenarios=%q disabled=%q; the summary says %q", cases, props["scenarios"], props["disabled"], summary[0])
	}
}

// TestDeploymentThatStopsAnsweringIsNotBlamed: a deployment whose port
// closes mid-run ends the run as could not judge, naming when and where it
// stopped answering, with no deviation blamed on it (a webhook retry that
// never came is not one) and no list of refused connections.
func TestDeploymentThatStopsAnsweringIsNotBlamed(t *testing.T) {
	t.Parallel()
	h := sandboxtest.NewHandler(t, sandboxtest.Options{})
	var (
		served atomic.Int64
		stop   sync.Once
		srv    *httptest.Server
	)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 80 {
			stop.Do(func() { srv.Listener.Close() })
		}
		h.ServeHTTP(w, r)
	}))
	// One connection a request, so that once the port closes every next
	// request is refused, as by a deployment that went away.
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Start()
	t.Cleanup(srv.Close)
	junit := filepath.Join(t.TempDir(), "r.xml")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", srv.URL, "--format", "none", "--junit", junit)
	if got.code != kit.ExitError {
		t.Fatalf("exit %d, want 2\n%s", got.code, got.stderr)
	}
	if !regexp.MustCompile(`could not judge: the deployment stopped answering at \d\d:\d\d:\d\d\.\d{3} \([A-Z]+ /`).MatchString(got.stderr) {
		t.Errorf("the summary does not say when the deployment stopped answering:\n%s", got.stderr)
	}
	if strings.Contains(got.stderr, "FAILURES") {
		t.Errorf("deviations blamed on a deployment that stopped answering:\n%s", got.stderr)
	}
	if n := strings.Count(got.stderr, "connection refused"); n > 3 {
		t.Errorf("the refused connection is told %d times, want it once with its group:\n%s", n, got.stderr)
	}
	for _, s := range readJUnit(t, junit).Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				t.Errorf("junit fails %q against a deployment that stopped answering", c.Name)
			}
		}
	}
}

// TestReportPathsCheckedBeforeTheRun: a report in a missing directory is
// refused before the first request, not after the whole run.
func TestReportPathsCheckedBeforeTheRun(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for _, flag := range []string{"--junit", "--html", "--cucumber"} {
		got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--format", "none", flag, filepath.Join(missing, "r"))
		if got.code != kit.ExitError || !strings.Contains(got.stderr, "report") {
			t.Errorf("%s in a missing directory: exit %d\n%s", flag, got.code, got.stderr)
		}
	}
	// The reports that could be created still say why the run was refused.
	html := filepath.Join(t.TempDir(), "r.html")
	runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--format", "none", "--junit", filepath.Join(missing, "r"), "--html", html)
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte("the junit report")) {
		t.Errorf("the HTML report of a run refused for its junit path does not say so (%v):\n%s", err, b)
	}
	// Two reports in one file are refused, however the path is spelt.
	dir := t.TempDir()
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--format", "junit",
		"--output", filepath.Join(dir, "r.xml"), "--junit", filepath.Join(dir, ".", "r.xml"))
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "--output and the junit report both name the file") {
		t.Errorf("--output and --junit naming one file: exit %d\n%s", got.code, got.stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d request(s) sent before the report paths were refused", n)
	}
}

// TestBaseURLEndingInV1IsAUsageError: a base URL with /v1 on its end, a
// common slip, would send every request to /v1/v1/… and blame a correct
// deployment for hundreds of failures; it is refused before any request,
// with the root to pass instead.
func TestBaseURLEndingInV1IsAUsageError(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	for _, base := range []string{url + "/v1", url + "/v1/", url + "/api/v1"} {
		got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", base, "--format", "none")
		want := "--base-url " + strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1")
		if got.code != kit.ExitError || !strings.Contains(got.stderr, want) {
			t.Errorf("--base-url %s: exit %d, want 2 with the hint %q\n%s", base, got.code, want, got.stderr)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d request(s) sent to a base URL ending in /v1", n)
	}
}

// lineRe finds a line number in a test case name, which would break the
// history of the test whenever a line above it moves.
var lineRe = regexp.MustCompile(`line \d+|:\d+`)

// TestJUnitForCI: stable case names, timestamps, the effective
// configuration, Disabled apart from Skipped, and --fail-on-skip.
func TestJUnitForCI(t *testing.T) {
	t.Parallel()
	// A deployment refusing the receiver's address as a webhook URL skips
	// the @delivery scenarios at run time: lost coverage, unlike the
	// @sandbox scenarios that the spec profile disables. The rewrite
	// refuses what the sandbox behind it stored, which the explorer would
	// rightly report, so this run of the reports leaves it out.
	url := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/webhooks" {
				return http.StatusBadRequest, []byte(`{"success":false,"error":{"code":"VALIDATION_ERROR","message":"url: private addresses are refused","status":400,"details":[{"field":"url","message":"private address"}]}}`)
			}
			return st, b
		}))
	key := map[string]string{keyEnv: testKey}
	junit := filepath.Join(t.TempDir(), "r.xml")
	got := runCLI(t, key, "--base-url", url, "--profile", "sandbox", "--tags", "@delivery,@versioning", "--explore=-1s", "--format", "none", "--junit", junit)
	if got.code != kit.ExitConformant {
		t.Fatalf("exit %d, want 0\n%s", got.code, got.stderr)
	}
	doc := readJUnit(t, junit)
	if _, err := time.Parse("2006-01-02T15:04:05", doc.Timestamp); err != nil {
		t.Errorf("testsuites timestamp %q: %v", doc.Timestamp, err)
	}
	props := map[string]string{}
	for _, p := range doc.Properties {
		props[p.Name] = p.Value
	}
	for name, want := range map[string]string{"tags": "@delivery,@versioning", "profile": "sandbox", "strict": "off", "features": "(built-in)", "openapi": "off", "concurrency": "4", "version": "conform"} {
		if !strings.HasPrefix(props[name], want) {
			t.Errorf("property %s = %q, want %q", name, props[name], want)
		}
	}
	kinds := map[string]int{}
	for _, s := range doc.Suites {
		if _, err := time.Parse("2006-01-02T15:04:05", s.Timestamp); err != nil {
			t.Errorf("testsuite timestamp %q: %v", s.Timestamp, err)
		}
		for _, c := range s.Cases {
			if lineRe.MatchString(c.Name) {
				t.Errorf("case name %q carries a line number", c.Name)
			}
			if c.Skipped != nil {
				kinds[c.Skipped.Type]++
				if c.Skipped.Type == "skipped" && !strings.Contains(c.Skipped.Message, "refuses the receiver's address") {
					t.Errorf("a run-time skip without the refusal as its reason: %q", c.Skipped.Message)
				}
			}
		}
	}
	if kinds["skipped"] == 0 {
		t.Errorf("no scenario skipped at run time; the @delivery ones should be: %v\n%s", kinds, got.stderr)
	}
	if !strings.Contains(got.stderr, "SKIPPED (could not run here") {
		t.Errorf("the summary does not list the run-time skips apart:\n%s", got.stderr)
	}
	strict := runCLI(t, key, "--base-url", url, "--profile", "sandbox", "--tags", "@delivery", "--format", "none", "--fail-on-skip")
	if strict.code != kit.ExitDeviations || !strings.Contains(strict.stderr, "--fail-on-skip") {
		t.Errorf("--fail-on-skip with skips: exit %d, want 1\n%s", strict.code, strict.stderr)
	}
	disabledOnly := runCLI(t, key, "--base-url", url, "--tags", "@versioning", "--format", "none", "--fail-on-skip")
	if disabledOnly.code != kit.ExitConformant {
		t.Errorf("--fail-on-skip with only disabled scenarios: exit %d, want 0\n%s", disabledOnly.code, disabledOnly.stderr)
	}
}

// TestFailuresPointAtTheirCause runs against a deployment whose only fault
// is in the answers to GET /v1/testers, which the bug scenarios send while
// setting up. The report must show that exchange, not the scenario's last
// one; group the scenarios that share the cause, naming the report that
// lists them all; print each error once; and carry the exchanges, redacted,
// in junit.
func TestFailuresPointAtTheirCause(t *testing.T) {
	t.Parallel()
	url := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			if r.URL.Path == "/v1/testers" {
				b = bytes.Replace(b, []byte(`"success":true`), []byte(`"success":"yes"`), 1)
			}
			return st, b
		}))
	junit := filepath.Join(t.TempDir(), "r.xml")
	// Without the explorer, whose own failure would be one more cause.
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--profile", "sandbox", "--tags", "@bugs", "--explore=-1s", "--format", "progress", "--junit", junit)
	if got.code != kit.ExitDeviations {
		t.Fatalf("exit %d, want 1\n%s", got.code, got.stderr)
	}
	for _, want := range []string{
		"every response is the envelope (spec §4, §7) broken in ",
		"request: GET " + url + "/v1/testers",
		"every one is listed in " + junit,
	} {
		if !strings.Contains(got.stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got.stderr)
		}
	}
	if strings.Contains(got.stdout, "step error:") {
		t.Errorf("godog's output repeats errors through the hook:\n%.2000s", got.stdout)
	}
	doc := readJUnit(t, junit)
	failed := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Failure == nil {
				continue
			}
			failed++
			if !strings.Contains(c.SystemOut, "exchanges of the scenario:") || !strings.Contains(c.SystemOut, "/v1/testers") {
				t.Errorf("%s: system-out lacks the scenario's exchanges:\n%s", c.Name, c.SystemOut)
			}
			if strings.Contains(c.SystemOut, testKey) {
				t.Errorf("%s: system-out shows the key", c.Name)
			}
		}
	}
	if failed < 2 {
		t.Errorf("%d failing cases, want the bug scenarios that list testers", failed)
	}
}

// TestSignalStopsTheCommand sends a real SIGINT to this process: the
// command's context must end, so that a run stops instead of going on.
func TestSignalStopsTheCommand(t *testing.T) {
	ctx, stop := interruptible(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not end the command's context")
	}
}

// TestInterruptedRunStopsAndReports cancels a run while a scenario polls
// for an answer that never comes: the run must stop at once, exit 2 saying
// "interrupted", and write the reports of the scenarios that finished.
func TestInterruptedRunStopsAndReports(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// With one scenario at a time, Quick sends the first plain GET of the
	// list, Slow the second, and its polling the rest.
	var mu sync.Mutex
	lists := 0
	sandbox := sandboxtest.NewHandler(t, sandboxtest.Options{})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/campaigns" && r.URL.RawQuery == "" {
			mu.Lock()
			if lists++; lists == 3 {
				cancel()
			}
			mu.Unlock()
		}
		sandbox.ServeHTTP(w, r)
	}))
	f := writeFeature(t, `Feature: Interrupted
  Scenario: Quick
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  Scenario: Slow
    Given I send a GET request to "/v1/campaigns"
    Then within 600 seconds the GET request to "/v1/campaigns" should answer with the JSON at "data.items.0.name" equal to "never"
`)
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"--base-url", url, "--no-builtin", "--features", f, "--concurrency", "1", "--format", "none", "--junit", junit, "--html", html},
			func(k string) string { return map[string]string{keyEnv: testKey}[k] }, &stdout, &stderr)
		done <- result{code, stdout.String(), stderr.String()}
	}()
	var got result
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run went on after its context was cancelled")
	}
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "interrupted") {
		t.Errorf("exit %d, want 2 and \"interrupted\"\n%s", got.code, got.stderr)
	}
	doc := readJUnit(t, junit)
	names := ""
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			names += c.Name + "; "
			if c.Failure != nil {
				t.Errorf("%s reported as a failure of the deployment after the interruption", c.Name)
			}
		}
	}
	if !strings.Contains(names, "Quick") || strings.Contains(names, "Slow") || !strings.Contains(names, "the run") {
		t.Errorf("junit cases %q: want the finished Quick and the interruption, not Slow", names)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("interrupted")) {
		t.Errorf("the HTML report does not say the run was interrupted")
	}
}
