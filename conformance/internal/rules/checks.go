package rules

import (
	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/kit"
)

// checked are the rules of docs/contract.md held on every response of a
// run, whatever scenario made it; the package's tests hold the list to the
// IDs its checks cite.
var checked = []string{"AUTH-6", "ENV-1", "ENV-2", "ENV-3", "ENV-4", "ENV-5", "ENV-6", "ENV-7", "ENV-8", "ENV-9", "ENV-11", "ERR-4", "ERR-5", "ERR-24", "RATE-14"}

// Checks declares the rules this package judges, for the kit's catalogue.
func Checks() []kit.Check {
	return coverage.Declare(coverage.ByResponse, "held on every response of the run, whatever scenario asked", checked...)
}
