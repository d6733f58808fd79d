package runner

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/internal/explore"
	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/internal/report"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// Report formats. pretty, progress and cucumber are godog's own formatters;
// junit is written from the kit's results so that skipped scenarios and
// @should warnings appear as what they are.
const (
	FormatPretty   = "pretty"
	FormatProgress = "progress"
	FormatJUnit    = "junit"
	FormatCucumber = "cucumber"
	FormatNone     = "none"
)

// Formats lists the accepted values of Config.Format.
func Formats() []string {
	return []string{FormatPretty, FormatProgress, FormatJUnit, FormatCucumber, FormatNone}
}

// FormatHTML is the self-contained HTML report, a format of a ReportFile
// only: godog has no HTML formatter to write it to Output.
const FormatHTML = "html"

// ReportFile is one report of a run written to W in Format (FormatJUnit,
// FormatCucumber or FormatHTML), Name saying where it goes.
type ReportFile struct {
	Format string
	Name   string
	W      io.Writer
}

// Defaults for the zero values of Config.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultConcurrency = 4
	// DefaultRunTimeout bounds a whole run, beyond any --explore time: the
	// default run takes seconds, and waits for throttled requests take
	// two minutes each at most, so a run still going after this is
	// stalled by its deployment.
	DefaultRunTimeout = 10 * time.Minute
)

// Config is one run of the suite against one deployment.
type Config struct {
	// BaseURL is the deployment's root; paths in features start with /v1.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>". It never appears
	// whole in any output: reports show RedactKey(APIKey).
	APIKey string
	// Profile is ProfileSpec (the default) or ProfileSandbox.
	Profile string
	// Tags is a godog tag expression (Behat style: "," or, "&&" and, "~@x"
	// not) that further narrows the scenarios.
	Tags string
	// Format of the report written to Output; FormatProgress by default.
	Format string
	// Output receives the report; nil discards it.
	Output io.Writer
	// Summary receives the short human summary; nil omits it.
	Summary io.Writer
	// Color lets godog's formatters use ANSI colours.
	Color bool
	// FeatureDirs are extra directories whose .feature files run beside (or,
	// with NoBuiltin, instead of) the built-in suite.
	FeatureDirs []string
	// NoBuiltin leaves the embedded features out.
	NoBuiltin bool
	// Strict makes @should failures fail the run instead of warning.
	Strict bool
	// Timeout bounds each HTTP request; DefaultTimeout when zero.
	Timeout time.Duration
	// RunTimeout bounds the whole run: past it the run stops as could not
	// judge, with the reports of what finished. When zero,
	// DefaultRunTimeout plus Explore.
	RunTimeout time.Duration
	// Concurrency is how many scenarios run at once. When zero it is 1 for
	// the pretty format, whose output godog interleaves otherwise, and
	// DefaultConcurrency for the others.
	Concurrency int
	// AllowWrites runs @writes and @exhaustive scenarios with a live key.
	AllowWrites bool
	// Exhaustive opts in to @exhaustive scenarios, which spend a whole
	// rate-limit window of the key.
	Exhaustive bool
	// Version names the build of conform that runs the suite (cmd/conform
	// sets it from the binary's build information), so that a report says
	// which suite wrote it.
	Version string
	// Reports receive, next to Format on Output, the same run's report in
	// their own formats, however the run ends, a refused one included. The
	// caller creates and closes them; the summary names them.
	Reports []ReportFile
	// OutputName is the file Output writes to, if any, for the summary to
	// name where the whole report is.
	OutputName string
	// FailOnSkip fails the run (exit 1) when any selected scenario was
	// skipped because it could not run, as opposed to disabled by the
	// configuration.
	FailOnSkip bool
	// WebhookListen is where conform's own webhook receiver listens:
	// 127.0.0.1:0 (a free loopback port) when empty, "off" for no receiver,
	// in which case @delivery scenarios are skipped.
	WebhookListen string
	// WebhookURL is the receiver's address as the deployment reaches it,
	// when that is not the listening address (a tunnel, a container host).
	WebhookURL string
	// OpenAPI, if set, is an OpenAPI 3 document every exchange and webhook
	// delivery of the run must match: a file, an http(s) URL, or
	// OpenAPIServed for the deployment's own /openapi.json. Breaks fail the
	// scenario that made the exchange, in the area "schema", at must level.
	OpenAPI string
	// LoadSchema reads the OpenAPI document for OpenAPI; a run with OpenAPI
	// set and no loader is a usage error (see SchemaLoader).
	LoadSchema rules.SchemaLoader
	// ExclusiveKey promises that nothing else uses APIKey during the run,
	// so the model counts its rate limit and records exactly.
	ExclusiveKey bool
	// Contract switches on checks of rules of docs/contract.md that not every
	// deployment implements yet.
	Contract model.ContractSwitches
	// Explore is how long the explorer runs with --profile sandbox: zero
	// for the default bounded exploration, negative for none.
	Explore time.Duration
	// Seed makes an exploration reproducible; zero picks one at random
	// (the report names it).
	Seed uint64
	// ReproDir, if set, receives each shrunk failure of the explorer as a
	// .feature file.
	ReproDir string
}

// settings is the effective configuration a report records.
func (c Config) settings() report.Settings {
	return report.Settings{
		Tags: c.Tags, Profile: c.Profile, Strict: c.Strict, FailOnSkip: c.FailOnSkip,
		FeatureDirs: c.FeatureDirs, NoBuiltin: c.NoBuiltin, OpenAPI: c.OpenAPI,
		Concurrency: c.Concurrency, Exhaustive: c.Exhaustive, AllowWrites: c.AllowWrites,
		Seed: c.Seed,
	}
}

func (c Config) planOptions() plan.PlanOptions {
	return plan.PlanOptions{
		Tags: c.Tags, Profile: c.Profile, FeatureDirs: c.FeatureDirs, NoBuiltin: c.NoBuiltin,
		APIKey: c.APIKey, AllowWrites: c.AllowWrites, Exhaustive: c.Exhaustive, WebhookListen: c.WebhookListen,
	}
}

func (c Config) exploreOptions() explore.ExploreOptions {
	return explore.ExploreOptions{Duration: c.Explore, Seed: c.Seed, ReproDir: c.ReproDir, Sandbox: c.Profile == wire.ProfileSandbox}
}

// WithDefaults returns c with zero values replaced and checks what the run
// cannot do without; its errors are usage errors.
func (c Config) WithDefaults() (Config, error) {
	if c.BaseURL == "" {
		return c, fmt.Errorf("%w: no base URL", wire.ErrUsage)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("%w: base URL %q is not an absolute http(s) URL", wire.ErrUsage, c.BaseURL)
	}
	if p := strings.TrimRight(u.Path, "/"); strings.HasSuffix(p, "/v1") {
		// The features add /v1 themselves: every request would go to
		// /v1/v1/… and the whole run would blame a correct deployment.
		root := *u
		root.Path = strings.TrimSuffix(p, "/v1")
		return c, fmt.Errorf("%w: base URL %q ends in /v1, which every request adds itself; pass the deployment's root: --base-url %s", wire.ErrUsage, c.BaseURL, root.String())
	}
	if c.APIKey == "" {
		return c, fmt.Errorf("%w: no API key", wire.ErrUsage)
	}
	if c.Seed == 0 {
		// Picked here, not by the explorer, so that every report can
		// print the seed that repeats the run.
		c.Seed = rand.Uint64()
	}
	if c.Profile == "" {
		c.Profile = wire.ProfileSpec
	}
	if c.Profile != wire.ProfileSpec && c.Profile != wire.ProfileSandbox {
		return c, fmt.Errorf("%w: unknown profile %q (want %s or %s)", wire.ErrUsage, c.Profile, wire.ProfileSpec, wire.ProfileSandbox)
	}
	if c.Format == "" {
		c.Format = FormatProgress
	}
	known := false
	for _, f := range Formats() {
		known = known || f == c.Format
	}
	if !known {
		return c, fmt.Errorf("%w: unknown format %q (want one of %s)", wire.ErrUsage, c.Format, strings.Join(Formats(), ", "))
	}
	for _, f := range c.Reports {
		if f.W == nil || (f.Format != FormatJUnit && f.Format != FormatCucumber && f.Format != FormatHTML) {
			return c, fmt.Errorf("%w: the report %q is %q with writer %v; want %s, %s or %s, and a writer", wire.ErrUsage, f.Name, f.Format, f.W != nil, FormatJUnit, FormatCucumber, FormatHTML)
		}
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = DefaultRunTimeout + max(c.Explore, 0)
	}
	switch {
	case c.Concurrency < 0:
		return c, fmt.Errorf("%w: concurrency %d is negative", wire.ErrUsage, c.Concurrency)
	case c.Concurrency == 0 && c.Format == FormatPretty:
		c.Concurrency = 1
	case c.Concurrency == 0:
		c.Concurrency = DefaultConcurrency
	}
	if c.WebhookListen == "" {
		c.WebhookListen = "127.0.0.1:0"
	}
	if c.WebhookURL != "" {
		u, err := url.Parse(c.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%w: webhook URL %q is not an absolute http(s) URL", wire.ErrUsage, c.WebhookURL)
		}
	}
	if c.NoBuiltin && len(c.FeatureDirs) == 0 {
		return c, fmt.Errorf("%w: no built-in features and no feature directories: nothing to run", wire.ErrUsage)
	}
	if c.OpenAPI != "" && c.LoadSchema == nil {
		return c, fmt.Errorf("%w: --openapi: this build of conform has no OpenAPI validator; build it with `go build -tags openapi ./cmd/conform`", wire.ErrUsage)
	}
	return c, nil
}

// overdue says why a run that reached its RunTimeout stopped.
func (c Config) overdue() string {
	return fmt.Sprintf("the run did not finish within --run-timeout %s (a deployment answering too slowly?)", c.RunTimeout)
}
