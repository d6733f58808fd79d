// Package conformance checks a deployment of the Test-Campaign Service API
// v1, live or sandbox, against the published spec: the Gherkin suite of
// package features, its step library, the rules every response must keep,
// a model of the contract that every exchange goes through, and an
// explorer that sends seeded random sequences on the sandbox profile.
//
// Run runs the suite and returns a kit.Report; Explore runs only the explorer;
// Check validates feature files without sending a request; Rules and
// Steps document what the kit checks and the steps a feature may use.
// conformancetest.Test runs the suite under go test, one subtest per
// feature and scenario; Suite returns it as a godog.TestSuite. The kit
// knows the API only from the spec, never from the sandbox's code, so the
// two cannot share one misunderstanding. The conform command is a thin
// layer over this package.
//
// This package and conformance/kit are the kit's public surface: kit
// declares the types and words these functions take and return (Config,
// its profiles and formats, Report and its results, the errors), and
// imports nothing else of the kit, so that every part of it hands back the
// very types a caller reads. The levels of rules and scenarios are those
// of package docs, which holds docs/contract.md. The engine
// lives under conformance/internal, whose imports point one way
// (imports_test.go holds them to it):
//
//	wire        exchanges, JSON paths, timestamps, key redaction
//	coverage    the rules of docs/contract.md each check judges, tallied
//	rules       what every response must meet; rate-limit headers
//	model       the contract's model: exchanges in, disagreements out
//	transport   the one client: budget, 429s, one read, one judgement
//	receiver    the webhook receiver deliveries come to
//	steps       the step library, its per-scenario state and that state's hooks
//	plan        feature loading, tags, skips and lint
//	explore     the explorer, its shrinker and its Gherkin writer
//	runner      one run: godog, the explorer and the reports together
//	specdeploy  an independent deployment of the API for the kit's own tests,
//	            which imports nothing of the kit nor of the sandbox
//
// Beside it stand conformancetest, the go test helper, and openapicheck,
// the OpenAPI validator of kit.Config.LoadSchema, kept apart because it
// costs more to build than the rest of the kit.
package conformance
