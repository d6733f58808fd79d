package runner

import (
	"fmt"

	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// Check validates feature files without sending a request: every step must
// match exactly one step of the library, and every {placeholder} and
// "<placeholder>" must be known where it is used. It returns one line per
// problem, each naming the file and line.
func Check(cfg kit.Config) ([]string, error) {
	if cfg.NoBuiltin && len(cfg.FeatureDirs) == 0 {
		return nil, fmt.Errorf("%w: nothing to check", kit.ErrUsage)
	}
	files, err := plan.LoadFeatures(planOptions(cfg))
	if err != nil {
		return nil, err
	}
	return append(plan.Lint(files), plan.UnmatchedLines(files)...), nil
}

// CitedRules says, for each feature file cfg selects, which rules of
// docs/contract.md its scenarios cite by tag: what a run's coverage counts
// as exercised by them beside what the model judges of every exchange.
func CitedRules(cfg kit.Config) ([]kit.CitedFile, error) {
	if cfg.NoBuiltin && len(cfg.FeatureDirs) == 0 {
		return nil, fmt.Errorf("%w: nothing to check", kit.ErrUsage)
	}
	opts := planOptions(cfg)
	files, err := plan.LoadFeatures(opts)
	if err != nil {
		return nil, err
	}
	planned, err := plan.Plan(opts, files, plan.RunEnv{})
	if err != nil {
		return nil, err
	}
	var out []kit.CitedFile
	// By index, not pointer: out grows, and moves, as files are found.
	byURI := map[string]int{}
	cited := map[string]map[string]bool{}
	for _, p := range planned {
		i, ok := byURI[p.URI]
		if !ok {
			i = len(out)
			out = append(out, kit.CitedFile{URI: p.URI})
			byURI[p.URI] = i
			cited[p.URI] = map[string]bool{}
		}
		f := &out[i]
		f.Scenarios++
		ids := kit.Citations(p.Tags)
		if len(ids) > 0 {
			f.Citing++
		}
		for _, id := range ids {
			cited[p.URI][id] = true
		}
	}
	for i := range out {
		for _, r := range docs.Rules() {
			if cited[out[i].URI][r.ID] {
				out[i].Rules = append(out[i].Rules, r.ID)
			}
		}
	}
	return out, nil
}
