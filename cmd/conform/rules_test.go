package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
)

// TestRulesNameEachRulesProofs holds `conform rules` to the kit's word: a
// rule's block lists the broken sandboxes that prove its check, and only
// those, so a reader can tell a proven check from a claimed one.
func TestRulesNameEachRulesProofs(t *testing.T) {
	res := runCLI(t, nil, "rules")
	if res.code != kit.ExitConformant {
		t.Fatalf("conform rules: exit %d\n%s", res.code, res.stderr)
	}
	rules, err := conformance.Rules()
	if err != nil {
		t.Fatal(err)
	}
	ruleLine := regexp.MustCompile(`(?m)^([A-Z]+-[0-9]+) \[`)
	printed := map[string][]string{}
	starts := ruleLine.FindAllStringSubmatchIndex(res.stdout, -1)
	for i, at := range starts {
		end := len(res.stdout)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		id := res.stdout[at[2]:at[3]]
		for line := range strings.Lines(res.stdout[at[0]:end]) {
			if name, ok := strings.CutPrefix(strings.TrimSpace(line), "proven by the broken sandbox: "); ok {
				printed[id] = append(printed[id], name)
			}
		}
	}
	proven := 0
	for _, r := range rules {
		if len(r.Proofs) > 0 {
			proven++
		}
		if diff := cmp.Diff(r.Proofs, printed[r.Rule.ID]); diff != "" {
			t.Errorf("%s: the proofs conform rules prints (-want +got):\n%s", r.Rule.ID, diff)
		}
	}
	if proven == 0 {
		t.Error("no rule has a proof: the index of proofs is empty")
	}
}
