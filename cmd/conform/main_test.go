package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

const testKey = "svc_test_cli_secret_part_9f3k"

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	// A generous timeout keeps a busy test machine from turning slowness
	// into connection errors.
	if len(args) == 0 || (args[0] != "check" && args[0] != "steps") {
		args = append(args, "--timeout", "60s")
	}
	code := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// rewriting passes each request to next and lets edit change the recorded
// answer before it goes back, like a faulty proxy in front of the sandbox.
func rewriting(next http.Handler, edit func(r *http.Request, status int, h http.Header, body []byte) (int, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		h := rec.Header().Clone()
		status, body := edit(r, rec.Code, h, rec.Body.Bytes())
		h.Del("Content-Length")
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	sandbox := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	successAsString := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(_ *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			return st, bytes.Replace(b, []byte(`"success":true`), []byte(`"success":"true"`), 1)
		}))
	noChallenge := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(_ *http.Request, st int, h http.Header, b []byte) (int, []byte) {
			h.Del("WWW-Authenticate")
			return st, b
		}))
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	withKey := map[string]string{keyEnv: testKey}
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		want   int
		stderr string // must appear in standard error
	}{
		{"sandbox conforms", withKey, []string{"--base-url", sandbox}, 0, "RESULT: CONFORMANT"},
		{"tags that select nothing", withKey, []string{"--base-url", sandbox, "--tags", "@nosuchtag"}, 2, `no scenario carries the tag @nosuchtag`},
		{"tags whose scenarios are all skipped", withKey, []string{"--base-url", sandbox, "--tags", "@sandbox"}, 2, "nothing to run: the"},
		{"a dangling &&", withKey, []string{"--base-url", sandbox, "--tags", "@auth&&"}, 2, "invalid tag expression"},
		{"an empty or-term", withKey, []string{"--base-url", sandbox, "--tags", "@auth,,@bugs"}, 2, "invalid tag expression"},
		{"a term without @", withKey, []string{"--base-url", sandbox, "--tags", "auth"}, 2, "invalid tag expression"},
		{"a bad webhook URL", withKey, []string{"--base-url", sandbox, "--webhook-url", "hooks.example.com"}, 2, "webhook URL"},
		{"success as a string", withKey, []string{"--base-url", successAsString, "--profile", "sandbox"}, 1, `envelope rule (spec §4): "success" must be a boolean, got string "true"`},
		{"should failure warns", withKey, []string{"--base-url", noChallenge}, 0, "WARNINGS (@should"},
		{"should failure fails when strict", withKey, []string{"--base-url", noChallenge, "--strict"}, 1, "A 401 from GET /v1/campaigns names the Bearer scheme in WWW-Authenticate"},
		{"no key in the environment", nil, []string{"--base-url", sandbox}, 2, "SVC_API_KEY"},
		{"key as a flag is refused", nil, []string{"--base-url", sandbox, "--api-key", testKey}, 2, "flag provided but not defined"},
		{"no base URL", withKey, nil, 2, "--base-url is required"},
		{"relative base URL", withKey, []string{"--base-url", "localhost:8080"}, 2, "not an absolute http(s) URL"},
		{"unknown format", withKey, []string{"--base-url", sandbox, "--format", "html"}, 2, "unknown format"},
		{"unknown profile", withKey, []string{"--base-url", sandbox, "--profile", "prod"}, 2, "unknown profile"},
		{"stray argument", withKey, []string{"run", "--base-url", sandbox}, 2, "unexpected argument"},
		{"missing feature directory", withKey, []string{"--base-url", sandbox, "--features", filepath.Join(t.TempDir(), "none")}, 2, "reading features"},
		{"unreachable deployment", withKey, []string{"--base-url", closed.URL}, 2, "cannot reach"},
		{"a document given after a space", withKey, []string{"--base-url", sandbox, "--openapi", "openapi.yaml"}, 2, "--openapi=FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--format") {
				args = append(args, "--format", "none")
			}
			got := runCLI(t, tt.env, args...)
			if got.code != tt.want {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", got.code, tt.want, got.stderr)
			}
			if !strings.Contains(got.stderr, tt.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.stderr, got.stderr)
			}
			if got.code == kit.ExitError && strings.Contains(got.stderr, "goroutine") {
				t.Errorf("a usage error printed a Go trace:\n%s", got.stderr)
			}
		})
	}
}

// TestKeyNeverPrintedWhole runs against a deployment that echoes the
// Authorization header into its answers, the worst case for leaking the key
// into failure messages, and checks every format and the summary.
func TestKeyNeverPrintedWhole(t *testing.T) {
	t.Parallel()
	echo := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			auth := r.Header.Get("Authorization")
			b = bytes.ReplaceAll(b, []byte(`"status":"draft"`), []byte(`"status":"`+auth+`"`))
			return st, bytes.ReplaceAll(b, []byte(`"message":"`), []byte(`"message":"`+auth+` `))
		}))
	for _, format := range kit.Formats() {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			report := filepath.Join(t.TempDir(), "report")
			// Refusals echo the key in their message and new campaigns in
			// their status: these areas cover both, in every level.
			got := runCLI(t, map[string]string{keyEnv: testKey},
				"--base-url", echo, "--profile", "sandbox", "--format", format, "--output", report,
				"--tags", "@auth,@errors,@must")
			if got.code != kit.ExitDeviations {
				t.Fatalf("exit code %d, want %d\n%s", got.code, kit.ExitDeviations, got.stderr)
			}
			file, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"stdout": got.stdout, "stderr": got.stderr, "report": string(file)} {
				if strings.Contains(out, testKey) {
					t.Errorf("the key appears whole in %s", name)
				}
			}
			if shown := conformance.RedactKey(testKey); !strings.Contains(got.stderr, shown) {
				t.Errorf("the summary does not name the key as %s:\n%s", shown, got.stderr)
			}
			if format != kit.FormatNone && len(file) == 0 {
				t.Errorf("empty %s report", format)
			}
		})
	}
}

// TestKeyNeverPrintedInAnySpelling runs against a hostile deployment that
// echoes the key back disguised, in the spellings the leak detector
// catches, and checks that no output of the run shows any of them: the
// summary, the report on standard output, and the junit, cucumber and HTML
// files.
func TestKeyNeverPrintedInAnySpelling(t *testing.T) {
	t.Parallel()
	secret := strings.TrimPrefix(testKey, "svc_test_")
	disguises := []string{
		strings.ReplaceAll(testKey, "_", `\u005f`),
		strings.ReplaceAll(testKey, "_", "%5F"),
		secret,
		secret[:len(secret)-4],
	}
	hostile := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, h http.Header, b []byte) (int, []byte) {
			if !strings.Contains(r.Header.Get("Authorization"), testKey) {
				return st, b
			}
			d := disguises[len(r.URL.Path)%len(disguises)]
			h.Set("X-Echo", d)
			return st, bytes.Replace(b, []byte(`"message":"`), []byte(`"message":"`+d+` `), 1)
		}))
	dir := t.TempDir()
	files := map[string]string{"junit": filepath.Join(dir, "r.xml"), "cucumber": filepath.Join(dir, "r.json"), "html": filepath.Join(dir, "r.html")}
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", hostile, "--profile", "sandbox", "--format", "pretty",
		"--junit", files["junit"], "--cucumber", files["cucumber"], "--html", files["html"], "--tags", "@auth,@errors")
	if got.code != kit.ExitDeviations {
		t.Fatalf("exit code %d, want %d: the echoed key is a deviation\n%s", got.code, kit.ExitDeviations, got.stderr)
	}
	outputs := map[string]string{"stdout": got.stdout, "stderr": got.stderr}
	for name, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		outputs[name] = string(b)
	}
	if !strings.Contains(got.stderr, "echoes the key") {
		t.Errorf("the leak was not reported:\n%s", got.stderr)
	}
	for name, out := range outputs {
		for _, sp := range conformance.KeySpellings(testKey) {
			if strings.Contains(out, sp) {
				t.Errorf("%s shows the key as %q", name, sp)
			}
		}
	}
}

// webhookSecretRe and signatureRe are a webhook's signing secret, as the
// sandbox makes them, and a Webhook-Signature value, whole.
var (
	webhookSecretRe = regexp.MustCompile(`whsec_[0-9a-f]{32,}`)
	signatureRe     = regexp.MustCompile(`v1=[0-9a-f]{64}`)
)

// TestNoSecretInAnyOutput runs a webhook scenario that fails against a
// deployment that also echoes the key: its failure shows the registration
// answer (with the webhook's secret) and the delivery's signature, and no
// output of the run, standard output, the summary or any report file,
// shows the key, the secret or the signature whole.
func TestNoSecretInAnyOutput(t *testing.T) {
	t.Parallel()
	sandbox := rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			return st, bytes.ReplaceAll(b, []byte(`"message":"`), []byte(`"message":"`+r.Header.Get("Authorization")+` `))
		})
	// The deployment forgets the bad-signature fault the scenario sets, so
	// that its delivery is signed well and the scenario fails showing it.
	forgetful := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_sandbox/faults" && r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte("badSignature")) {
				b = bytes.ReplaceAll(b, []byte("campaign.created"), []byte("bug.created"))
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}
		sandbox.ServeHTTP(w, r)
	}))
	dir := t.TempDir()
	files := map[string]string{"junit": filepath.Join(dir, "r.xml"), "cucumber": filepath.Join(dir, "r.json"), "html": filepath.Join(dir, "r.html")}
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", forgetful, "--profile", "sandbox", "--format", "pretty",
		"--junit", files["junit"], "--cucumber", files["cucumber"], "--html", files["html"], "--tags", "@FAULT-37", "--explore=-1s")
	if got.code != kit.ExitDeviations || !strings.Contains(got.stderr, "verifies with the registered secret") {
		t.Fatalf("exit code %d, want %d with a signature that verifies\n%s", got.code, kit.ExitDeviations, got.stderr)
	}
	outputs := map[string]string{"stdout": got.stdout, "stderr": got.stderr}
	for name, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		outputs[name] = string(b)
	}
	for name, out := range outputs {
		for _, sp := range conformance.KeySpellings(testKey) {
			if strings.Contains(out, sp) {
				t.Errorf("%s shows the key as %q", name, sp)
			}
		}
		if m := webhookSecretRe.FindString(out); m != "" {
			t.Errorf("%s shows the webhook secret %s", name, m)
		}
		if m := signatureRe.FindString(out); m != "" {
			t.Errorf("%s shows the Webhook-Signature %s", name, m)
		}
	}
}

// TestStalledRunEndsByItsDeadline runs against a deployment that answers
// the first request and then sends every answer a byte at a time, slower
// than any request timeout allows for: the run ends by --run-timeout as
// could not judge, with its reports written.
func TestStalledRunEndsByItsDeadline(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	var first atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if first.CompareAndSwap(false, true) {
			_, _ = w.Write([]byte(`{"success":true,"data":{}}`))
			return
		}
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	junit := filepath.Join(t.TempDir(), "r.xml")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", srv.URL, "--profile", "sandbox", "--format", "none",
		"--run-timeout", "2s", "--junit", junit)
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "could not judge: the run did not finish within --run-timeout 2s") {
		t.Fatalf("exit code %d, want %d with could not judge\n%s", got.code, kit.ExitError, got.stderr)
	}
	b, err := os.ReadFile(junit)
	if err != nil || !bytes.Contains(b, []byte("could not judge")) {
		t.Errorf("the junit report does not say why the run stopped (%v):\n%s", err, b)
	}
}

// liveDeployment stands in for production: it takes svc_live_ keys (by
// handing the sandbox a test key) and counts the writes it accepts.
func liveDeployment(t *testing.T, writes *atomic.Int64) string {
	t.Helper()
	sandbox := sandboxtest.NewHandler(t, sandboxtest.Options{})
	return serve(t, rewriting(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer "+kit.LivePrefix) {
			r.Header.Set("Authorization", "Bearer "+kit.TestPrefix+strings.TrimPrefix(a, "Bearer "+kit.LivePrefix))
		}
		sandbox.ServeHTTP(w, r)
	}), func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
		if r.Method != http.MethodGet && st < 300 {
			writes.Add(1)
		}
		return st, b
	}))
}

func TestLiveKeySkipsWrites(t *testing.T) {
	t.Parallel()
	const liveKey = "svc_live_production_secret_77aa"
	t.Run("without --allow-writes", func(t *testing.T) {
		t.Parallel()
		var writes atomic.Int64
		url := liveDeployment(t, &writes)
		report := filepath.Join(t.TempDir(), "report.xml")
		got := runCLI(t, map[string]string{keyEnv: liveKey},
			"--base-url", url, "--exhaustive", "--format", "junit", "--output", report)
		if got.code != kit.ExitConformant {
			t.Fatalf("exit code %d, want 0\n%s", got.code, got.stderr)
		}
		if n := writes.Load(); n != 0 {
			t.Errorf("%d writes reached the live deployment, want none", n)
		}
		if !strings.Contains(got.stderr, "live key: @writes and @exhaustive scenarios") {
			t.Errorf("the summary does not say why writes were skipped:\n%s", got.stderr)
		}
		xml, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`<property name="disabled.reason" value="\d+: live key:`).Match(xml) {
			t.Errorf("the junit report does not count the live-key scenarios as disabled, with why:\n%s", xml)
		}
	})
	t.Run("with --allow-writes", func(t *testing.T) {
		t.Parallel()
		var writes atomic.Int64
		url := liveDeployment(t, &writes)
		got := runCLI(t, map[string]string{keyEnv: liveKey}, "--base-url", url, "--allow-writes", "--format", "none")
		if got.code != kit.ExitConformant {
			t.Fatalf("exit code %d, want 0\n%s", got.code, got.stderr)
		}
		if writes.Load() == 0 {
			t.Error("no write reached the deployment although --allow-writes was given")
		}
		if strings.Contains(got.stderr, "live key:") {
			t.Errorf("writes were skipped despite --allow-writes:\n%s", got.stderr)
		}
	})
}

func TestExtraFeatureDirectories(t *testing.T) {
	t.Parallel()
	url := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	write := func(name, text string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	own := write("smoke.feature", `Feature: Our smoke test
  Scenario: Campaigns list
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the JSON at "data.items" should be an array
`)
	typo := write("typo.feature", `Feature: A typo
  Scenario: Misspelt step
    When I send a GET request to "/v1/campaigns"
    Then the response status shuold be 200
`)
	key := map[string]string{keyEnv: testKey}

	got := runCLI(t, key, "--base-url", url, "--profile", "sandbox", "--features", own, "--no-builtin", "--format", "none", "--contract-pending=false")
	if got.code != kit.ExitConformant || !strings.Contains(got.stderr, "smoke        must") {
		t.Errorf("own features alone: exit %d, want 0 and a row for area smoke\n%s", got.code, got.stderr)
	}
	got = runCLI(t, key, "--base-url", url, "--features", own, "--tags", "~@should", "--format", "none")
	if got.code != kit.ExitConformant || !strings.Contains(got.stderr, "smoke") || !strings.Contains(got.stderr, "auth         must") {
		t.Errorf("own features beside the built-in ones: exit %d\n%s", got.code, got.stderr)
	}
	got = runCLI(t, key, "--base-url", url, "--features", typo, "--no-builtin", "--format", "none")
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "did you mean:\n      Then the response status should be 200\n") {
		t.Errorf("undefined step: exit %d, want 2 and a suggestion\n%s", got.code, got.stderr)
	}
	if strings.Contains(got.stdout+got.stderr, "func ") {
		t.Errorf("a Go snippet reached the user:\n%s%s", got.stdout, got.stderr)
	}
}

// TestAuthoringErrorsBeforeAnyRequest checks that a feature using a value
// nobody saved, or a misspelt match placeholder, is refused with exit 2
// before the deployment sees a single request.
func TestAuthoringErrorsBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			requests.Add(1)
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	tests := []struct {
		name, feature, want string
	}{
		{"a value never saved", `Feature: F
  Scenario: S
    When I send a GET request to "/v1/campaigns/{campaignID}"
    Then the response status should be 200
`, "unknown placeholder {campaignID}"},
		{"a value saved only later", `Feature: F
  Scenario: S
    When I send a GET request to "/v1/campaigns/{id}"
    And I save the JSON at "data.id" as "id"
`, "unknown placeholder {id}"},
		{"a misspelt match placeholder", `Feature: F
  Scenario: S
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data" should match:
      """
      {"createdAt": "<timestmp>"}
      """
`, "unknown placeholder <timestmp>"},
		{"an outline parameter without a column", `Feature: F
  Scenario Outline: S
    When I send a GET request to "<pth>"

    Examples:
      | path          |
      | /v1/campaigns |
`, "unknown outline parameter <pth>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f.feature"), []byte(tt.feature), 0o644); err != nil {
				t.Fatal(err)
			}
			got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--features", dir, "--no-builtin", "--format", "none")
			if got.code != kit.ExitError || !strings.Contains(got.stderr, tt.want) {
				t.Errorf("exit %d, want 2 and %q\n%s", got.code, tt.want, got.stderr)
			}
			check := runCLI(t, nil, "check", "--features", dir)
			if check.code != kit.ExitError || !strings.Contains(check.stderr, tt.want) {
				t.Errorf("conform check: exit %d, want 2 and %q\n%s", check.code, tt.want, check.stderr)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d authenticated request(s) reached the deployment; want none", n)
	}
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	got := runCLI(t, nil, "check")
	if got.code != kit.ExitConformant || !strings.Contains(got.stdout, "valid") {
		t.Errorf("check of the built-in suite: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
}

// TestReportsSideBySide writes junit and cucumber files in the same run as
// the human output, with the key kept out of both.
func TestReportsSideBySide(t *testing.T) {
	t.Parallel()
	url := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	dir := t.TempDir()
	junit, cucumber := filepath.Join(dir, "report.xml"), filepath.Join(dir, "report.json")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--tags", "@auth", "--format", "progress",
		"--junit", junit, "--cucumber", cucumber)
	if got.code != kit.ExitConformant {
		t.Fatalf("exit %d\n%s", got.code, got.stderr)
	}
	for _, f := range []string{junit, cucumber} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 || strings.Contains(string(b), testKey) {
			t.Errorf("%s: %d bytes, key present: %v", f, len(b), strings.Contains(string(b), testKey))
		}
	}
	if b, _ := os.ReadFile(cucumber); !strings.Contains(string(b), `"keyword"`) {
		t.Errorf("%s is not a cucumber report:\n%.300s", cucumber, b)
	}
	if b, _ := os.ReadFile(junit); !strings.Contains(string(b), "<testsuite") || !strings.Contains(string(b), `<testsuites name="conform `) {
		t.Errorf("%s is not a junit report:\n%.300s", junit, b)
	}
	if !strings.Contains(got.stdout, "passed") {
		t.Errorf("the human output is missing:\n%s", got.stdout)
	}
}

func TestStepsCommandListsEveryStep(t *testing.T) {
	t.Parallel()
	got := runCLI(t, nil, "steps")
	if got.code != 0 {
		t.Fatalf("exit code %d", got.code)
	}
	for _, s := range conformance.Steps() {
		if !strings.Contains(got.stdout, s.Pattern) || !strings.Contains(got.stdout, strings.Split(s.Example, "\n")[0]) {
			t.Errorf("steps output lacks %s", s.Pattern)
		}
	}
}
