package conformance

import (
	"testing"

	"github.com/cucumber/godog"
)

// Test runs the suite under `go test`: one subtest per feature, and in it
// one per scenario, so that `go test -run 'TestConformance/Bugs/'` narrows
// the run and each scenario passes or fails on its own line. A selection
// that runs nothing, an unknown tag or an authoring mistake fails t before
// any request. adjust, if set, may change godog's options of each
// feature's suite (its format, randomisation…) after the kit's.
func Test(t *testing.T, cfg Config, adjust func(*godog.Options)) {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r, err := prepare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := newRedactingWriter(r.cfg.Output, r.cfg.APIKey)
	defer out.Flush()
	runs := map[string]bool{}
	for _, p := range r.planned {
		if p.selected && p.skip == "" {
			runs[p.uri] = true
		}
	}
	for _, f := range r.files {
		if !runs[f.uri] {
			continue
		}
		name := f.uri
		for _, p := range r.planned {
			if p.uri == f.uri {
				name = p.feature
				break
			}
		}
		t.Run(name, func(t *testing.T) {
			suite := r.suite(t.Context(), out)
			defer indexRecorders.Delete(suite.Name)
			suite.Options.FeatureContents = []godog.Feature{{Name: f.uri, Contents: godogContent(f)}}
			suite.Options.TestingT = t
			if adjust != nil {
				adjust(suite.Options)
			}
			suite.Run()
		})
	}
}
