package kit

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/testcampaign/kit/internal/browsertest"
)

// measureScript, added to a copy of the page, has Chromium write into the
// DOM how wide the page is against its window, and the first elements that
// reach past the window's right edge.
const measureScript = `<script>
const root = document.documentElement, w = root.clientWidth;
const wide = [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > w + 0.5)
  .slice(0, 5).map(e => e.tagName + " " + (e.textContent || "").trim().slice(0, 60));
document.body.setAttribute("data-width", w + " " + root.scrollWidth);
document.body.setAttribute("data-wide", JSON.stringify(wide));
</script>`

var (
	widthRe = regexp.MustCompile(`data-width="([0-9]+) ([0-9]+)"`)
	wideRe  = regexp.MustCompile(`data-wide="([^"]*)"`)
	cspRe   = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)
)

// TestDeadDeploymentReportFitsAWindowOf1280 renders the HTML report of a
// run whose deployment went away (testdata/dead.json: 134 scenarios left
// with "connection refused", a failure with a long unbroken answer, rule
// texts with code) in headless Chromium at 1280 px: one card per cause,
// and nothing wider than the window, so no sideways scrolling.
func TestDeadDeploymentReportFitsAWindowOf1280(t *testing.T) {
	browser := browsertest.Chromium(t)
	var page bytes.Buffer
	if err := recordedReport(t, "testdata/dead.json").WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	// The page's policy forbids scripts; the copy that is measured lets the
	// measuring one run, and is otherwise the page.
	measured := cspRe.ReplaceAllString(page.String(), "")
	measured = strings.Replace(measured, "</body>", measureScript+"\n</body>", 1)
	path := filepath.Join(t.TempDir(), "dead.html")
	if err := os.WriteFile(path, []byte(measured), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(browsertest.DumpDOM(t, browser, "file://"+path, "--window-size=1280,900", "--hide-scrollbars"))
	m := widthRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the measuring script did not run:\n%s", dom[:min(len(dom), 2000)])
	}
	if m[1] != "1280" {
		t.Errorf("the window is %s px wide, want 1280", m[1])
	}
	if m[2] != m[1] {
		wide := ""
		if w := wideRe.FindStringSubmatch(dom); w != nil {
			wide = html.UnescapeString(w[1])
		}
		t.Errorf("the page is %s px wide in a window of %s: it scrolls sideways; too wide: %s", m[2], m[1], wide)
	}
	if n := strings.Count(dom, `<div class="case`); n != 2 {
		t.Errorf("%d cards, want 2: one failure, and one for the 134 scenarios the dead deployment left without an answer", n)
	}
	for _, want := range []string{"no answer from the deployment (connection error)", "in 134 scenarios", "the 133 other scenario(s) with this cause"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page does not say %q", want)
		}
	}
	if strings.Contains(dom, "`") {
		t.Error("the rendered page shows a Markdown backtick; rule texts are text")
	}
}

func TestRuleTextIsText(t *testing.T) {
	tests := []struct{ markdown, want string }{
		{"Every `/v1` response has `success`.", "Every <code>/v1</code> response has <code>success</code>."},
		{"See [the spec](../spec.md) **first** & <b>.", "See the spec first &amp; &lt;b&gt;."},
		{"No code at all", "No code at all"},
	}
	for _, tt := range tests {
		if got := string(ruleText(tt.markdown)); got != tt.want {
			t.Errorf("ruleText(%q) = %q, want %q", tt.markdown, got, tt.want)
		}
	}
}

// TestHTMLListsTheScenariosByFeature: a green run's page names every
// scenario it ran, under its feature file, collapsed, with the rules it
// cites by tag and no other tag; the ones its configuration left out are
// counted with their reason, not listed.
func TestHTMLListsTheScenariosByFeature(t *testing.T) {
	var page bytes.Buffer
	if err := recordedReport(t, "testdata/green.json").WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	got := page.String()
	_, list, ok := strings.Cut(got, `<h2 id="scenarios">Scenarios by feature (3 in 2 feature(s))</h2>`)
	if !ok {
		t.Fatalf("the page has no list of its 3 scenarios in 2 features:\n%s", got)
	}
	list, _, _ = strings.Cut(list, "<h2")
	features := strings.Split(list, `<details class="feature">`)[1:]
	if len(features) != 2 {
		t.Fatalf("%d collapsed features, want 2:\n%s", len(features), list)
	}
	for i, want := range []struct{ summary, rows []string }{
		{[]string{"Authentication", "features/auth.feature", "2 scenario(s): 2 passed"},
			[]string{"<td>8</td><td>A request without credentials is refused</td><td>must</td><td class=\"passed\">passed</td><td>AUTH-1 AUTH-3</td>",
				"<td>14</td><td>A key shaped like svc_test_&lt;expired&gt; is refused</td><td>should</td><td class=\"passed\">passed</td><td>AUTH-3</td>"}},
		{[]string{"Campaigns", "features/campaigns.feature", "1 scenario(s): 1 passed"},
			[]string{"<td>5</td><td>Campaigns are listed newest first</td><td>must</td><td class=\"passed\">passed</td><td></td>"}},
	} {
		summary, rows, _ := strings.Cut(features[i], "</summary>")
		for _, w := range want.summary {
			if !strings.Contains(summary, w) {
				t.Errorf("feature %d's summary lacks %q: %s", i, w, summary)
			}
		}
		for _, w := range want.rows {
			if !strings.Contains(rows, w) {
				t.Errorf("feature %d lacks the row %q:\n%s", i, w, rows)
			}
		}
		if n := strings.Count(rows, "<tr><td>"); n != len(want.rows) {
			t.Errorf("feature %d lists %d scenarios, want %d", i, n, len(want.rows))
		}
	}
	if strings.Contains(list, "A new campaign is a draft") || strings.Contains(list, "@smoke") {
		t.Errorf("the list shows a disabled scenario or a tag that is no rule:\n%s", list)
	}
}
