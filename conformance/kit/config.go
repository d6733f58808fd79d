package kit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/docs"
)

// Config is one run of the suite against one deployment. Its zero values
// take the defaults below; a run refuses, with ErrUsage, one that misses
// what it cannot do without.
type Config struct {
	// BaseURL is the deployment's root; paths in features start with /v1.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>", a LivePrefix or
	// TestPrefix key. It never appears whole in any output: reports show
	// it as conformance.RedactKey does.
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
	// Color lets the pretty and progress reports use ANSI colours.
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
	// scenario that made the exchange, in the area AreaSchema, at must level.
	OpenAPI string
	// LoadSchema reads the OpenAPI document for OpenAPI; a run with OpenAPI
	// set and no loader is a usage error (see SchemaLoader).
	LoadSchema SchemaLoader
	// ExclusiveKey promises that nothing else uses APIKey during the run,
	// so the model counts its rate limit and records exactly.
	ExclusiveKey bool
	// Contract switches on checks of rules of docs/contract.md that not
	// every deployment implements yet.
	Contract ContractSwitches
	// Explore is how long the explorer runs with --profile sandbox: zero
	// for the default bounded exploration, negative for none.
	Explore time.Duration
	// Seed makes an exploration reproducible; zero picks one at random
	// (the report names it).
	Seed uint64
	// ReproDir, if set, receives each shrunk failure of the explorer, and
	// of a scenario the model disagreed with, as a .feature file.
	ReproDir string
}

// Profiles, the values of Config.Profile, choose which levels of rules
// and scenarios run: the spec profile holds any deployment to the
// published spec (docs.Must, docs.Should: @must, @should); the sandbox
// profile adds the sandbox's documented choices (docs.Sandbox: @sandbox),
// which a live deployment need not share.
const (
	ProfileSpec    = "spec"
	ProfileSandbox = "sandbox"
)

// Key prefixes the spec defines (section 5): a live key acts on real data
// and billing, so a run with one leaves out the scenarios that write
// unless Config.AllowWrites.
const (
	LivePrefix = "svc_live_"
	TestPrefix = "svc_test_"
)

// Report formats, the values of Config.Format. pretty and progress are
// godog's own formatters, the pretty one placing each step in its feature
// file; junit and cucumber are written from the kit's results, so that
// skipped scenarios and @should warnings appear as what they are.
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
// only: it is written from a run's results, not streamed as it goes.
const FormatHTML = "html"

// ReportFile is one report of a run, written to W in Format (FormatJUnit,
// FormatCucumber or FormatHTML) from the run's results; Name says where it
// goes, for the summary.
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

// OpenAPIServed, as Config.OpenAPI, is the document the deployment itself
// serves at /openapi.json, as the sandbox does.
const OpenAPIServed = "served"

// AreaSchema is the area of a report in which the exchanges that break the
// OpenAPI document of Config.OpenAPI fail, whatever scenario made them.
const AreaSchema = "schema"

// ContractSwitches turn on checks of rules of docs/contract.md that not
// every deployment implements yet.
type ContractSwitches struct {
	// DuplicateFields: a JSON object with a duplicated field is 400
	// INVALID_JSON.
	DuplicateFields bool
	// LongNumbers: a number literal longer than 32 characters is a
	// VALIDATION_ERROR.
	LongNumbers bool
}

// Schema checks exchanges and webhook deliveries against one OpenAPI
// document, for Config.OpenAPI; it must be safe for concurrent use.
// conformance/openapicheck provides one.
type Schema interface {
	Check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) []SchemaViolation
	CheckWebhook(eventType string, req *http.Request, body []byte) []SchemaViolation
}

// SchemaLoader reads an OpenAPI 3 document (YAML or JSON) for
// Config.OpenAPI, refusing one that is not valid OpenAPI 3.
// openapicheck.Load is one; it lives in its own package because it costs
// more to build than the rest of the kit, and a build without it leaves
// Config.LoadSchema nil.
type SchemaLoader func(doc []byte) (Schema, error)

// SchemaViolation is one way an exchange or a delivery breaks the OpenAPI
// document: where (In: "request", "response", "route"…), at which JSON path
// or name (Path), what the document wants there, and what was wrong.
type SchemaViolation struct {
	In, Path, Want, Message string
}

// Errors a run returns when it could not judge everything; test them with
// errors.Is.
var (
	// ErrUsage: a configuration or feature the kit cannot run (a bad
	// flag, a feature misusing the step library), the author's mistake
	// rather than a deviation of the deployment.
	ErrUsage = errors.New("usage error")
	// ErrConnection: the deployment could not be talked to at all, as
	// opposed to answers that deviate from the spec; a scenario that
	// meets it errs rather than fails.
	ErrConnection = errors.New("connection error")
	// ErrInterrupted: the run's context ended (Ctrl-C, SIGTERM) before
	// every scenario finished; the report holds those that did.
	ErrInterrupted = errors.New("interrupted")
	// ErrCouldNotJudge: the run stopped because of its environment (its
	// deadline passed, a budget kept refusing), not because of anything
	// the deployment was judged on; its message opens the reason a report
	// gives.
	ErrCouldNotJudge = errors.New("could not judge")
)

// StepDoc documents one step of the library for people writing features.
type StepDoc struct {
	Pattern string // the regular expression godog matches
	Example string // a step as it would appear in a .feature file
	// Tags are the tags a scenario using the step must carry: @sandbox for
	// a step that needs the sandbox's controls or fresh accounts, which a
	// run with --profile spec leaves out only by that tag.
	Tags []string
	// Needs is what an earlier step of the scenario must have done for
	// this one to have something to check: the Gives of some other step.
	Needs string
	// Gives is what the step leaves for later steps to check.
	Gives string
	// Takes is what the step reads from the lines written under it: "a
	// doc string", "a table", or "" for nothing.
	Takes string
}

// Requires says, for a catalogue, what a scenario must have to use the
// step: its tags, and what an earlier step must give; "" when nothing.
func (d StepDoc) Requires() string {
	var parts []string
	if len(d.Tags) > 0 {
		parts = append(parts, "tag "+strings.Join(d.Tags, " "))
	}
	if d.Needs != "" {
		parts = append(parts, "after "+d.Needs)
	}
	return strings.Join(parts, "; ")
}

// Placeholder is a {placeholder} every scenario has without saving it,
// with what it stands for.
type Placeholder struct{ Name, Means string }

// CitedFile is what one feature file's scenarios cite of docs/contract.md
// by tag (@AUTH-3): the rules a run's coverage counts them as exercising.
type CitedFile struct {
	URI       string
	Scenarios int      // scenarios of the file, each row of an outline one
	Citing    int      // of them, how many cite a rule by tag
	Rules     []string // the rule IDs cited, in the contract's order
}

// RuleChecks is one rule of docs/contract.md and how the kit checks it:
// the checks that judge it, or, in Reason, why no run judges it.
type RuleChecks struct {
	Rule   docs.Rule
	Checks []Check
	// Reason says why no run, or no default run, judges the rule; empty
	// when the kit has checks for it.
	Reason string
	// Proofs name the broken sandboxes each of which breaks the rule
	// alone and fails the default run, whatever its seed.
	Proofs []string
}

// FeatureSuite is one feature file of a run as its own godog suite, for go
// test's subtest per feature (see conformancetest).
type FeatureSuite struct {
	// Feature is the feature's name, the name of its subtest.
	Feature string
	// Suite builds the feature's suite; ctx bounds its scenarios.
	Suite func(ctx context.Context) godog.TestSuite
}
