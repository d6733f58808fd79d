// Package conformancetest runs the conformance suite under `go test`, one
// subtest per feature and scenario.
package conformancetest

import (
	"testing"

	"github.com/cucumber/godog"
	"github.com/testcampaign/kit/conformance/runner"
	"github.com/testcampaign/kit/conformance/wire"
)

// Test runs the suite under `go test`: one subtest per feature, and in it
// one per scenario, so that `go test -run 'TestConformance/Bugs/'` narrows
// the run and each scenario passes or fails on its own line. A selection
// that runs nothing, an unknown tag or an authoring mistake fails t before
// any request. adjust, if set, may change godog's options of each
// feature's suite (its format, randomisation…) after the kit's.
func Test(t *testing.T, cfg runner.Config, adjust func(*godog.Options)) {
	t.Helper()
	cfg, err := cfg.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Prepare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := wire.NewRedactingWriter(r.Cfg.Output, r.Cfg.APIKey)
	defer out.Flush()
	runs := map[string]bool{}
	for _, p := range r.Planned {
		if p.Selected && p.Skip == "" {
			runs[p.URI] = true
		}
	}
	for _, f := range r.Files {
		if !runs[f.URI] {
			continue
		}
		name := f.URI
		for _, p := range r.Planned {
			if p.URI == f.URI {
				name = p.Feature
				break
			}
		}
		t.Run(name, func(t *testing.T) {
			suite := r.FeatureSuite(t.Context(), out, f)
			suite.Options.TestingT = t
			if adjust != nil {
				adjust(suite.Options)
			}
			suite.Run()
		})
	}
}
