// Package conformancetest runs the conformance suite under `go test`, one
// subtest per feature and scenario.
package conformancetest

import (
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
)

// Test runs the suite under `go test`: one subtest per feature, and in it
// one per scenario, so that `go test -run 'TestConformance/Bugs/'` narrows
// the run and each scenario passes or fails on its own line. A selection
// that runs nothing, an unknown tag or an authoring mistake fails t before
// any request. adjust, if set, may change godog's options of each
// feature's suite (its format, randomisation…) after the kit's.
func Test(t *testing.T, cfg kit.Config, adjust func(*godog.Options)) {
	t.Helper()
	suites, flush, err := conformance.FeatureSuites(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer flush()
	for _, f := range suites {
		t.Run(f.Feature, func(t *testing.T) {
			suite := f.Suite(t.Context())
			suite.Options.TestingT = t
			if adjust != nil {
				adjust(suite.Options)
			}
			suite.Run()
		})
	}
}
