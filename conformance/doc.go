// Package conformance checks a deployment of the Test-Campaign Service API
// v1, live or sandbox, against the published spec: the Gherkin suite of
// package features, its step library, the rules every response must keep,
// a model of the contract that every exchange goes through, and an
// explorer that sends seeded random sequences on the sandbox profile.
//
// Run runs the suite and returns a Report; Test runs it under go test, one
// subtest per feature and scenario; Suite returns it as a godog.TestSuite.
// It knows the API only from the spec, never from the sandbox's code, so
// the two cannot share one misunderstanding. The conform command is a thin
// layer over it.
package conformance
