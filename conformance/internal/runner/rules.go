package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// Rules returns the catalogue with how the kit checks each rule: the
// checks its packages declare, and the built-in scenarios that cite the
// rule by tag.
func Rules() ([]kit.RuleChecks, error) {
	files, err := plan.LoadFeatures(plan.PlanOptions{Profile: kit.ProfileSandbox})
	if err != nil {
		return nil, err
	}
	planned, err := plan.Plan(plan.PlanOptions{Profile: kit.ProfileSandbox}, files, plan.RunEnv{})
	if err != nil {
		return nil, err
	}
	scenarios := map[string][]string{}
	for _, p := range planned {
		for _, id := range kit.Citations(p.Tags) {
			scenarios[id] = append(scenarios[id], p.URI)
		}
	}
	checks := catalogue()
	var out []kit.RuleChecks
	for _, r := range docs.Rules() {
		rc := kit.RuleChecks{Rule: r, Checks: checks.Of(r.ID), Proofs: coverage.Proofs(r.ID)}
		if uris := scenarios[r.ID]; len(uris) > 0 {
			rc.Checks = append(rc.Checks, kit.Check{Rule: r.ID, By: coverage.ByFeature, How: citedBy(uris)})
		}
		switch why, beyond := coverage.BeyondTheWire(r.ID); {
		case beyond:
			rc.Reason = "not observable over the wire: " + why
		case len(rc.Checks) > 0:
		default:
			if why, ok := coverage.NeedsConfiguration(r.ID); ok {
				rc.Reason = "needs " + why
			} else if why, ok := coverage.NotInDefaultRun(r.ID); ok {
				rc.Reason = "not in a default run: " + why
			}
		}
		out = append(out, rc)
	}
	return out, nil
}

// catalogue gathers the checks the kit's judging packages declare: the
// rules of every response, then the model's.
func catalogue() coverage.Catalogue {
	return slices.Concat(rules.Checks(), model.Checks())
}

// citedBy says which built-in scenarios cite a rule: how many, in which
// files.
func citedBy(uris []string) string {
	var files []string
	for _, u := range uris {
		if !slices.Contains(files, u) {
			files = append(files, u)
		}
	}
	return fmt.Sprintf("%d scenario(s) of %s", len(uris), strings.Join(files, ", "))
}
