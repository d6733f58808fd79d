package conformance

import (
	"context"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/runner"
	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Run runs the selected scenarios against cfg.BaseURL and returns their
// results. The error is non-nil only when the run could not judge
// everything: a bad configuration or feature file (kit.ErrUsage), an
// unreachable deployment (kit.ErrConnection), an interruption
// (kit.ErrInterrupted), or godog refusing its options. Deviations are in
// the report, not in the error. Every outcome writes cfg.Reports, so that
// CI always finds a report.
func Run(ctx context.Context, cfg kit.Config) (*kit.Report, error) {
	return runner.Run(ctx, cfg)
}

// Refuse writes the reports of a run that could not start because of why,
// a usage error its caller found before calling Run (Run does the same for
// the ones it finds): every report of cfg.Reports gets one error case
// naming the cause, so that CI finds a report on every exit 2. It returns
// that report and why, with any error writing the reports.
func Refuse(cfg kit.Config, why error) (*kit.Report, error) {
	return runner.Refuse(cfg, why)
}

// Explore runs only the explorer, for cfg.Explore (the bounded exploration
// of a run when zero): the long soak of `conform explore`. It needs the
// sandbox's fresh accounts, so it never writes with a live key. Its report
// goes wherever a run's would.
func Explore(ctx context.Context, cfg kit.Config) (*kit.Report, error) {
	return runner.Explore(ctx, cfg)
}

// Suite prepares a run as a godog.TestSuite, for Go teams that run the kit
// with `go test` and godog's own flags. Its webhook receiver, if any, stops
// when ctx ends. Results come from godog's formatters, not a Report, so a
// @should failure counts as a failure there.
func Suite(ctx context.Context, cfg kit.Config) (godog.TestSuite, error) {
	return runner.Suite(ctx, cfg)
}

// FeatureSuites prepares a run as Suite does and returns one suite per
// feature file that has a scenario to run, in the order of the files.
// flush writes what the suites' shared output still holds; call it after
// the last suite ran.
func FeatureSuites(ctx context.Context, cfg kit.Config) (suites []kit.FeatureSuite, flush func() error, err error) {
	return runner.FeatureSuites(ctx, cfg)
}

// Check validates feature files without sending a request: every step must
// match exactly one step of the library, and every {placeholder} and
// "<placeholder>" must be known where it is used. It returns one line per
// problem, each naming the file and line. Only cfg.FeatureDirs and
// cfg.NoBuiltin matter.
func Check(cfg kit.Config) ([]string, error) {
	return runner.Check(cfg)
}

// CitedRules says, for each feature file of cfg (cfg.FeatureDirs, and the
// built-in suite unless cfg.NoBuiltin), which rules its scenarios cite by
// tag. Like Check, it sends no request.
func CitedRules(cfg kit.Config) ([]kit.CitedFile, error) {
	return runner.CitedRules(cfg)
}

// Rules returns the catalogue of docs/contract.md, each rule with how the
// kit checks it: the checks its packages declare, and the built-in
// scenarios that cite the rule by tag.
func Rules() ([]kit.RuleChecks, error) { return runner.Rules() }

// Steps documents every step pattern of the library, in catalogue order.
func Steps() []kit.StepDoc { return steps.Steps() }

// BuiltinPlaceholders are the {placeholders} every scenario has.
func BuiltinPlaceholders() []kit.Placeholder { return steps.BuiltinPlaceholders() }

// PlaceholderNames lists the placeholders of `should match:` documents.
func PlaceholderNames() []string { return wire.PlaceholderNames() }

// RedactKey shows an API key as its type prefix and last four characters.
func RedactKey(key string) string { return wire.RedactKey(key) }

// Redact hides every spelling of key in text that the kit's leak detector
// recognises, as every report of the kit does.
func Redact(text, key string) string { return wire.RedactAll(text, key) }

// KeySpellings are the forms of key that the leak detector recognises and
// no report shows.
func KeySpellings(key string) []string { return wire.Spellings(key) }
