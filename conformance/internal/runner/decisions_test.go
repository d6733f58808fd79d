package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/report"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

func TestStatusOfRanksTheKitsOwnTroubleAsAnError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want report.Status
	}{
		{nil, report.Passed},
		{errors.New(`the header "Allow" is missing`), report.Failed},
		{fmt.Errorf("step: %w", godog.ErrSkip), report.Skipped},
		{fmt.Errorf("%w: I sned a request", godog.ErrUndefined), report.Errored},
		{fmt.Errorf("%w: bad placeholder", wire.ErrUsage), report.Errored},
		{fmt.Errorf("%w: GET /v1: refused", wire.ErrConnection), report.Errored},
		{&transport.ThrottledError{Scope: transport.ScopeKey, Request: "GET /v1/bugs"}, report.Errored},
	} {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestWithDefaultsFillsTheZeroValuesAndRefusesWhatCannotRun(t *testing.T) {
	base := Config{BaseURL: "http://127.0.0.1:8080", APIKey: "svc_test_defaults_0001"}
	got, err := base.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.Profile != wire.ProfileSpec || got.Format != FormatProgress || got.Concurrency != DefaultConcurrency ||
		got.Timeout != DefaultTimeout || got.RunTimeout != DefaultRunTimeout || got.WebhookListen != "127.0.0.1:0" || got.Seed == 0 {
		t.Errorf("defaults = %+v", got)
	}
	pretty := base
	pretty.Format = FormatPretty
	if got, _ := pretty.WithDefaults(); got.Concurrency != 1 {
		t.Errorf("pretty runs %d scenarios at once, want 1: godog interleaves its output otherwise", got.Concurrency)
	}
	for name, change := range map[string]func(*Config){
		"no base URL":                     func(c *Config) { c.BaseURL = "" },
		"a relative base URL":             func(c *Config) { c.BaseURL = "/v1" },
		"no key":                          func(c *Config) { c.APIKey = "" },
		"an unknown profile":              func(c *Config) { c.Profile = "live" },
		"an unknown format":               func(c *Config) { c.Format = "xml" },
		"a negative concurrency":          func(c *Config) { c.Concurrency = -1 },
		"no features at all":              func(c *Config) { c.NoBuiltin = true },
		"a webhook URL that is not a URL": func(c *Config) { c.WebhookURL = "hooks.example.net" },
		"--openapi without a validator":   func(c *Config) { c.OpenAPI = OpenAPIServed },
	} {
		c := base
		change(&c)
		if _, err := c.WithDefaults(); !errors.Is(err, wire.ErrUsage) {
			t.Errorf("%s: error %v, want a usage error", name, err)
		}
	}
}

// TestRefuseWritesEveryReportItIsGiven: a refused run writes its one error
// case to each writer of Config.Reports, in its format, names them for the
// summary, and opens no file of its own.
func TestRefuseWritesEveryReportItIsGiven(t *testing.T) {
	var junit, cucumber, html, summary strings.Builder
	cfg := Config{APIKey: "svc_test_refusedrefusedrefused", Summary: &summary, Reports: []ReportFile{
		{Format: FormatJUnit, Name: "r.xml", W: &junit},
		{Format: FormatCucumber, Name: "r.json", W: &cucumber},
		{Format: FormatHTML, Name: "r.html", W: &html},
	}}
	rep, err := Refuse(cfg, fmt.Errorf("%w: no base URL", wire.ErrUsage))
	if !errors.Is(err, wire.ErrUsage) || rep == nil {
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
	if _, err := (Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Reports: []ReportFile{{Format: "pdf", W: &junit}}}).WithDefaults(); !errors.Is(err, wire.ErrUsage) {
		t.Errorf("a report in an unknown format: %v, want a usage error", err)
	}
}

// TestAReportNotWrittenIsNotNamed: the summary's "listed in" and conform's
// "wrote" name only reports written whole; a full disk is no report.
func TestAReportNotWrittenIsNotNamed(t *testing.T) {
	var html strings.Builder
	cfg := Config{APIKey: "svc_test_refusedrefusedrefused", Reports: []ReportFile{
		{Format: FormatJUnit, Name: "full.xml", W: fullDisk{}},
		{Format: FormatHTML, Name: "r.html", W: &html},
	}}
	rep, err := Refuse(cfg, fmt.Errorf("%w: no base URL", wire.ErrUsage))
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
