package runner

import (
	"context"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// FeatureSuites prepares a run as Suite does, and returns one suite per
// feature file that has a scenario to run, in the order of the files. The
// suites share one redacting writer on cfg.Output: flush writes what it
// still holds once the last suite ran.
func FeatureSuites(ctx context.Context, cfg kit.Config) (suites []kit.FeatureSuite, flush func() error, err error) {
	cfg, err = withDefaults(cfg)
	if err != nil {
		return nil, nil, err
	}
	r, err := prepare(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	out := wire.NewRedactingWriter(r.cfg.Output, r.cfg.APIKey)
	names, runs := map[string]string{}, map[string]bool{}
	for _, p := range r.planned {
		if _, named := names[p.URI]; !named {
			names[p.URI] = p.Feature
		}
		if p.Selected && p.Skip == "" {
			runs[p.URI] = true
		}
	}
	for _, f := range r.files {
		if !runs[f.URI] {
			continue
		}
		name, named := names[f.URI]
		if !named {
			name = f.URI
		}
		suites = append(suites, kit.FeatureSuite{
			Feature: name,
			Suite:   func(ctx context.Context) godog.TestSuite { return r.featureSuite(ctx, out, f) },
		})
	}
	return suites, out.Flush, nil
}
