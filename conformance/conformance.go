package conformance

import (
	"github.com/testcampaign/kit/conformance/model"
	"github.com/testcampaign/kit/conformance/report"
	"github.com/testcampaign/kit/conformance/rules"
	"github.com/testcampaign/kit/conformance/runner"
	"github.com/testcampaign/kit/conformance/steps"
	"github.com/testcampaign/kit/conformance/wire"
)

// Config is one run of the suite against one deployment.
type Config = runner.Config

// ContractSwitches turn on checks of contract rules that not every
// deployment implements yet.
type ContractSwitches = model.ContractSwitches

// Run runs the selected scenarios and the explorer; see runner.Run.
var Run = runner.Run

// Explore runs only the explorer, for `conform explore`; see runner.Explore.
var Explore = runner.Explore

// Suite prepares a run as a godog.TestSuite; see runner.Suite.
var Suite = runner.Suite

// Check validates feature files without sending a request; see runner.Check.
var Check = runner.Check

// RuleChecks is one rule of docs/contract.md and how the kit checks it.
type RuleChecks = runner.RuleChecks

// Rules returns the catalogue of rules with how the kit checks each; see
// runner.Rules.
var Rules = runner.Rules

// Formats lists the accepted values of Config.Format.
var Formats = runner.Formats

// Profiles choose which levels run.
const (
	ProfileSpec    = wire.ProfileSpec
	ProfileSandbox = wire.ProfileSandbox
)

// Report formats.
const (
	FormatPretty   = runner.FormatPretty
	FormatProgress = runner.FormatProgress
	FormatJUnit    = runner.FormatJUnit
	FormatCucumber = runner.FormatCucumber
	FormatNone     = runner.FormatNone
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout     = runner.DefaultTimeout
	DefaultRunTimeout  = runner.DefaultRunTimeout
	DefaultConcurrency = runner.DefaultConcurrency
)

// OpenAPIServed, as Config.OpenAPI, is the deployment's own /openapi.json.
const OpenAPIServed = runner.OpenAPIServed

// Errors a run returns when it could not judge everything.
var (
	ErrUsage       = wire.ErrUsage
	ErrConnection  = wire.ErrConnection
	ErrInterrupted = runner.ErrInterrupted
)

// Results.
type (
	Report         = report.Report
	ScenarioResult = report.ScenarioResult
	Settings       = report.Settings
	Status         = report.Status
)

// The ranked outcomes of a scenario.
const (
	Disabled = report.Disabled
	Skipped  = report.Skipped
	Passed   = report.Passed
	Warned   = report.Warned
	Failed   = report.Failed
	Errored  = report.Errored
)

// Exit codes of the conform command.
const (
	ExitConformant = report.ExitConformant
	ExitDeviations = report.ExitDeviations
	ExitError      = report.ExitError
)

// Levels, from the tags of the contract.
const (
	LevelMust    = report.LevelMust
	LevelShould  = report.LevelShould
	LevelSandbox = report.LevelSandbox
)

// Key prefixes the spec defines (section 5).
const (
	LivePrefix = wire.LivePrefix
	TestPrefix = wire.TestPrefix
)

// RedactKey shows an API key as its type prefix and last four characters.
var RedactKey = wire.RedactKey

// Redact hides every spelling of key in text that the kit's leak detector
// recognises, as every report of the kit does.
func Redact(text, key string) string { return wire.RedactAll(text, key) }

// KeySpellings are the forms of key that the leak detector recognises and
// no report shows.
var KeySpellings = wire.Spellings

// StepDoc documents one step of the library.
type StepDoc = steps.StepDoc

// Steps documents every step pattern of the library, in catalogue order.
var Steps = steps.Steps

// BuiltinPlaceholders are the {placeholders} every scenario has.
var BuiltinPlaceholders = steps.BuiltinPlaceholders

// PlaceholderNames lists the placeholders of `should match:` documents.
var PlaceholderNames = wire.PlaceholderNames

// The OpenAPI check of --openapi; its validator lives in
// conformance/openapicheck.
type (
	Schema          = rules.Schema
	SchemaLoader    = rules.SchemaLoader
	SchemaViolation = rules.SchemaViolation
)
