package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/internal/browsertest"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

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
	browser := browsertest.Chromium(t)
	broken := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(_ *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			return st, bytes.Replace(b, []byte(`"success":true`), []byte(`"success":"true"`), 1)
		}))
	page := filepath.Join(t.TempDir(), "report.html")
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", broken, "--tags", "@envelope,@auth,@versioning", "--format", "none", "--html", page)
	if got.code != kit.ExitDeviations {
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
	dom := string(browsertest.DumpDOM(t, browser, "file://"+page))
	if v := textOf(dom, "verdict"); v != "NOT CONFORMANT" {
		t.Errorf("the verdict reads %q, want NOT CONFORMANT", v)
	}
	text := tagRe.ReplaceAllString(dom, " ")
	for _, want := range []string{
		"Areas by level", "envelope", "Failures",
		"every response is the envelope (spec §4, §7)",
		`"success" must be a boolean, got string "true"`,
		"Disabled (left out by this run", "@sandbox checks the sandbox",
		"Scenarios by feature", "A refused request answers with the error envelope",
		conformance.RedactKey(testKey),
	} {
		if !strings.Contains(strings.ReplaceAll(text, "&quot;", `"`), want) {
			t.Errorf("the rendered page does not show %q", want)
		}
	}
}
