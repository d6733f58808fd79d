package conformance_test

import (
	"testing"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/internal/coverage"
)

// TestEveryRuleHasACheckOrAReason keeps the kit's completeness visible as
// the contract grows: a rule added to docs/contract.md fails this test
// until the kit checks it or says why it cannot.
func TestEveryRuleHasACheckOrAReason(t *testing.T) {
	rules, err := conformance.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("no rules")
	}
	for _, r := range rules {
		if len(r.Checks) == 0 && r.Reason == "" {
			t.Errorf("%s has no check in the kit and no stated reason (declare its check, cite it from a scenario, or give it a reason in conformance/internal/coverage/reasons.go)", r.Rule.ID)
		}
	}
}

// TestNoRuleIsSaidToLackACheckItHas keeps the reasons honest the other way:
// a rule the kit has come to check leaves the list of those it does not.
func TestNoRuleIsSaidToLackACheckItHas(t *testing.T) {
	rules, err := conformance.Rules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if why, ok := coverage.NotInDefaultRun(r.Rule.ID); ok && why == coverage.NoCheckYet && len(r.Checks) > 0 {
			t.Errorf("%s is said to have no check, but %s: take it off the list in conformance/internal/coverage/reasons.go", r.Rule.ID, r.Checks[0].How)
		}
	}
}
