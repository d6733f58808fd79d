package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
)

func TestWithDefaultsFillsTheZeroValuesAndRefusesWhatCannotRun(t *testing.T) {
	base := kit.Config{BaseURL: "http://127.0.0.1:8080", APIKey: "svc_test_defaults_0001"}
	got, err := withDefaults(base)
	if err != nil {
		t.Fatal(err)
	}
	if got.Profile != kit.ProfileSpec || got.Format != kit.FormatProgress || got.Concurrency != kit.DefaultConcurrency ||
		got.Timeout != kit.DefaultTimeout || got.RunTimeout != kit.DefaultRunTimeout || got.WebhookListen != "127.0.0.1:0" || got.Seed == 0 {
		t.Errorf("defaults = %+v", got)
	}
	pretty := base
	pretty.Format = kit.FormatPretty
	if got, _ := withDefaults(pretty); got.Concurrency != 1 {
		t.Errorf("pretty runs %d scenarios at once, want 1: godog interleaves its output otherwise", got.Concurrency)
	}
	for name, change := range map[string]func(*kit.Config){
		"no base URL":                     func(c *kit.Config) { c.BaseURL = "" },
		"a relative base URL":             func(c *kit.Config) { c.BaseURL = "/v1" },
		"no key":                          func(c *kit.Config) { c.APIKey = "" },
		"an unknown profile":              func(c *kit.Config) { c.Profile = "live" },
		"an unknown format":               func(c *kit.Config) { c.Format = "xml" },
		"a negative concurrency":          func(c *kit.Config) { c.Concurrency = -1 },
		"no features at all":              func(c *kit.Config) { c.NoBuiltin = true },
		"a webhook URL that is not a URL": func(c *kit.Config) { c.WebhookURL = "hooks.example.net" },
		"--openapi without a validator":   func(c *kit.Config) { c.OpenAPI = kit.OpenAPIServed },
	} {
		c := base
		change(&c)
		if _, err := withDefaults(c); !errors.Is(err, kit.ErrUsage) {
			t.Errorf("%s: error %v, want a usage error", name, err)
		}
	}
}

// TestRefuseWritesEveryReportItIsGiven: a refused run writes its one error
// case to each writer of kit.Config.Reports, in its format, names them for the
// summary, and opens no file of its own.
func TestRefuseWritesEveryReportItIsGiven(t *testing.T) {
	var junit, cucumber, html, summary strings.Builder
	cfg := kit.Config{APIKey: "svc_test_refusedrefusedrefused", Summary: &summary, Reports: []kit.ReportFile{
		{Format: kit.FormatJUnit, Name: "r.xml", W: &junit},
		{Format: kit.FormatCucumber, Name: "r.json", W: &cucumber},
		{Format: kit.FormatHTML, Name: "r.html", W: &html},
	}}
	rep, err := Refuse(cfg, fmt.Errorf("%w: no base URL", kit.ErrUsage))
	if !errors.Is(err, kit.ErrUsage) || rep == nil {
		t.Fatalf("Refuse = %v, %v; want the usage error and a report", rep, err)
	}
	for _, w := range []struct {
		name, got, want string
	}{
		{"junit", junit.String(), "<testsuite"},
		{"cucumber", cucumber.String(), `"elements"`},
		{"HTML", html.String(), "<html"},
	} {
		if !strings.Contains(w.got, w.want) || !strings.Contains(w.got, "no base URL") {
			t.Errorf("the %s report of a refused run lacks %q or the cause:\n%.400s", w.name, w.want, w.got)
		}
	}
	if want := []string{"r.xml", "r.json", "r.html"}; !slices.Equal(rep.Files, want) {
		t.Errorf("the report names the files %v, want %v", rep.Files, want)
	}
	if _, err := withDefaults(kit.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Reports: []kit.ReportFile{{Format: "pdf", W: &junit}}}); !errors.Is(err, kit.ErrUsage) {
		t.Errorf("a report in an unknown format: %v, want a usage error", err)
	}
}

// TestAReportNotWrittenIsNotNamed: the summary's "listed in" and conform's
// "wrote" name only reports written whole; a full disk is no report.
func TestAReportNotWrittenIsNotNamed(t *testing.T) {
	var html strings.Builder
	cfg := kit.Config{APIKey: "svc_test_refusedrefusedrefused", Reports: []kit.ReportFile{
		{Format: kit.FormatJUnit, Name: "full.xml", W: fullDisk{}},
		{Format: kit.FormatHTML, Name: "r.html", W: &html},
	}}
	rep, err := Refuse(cfg, fmt.Errorf("%w: no base URL", kit.ErrUsage))
	if !errors.Is(err, errFullDisk) {
		t.Errorf("Refuse = %v, want the junit report's write error too", err)
	}
	if want := []string{"r.html"}; !slices.Equal(rep.Files, want) {
		t.Errorf("the report names the files %v, want %v", rep.Files, want)
	}
}

var errFullDisk = errors.New("no space left on device")

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errFullDisk }
