package coverage

import (
	"slices"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

func outcomeOf(t *testing.T, outs []kit.Outcome, id string) kit.Outcome {
	t.Helper()
	i := slices.IndexFunc(outs, func(o kit.Outcome) bool { return o.Rule.ID == id })
	if i < 0 {
		t.Fatalf("no outcome for %s", id)
	}
	return outs[i]
}

func TestRecorderEndsEveryRuleInOneState(t *testing.T) {
	r := NewRecorder(true, nil)
	r.Judged("ENV-1", "ENV-2")
	r.Judged("ENV-1")
	r.Broke("ENV-3")
	r.NotApplicable("DLV-8", "the receiver is off (--webhook-listen off)")
	r.Unreached("CLK-8", "the deployment does not offer GET /_sandbox/clock")
	outs := r.Outcomes()
	for _, tc := range []struct {
		id        string
		state     kit.RuleState
		exchanges int
		reason    string
	}{
		{"ENV-1", kit.Checked, 2, ""},
		{"ENV-2", kit.Checked, 1, ""},
		{"ENV-3", kit.Checked, 1, ""},
		{"DLV-8", kit.NotApplicable, 0, "the receiver is off (--webhook-listen off)"},
		{"CLK-8", kit.NotExercised, 0, "the deployment does not offer GET /_sandbox/clock"},
		{"ENV-4", kit.NotExercised, 0, ""},
	} {
		o := outcomeOf(t, outs, tc.id)
		if o.State != tc.state || o.Exchanges != tc.exchanges || o.Reason != tc.reason {
			t.Errorf("%s: got %v, %d exchanges, reason %q; want %v, %d, %q", tc.id, o.State, o.Exchanges, o.Reason, tc.state, tc.exchanges, tc.reason)
		}
	}
	if o := outcomeOf(t, outs, "ENV-3"); o.Broken != 1 {
		t.Errorf("ENV-3 broken %d times, want 1", o.Broken)
	}
}

func TestSandboxRulesDoNotApplyOutsideTheSandboxProfile(t *testing.T) {
	r := NewRecorder(false, nil)
	r.Judged("ENV-1")
	outs := r.Outcomes()
	if o := outcomeOf(t, outs, "ENV-10"); o.State != kit.NotApplicable || o.Reason == "" {
		t.Errorf("ENV-10 (a sandbox rule) under --profile spec: %v %q, want not applicable with the profile as reason", o.State, o.Reason)
	}
	if o := outcomeOf(t, outs, "ENV-4"); o.State != kit.NotExercised {
		t.Errorf("ENV-4 (a must rule) under --profile spec: %v, want not exercised", o.State)
	}
}

func TestANilRecorderRecordsNothing(t *testing.T) {
	var r *Recorder
	r.Judged("ENV-1")
	r.Broke("ENV-1")
	r.NotApplicable("ENV-1", "x")
	if r.Count("ENV-1") != 0 {
		t.Error("a nil recorder counted")
	}
}

func TestDeclareRefusesAnIDTheCatalogueDoesNotHave(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Declare accepted ENV-999")
		}
	}()
	Declare(ByModel, "nothing", "ENV-999")
}

func TestReasonsNameRulesOfTheCatalogue(t *testing.T) {
	for name, m := range map[string]map[string]string{"beyondTheWire": beyondTheWire, "needsConfiguration": needsConfiguration, "notInDefaultRun": notInDefaultRun} {
		for id, why := range m {
			if _, ok := docs.Lookup(id); !ok {
				t.Errorf("%s names %s, which docs/contract.md does not have", name, id)
			}
			if why == "" {
				t.Errorf("%s gives %s no reason", name, id)
			}
		}
	}
	for id := range beyondTheWire {
		if _, ok := needsConfiguration[id]; ok {
			t.Errorf("%s is both beyond the wire and in need of a configuration", id)
		}
	}
}
