package runner

import (
	"context"

	"github.com/cucumber/godog"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// FeatureSuite is one feature file of a run as its own godog suite, for go
// test's subtest per feature.
type FeatureSuite struct {
	// Feature is the feature's name, the name of its subtest.
	Feature string
	// Suite builds the feature's suite; ctx bounds its scenarios.
	Suite func(ctx context.Context) godog.TestSuite
}

// FeatureSuites prepares a run as Suite does, and returns one suite per
// feature file that has a scenario to run, in the order of the files. The
// suites share one redacting writer on cfg.Output: flush writes what it
// still holds once the last suite ran.
func FeatureSuites(ctx context.Context, cfg Config) (suites []FeatureSuite, flush func() error, err error) {
	cfg, err = cfg.WithDefaults()
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
		suites = append(suites, FeatureSuite{
			Feature: name,
			Suite:   func(ctx context.Context) godog.TestSuite { return r.featureSuite(ctx, out, f) },
		})
	}
	return suites, out.Flush, nil
}
