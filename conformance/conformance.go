package conformance

import (
	"context"
	"io"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/report"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/runner"
	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// Config is one run of the suite against one deployment. Its zero values
// take the defaults below; Run refuses, with ErrUsage, one that misses
// what a run cannot do without.
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
	// caller creates and closes them (conform creates its --junit,
	// --cucumber and --html files before anything is refused or sent); the
	// summary names them.
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
	LoadSchema SchemaLoader
	// ExclusiveKey promises that nothing else uses APIKey during the run,
	// so the model counts its rate limit and records exactly.
	ExclusiveKey bool
	// Contract switches on checks of rules of docs/contract.md that not every
	// deployment implements yet.
	Contract ContractSwitches
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

// internal is c as the runner takes it: the same fields, field by field.
func (c Config) internal() runner.Config { return runner.Config(c) }

// ContractSwitches turn on checks of rules of docs/contract.md that not
// every deployment implements yet.
type ContractSwitches = model.ContractSwitches

// Run runs the selected scenarios against cfg.BaseURL and returns their
// results. The error is non-nil only when the run could not judge
// everything: a bad configuration or feature file (ErrUsage), an
// unreachable deployment (ErrConnection), an interruption
// (ErrInterrupted), or godog refusing its options. Deviations are in the
// report, not in the error. Every outcome writes cfg.Reports, so that CI
// always finds a report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	return runner.Run(ctx, cfg.internal())
}

// Refuse writes the reports of a run that could not start because of why,
// a usage error its caller found before calling Run (Run does the same for
// the ones it finds): every report of cfg.Reports gets one error case
// naming the cause, so that CI finds a report on every exit 2. It returns
// that report and why, with any error writing the reports.
func Refuse(cfg Config, why error) (*Report, error) {
	return runner.Refuse(cfg.internal(), why)
}

// Explore runs only the explorer, for cfg.Explore (the bounded exploration
// of a run when zero): the long soak of `conform explore`. It needs the
// sandbox's fresh accounts, so it never writes with a live key. Its report
// goes wherever a run's would.
func Explore(ctx context.Context, cfg Config) (*Report, error) {
	return runner.Explore(ctx, cfg.internal())
}

// Suite prepares a run as a godog.TestSuite, for Go teams that run the kit
// with `go test` and godog's own flags. Its webhook receiver, if any, stops
// when ctx ends. Results come from godog's formatters, not a Report, so a
// @should failure counts as a failure there.
func Suite(ctx context.Context, cfg Config) (godog.TestSuite, error) {
	return runner.Suite(ctx, cfg.internal())
}

// FeatureSuite is one feature file of a run as its own godog suite, for go
// test's subtest per feature (see conformancetest).
type FeatureSuite = runner.FeatureSuite

// FeatureSuites prepares a run as Suite does and returns one suite per
// feature file that has a scenario to run, in the order of the files.
// flush writes what the suites' shared output still holds; call it after
// the last suite ran.
func FeatureSuites(ctx context.Context, cfg Config) (suites []FeatureSuite, flush func() error, err error) {
	return runner.FeatureSuites(ctx, cfg.internal())
}

// Check validates feature files without sending a request: every step must
// match exactly one step of the library, and every {placeholder} and
// "<placeholder>" must be known where it is used. It returns one line per
// problem, each naming the file and line. Only cfg.FeatureDirs and
// cfg.NoBuiltin matter.
func Check(cfg Config) ([]string, error) {
	return runner.Check(cfg.internal())
}

// CitedFile is what one feature file's scenarios cite of docs/contract.md
// by tag (@AUTH-3): the rules a run's coverage counts them as exercising.
type CitedFile = runner.CitedFile

// CitedRules says, for each feature file of cfg (cfg.FeatureDirs, and the
// built-in suite unless cfg.NoBuiltin), which rules its scenarios cite by
// tag. Like Check, it sends no request.
func CitedRules(cfg Config) ([]CitedFile, error) {
	return runner.CitedRules(cfg.internal())
}

// RuleChecks is one rule of docs/contract.md and how the kit checks it:
// the checks that judge it, or, in Reason, why no run judges it.
type RuleChecks = runner.RuleChecks

// Rules returns the catalogue of docs/contract.md, each rule with how the
// kit checks it: the checks its packages declare, and the built-in
// scenarios that cite the rule by tag.
func Rules() ([]RuleChecks, error) { return runner.Rules() }

// Formats lists the accepted values of Config.Format.
func Formats() []string { return runner.Formats() }

// Profiles choose which levels run: the spec profile checks what the
// published spec requires (@must, @should); the sandbox profile adds the
// sandbox's documented choices (@sandbox), which a live deployment need not
// share.
const (
	ProfileSpec    = wire.ProfileSpec
	ProfileSandbox = wire.ProfileSandbox
)

// Report formats, the values of Config.Format. pretty, progress and
// cucumber are godog's own formatters; junit is written from the kit's
// results so that skipped scenarios and @should warnings appear as what
// they are.
const (
	FormatPretty   = runner.FormatPretty
	FormatProgress = runner.FormatProgress
	FormatJUnit    = runner.FormatJUnit
	FormatCucumber = runner.FormatCucumber
	FormatNone     = runner.FormatNone
)

// FormatHTML is the self-contained HTML report, a format of a ReportFile
// only: godog has no HTML formatter to write it to Output.
const FormatHTML = runner.FormatHTML

// ReportFile is one report of a run, written to W in Format (FormatJUnit,
// FormatCucumber or FormatHTML) from the run's results; Name says where it
// goes, for the summary.
type ReportFile = runner.ReportFile

// Defaults for the zero values of Config.
const (
	DefaultTimeout     time.Duration = runner.DefaultTimeout
	DefaultRunTimeout  time.Duration = runner.DefaultRunTimeout
	DefaultConcurrency               = runner.DefaultConcurrency
)

// OpenAPIServed, as Config.OpenAPI, is the document the deployment itself
// serves at /openapi.json, as the sandbox does.
const OpenAPIServed = runner.OpenAPIServed

// Errors a run returns when it could not judge everything; test them with
// errors.Is.
var (
	// ErrUsage: a configuration or feature the kit cannot run, the
	// author's mistake rather than a deviation of the deployment.
	ErrUsage = wire.ErrUsage
	// ErrConnection: the deployment could not be talked to at all.
	ErrConnection = wire.ErrConnection
	// ErrInterrupted: the run's context ended (Ctrl-C, SIGTERM) before
	// every scenario finished; the report holds those that did.
	ErrInterrupted = wire.ErrInterrupted
	// ErrCouldNotJudge: the run stopped because of its environment (its
	// deadline passed, a budget kept refusing), not because of anything
	// the deployment was judged on.
	ErrCouldNotJudge = wire.ErrCouldNotJudge
)

// Report is the outcome of one run: the scenarios with their Status, why
// the run stopped if it did, the rules it covered. ExitCode maps it to the
// conform command's exit status; WriteSummary, WriteJUnit, WriteCucumber
// and WriteHTML write it for people and CI.
type Report = report.Report

// ScenarioResult is what the run found for one scenario (one row of an
// outline counts as one scenario): its status, and for a failure the step,
// the rule and the exchange at fault, with the key redacted.
type ScenarioResult = report.ScenarioResult

// StepResult is one step of a scenario as it ran.
type StepResult = report.StepResult

// Settings is the effective configuration of a run, recorded in every
// report so that a result can be read, and repeated, without the job that
// made it.
type Settings = report.Settings

// Status is the outcome of one scenario. Statuses are ranked, worst last,
// so that a run's result is the worst of its scenarios.
type Status = report.Status

// The ranked outcomes: Disabled (kept out by the configuration) < Skipped
// (could not run here: lost coverage) < Passed < Warned (a @should failure,
// not strict) < Failed (a deviation) < Errored (the kit could not judge).
const (
	Disabled = report.Disabled
	Skipped  = report.Skipped
	Passed   = report.Passed
	Warned   = report.Warned
	Failed   = report.Failed
	Errored  = report.Errored
)

// Exit codes of the conform command: conformant, deviations found, usage
// or connection error or interrupted.
const (
	ExitConformant = report.ExitConformant
	ExitDeviations = report.ExitDeviations
	ExitError      = report.ExitError
)

// Levels of the rules of docs/contract.md, and of the scenarios' tags.
const (
	LevelMust    = wire.LevelMust
	LevelShould  = wire.LevelShould
	LevelSandbox = wire.LevelSandbox
)

// Key prefixes the spec defines (section 5): a live key acts on real data.
const (
	LivePrefix = wire.LivePrefix
	TestPrefix = wire.TestPrefix
)

// RedactKey shows an API key as its type prefix and last four characters.
func RedactKey(key string) string { return wire.RedactKey(key) }

// Redact hides every spelling of key in text that the kit's leak detector
// recognises, as every report of the kit does.
func Redact(text, key string) string { return wire.RedactAll(text, key) }

// KeySpellings are the forms of key that the leak detector recognises and
// no report shows.
func KeySpellings(key string) []string { return wire.Spellings(key) }

// StepDoc documents one step of the library: the regular expression godog
// matches, and an example as it would appear in a .feature file.
type StepDoc = steps.Doc

// Steps documents every step pattern of the library, in catalogue order.
func Steps() []StepDoc { return steps.Steps() }

// Placeholder is a {placeholder} of steps, with what it stands for.
type Placeholder = steps.Placeholder

// BuiltinPlaceholders are the {placeholders} every scenario has.
func BuiltinPlaceholders() []Placeholder { return steps.BuiltinPlaceholders() }

// PlaceholderNames lists the placeholders of `should match:` documents.
func PlaceholderNames() []string { return wire.PlaceholderNames() }

// Schema checks exchanges and webhook deliveries against one OpenAPI
// document, for Config.OpenAPI; it must be safe for concurrent use.
// conformance/openapicheck provides one.
type Schema = rules.Schema

// SchemaLoader reads an OpenAPI 3 document (YAML or JSON) for
// Config.OpenAPI, refusing one that is not valid OpenAPI 3.
// openapicheck.Load is one; it lives in its own package because it costs
// more to build than the rest of the kit.
type SchemaLoader = rules.SchemaLoader

// SchemaViolation is one way an exchange or a delivery breaks the OpenAPI
// document: where (In: "request", "response", "route"…), at which JSON path
// or name (Path), what the document wants there, and what was wrong.
type SchemaViolation = rules.SchemaViolation
