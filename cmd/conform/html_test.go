package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// chromium finds Debian's headless browser. Without one the test is
// skipped on a developer's machine, but fails in CI (CI set), where .ci/run
// installs it: a report nobody rendered is not known to render.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; .ci/run installs it from Debian's packages")
	}
	t.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	return ""
}

// render loads a page in headless Chromium, with no network and a profile
// of its own, and returns the DOM as the browser built it.
func render(t *testing.T, browser, page string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return string(out)
}

var tagRe = regexp.MustCompile(`<[^>]+>`)

// textOf is the text of the element with the given id in a dumped DOM.
func textOf(dom, id string) string {
	i := strings.Index(dom, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	rest := dom[i:]
	start := strings.IndexByte(rest, '>') + 1
	end := strings.Index(rest, "</")
	if start <= 0 || end < start {
		return ""
	}
	return strings.TrimSpace(tagRe.ReplaceAllString(rest[start:end], ""))
}

// TestHTMLReportRendersInChromium renders the report of a broken deployment
// and checks what a reader sees: the verdict, the table of areas, a failure
// with its rule, step and exchange, and the skips; and that the page asks
// for nothing outside itself.
func TestHTMLReportRendersInChromium(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	broken := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(_ *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			return st, bytes.Replace(b, []byte(`"success":true`), []byte(`"success":"true"`), 1)
		}))
	page := filepath.Join(t.TempDir(), "report.html")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", broken, "--tags", "@envelope,@auth,@versioning", "--format", "none", "--html", page)
	if got.code != conformance.ExitDeviations {
		t.Fatalf("exit %d, want 1\n%s", got.code, got.stderr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, external := range []string{"<script", "<link", "<img", "src=", "url(", "@import", "http-equiv=\"refresh\""} {
		if bytes.Contains(raw, []byte(external)) {
			t.Errorf("the page loads something from outside itself (%s)", external)
		}
	}
	if bytes.Contains(raw, []byte(testKey)) {
		t.Error("the page shows the key whole")
	}
	dom := render(t, browser, page)
	if v := textOf(dom, "verdict"); v != "NOT CONFORMANT" {
		t.Errorf("the verdict reads %q, want NOT CONFORMANT", v)
	}
	text := tagRe.ReplaceAllString(dom, " ")
	for _, want := range []string{
		"Areas by level", "envelope", "Failures",
		"every response is the envelope (spec §4, §7)",
		`"success" must be a boolean, got string "true"`,
		"Disabled (left out by this run", "@sandbox checks the sandbox",
		conformance.RedactKey(testKey),
	} {
		if !strings.Contains(strings.ReplaceAll(text, "&quot;", `"`), want) {
			t.Errorf("the rendered page does not show %q", want)
		}
	}
}
