// Package coverage ties the kit's checks to the rules of docs/contract.md.
// Every part of the kit that judges a rule declares the check once, by the
// rule's ID, and the runner gathers the declarations into a Catalogue, so
// that `conform rules` can say how each rule is checked; a
// run's Recorder counts the exchanges judged against each rule, so that
// every report can say which rules a run checked, which it never reached,
// and which do not apply to it and why.
package coverage

import (
	"fmt"
	"slices"
	"sort"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// Parts of the kit that judge rules, as `conform rules` names them.
const (
	// ByResponse: the rules every response is held to, checked on every
	// exchange of the run.
	ByResponse = "every response"
	// ByModel: the model of the contract, fed every exchange of the run.
	ByModel = "model"
	// ByFeature: a scenario of a feature, which cites the rule by a tag
	// such as @AUTH-3.
	ByFeature = "feature"
)

// Declare is how a part of the kit (by) judges the rules with the given
// IDs; each package that judges rules declares them once, in a function
// the runner calls to build the Catalogue, and its tests hold the
// declaration to the IDs its checks cite. It panics on an ID the catalogue
// of docs/contract.md does not have, so that a typo fails every test of
// the package that made it.
func Declare(by, how string, ids ...string) []kit.Check {
	out := make([]kit.Check, 0, len(ids))
	for _, id := range ids {
		mustExist(id)
		out = append(out, kit.Check{Rule: id, By: by, How: how})
	}
	return out
}

// Catalogue is every check the kit's parts declare.
type Catalogue []kit.Check

func mustExist(id string) {
	if _, ok := docs.Lookup(id); !ok {
		panic(fmt.Sprintf("coverage: rule %s is not in docs/contract.md", id))
	}
}

// Of returns the checks of the rule, or of every rule when id is empty,
// in the order of docs/contract.md.
func (c Catalogue) Of(id string) []kit.Check {
	var out []kit.Check
	for _, ch := range c {
		if id == "" || ch.Rule == id {
			out = append(out, ch)
		}
	}
	order := catalogueOrder()
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Rule] < order[out[j].Rule] })
	return out
}

// BeyondTheWire returns the reason no run can judge the rule, if it has
// one.
func BeyondTheWire(id string) (string, bool) {
	r, ok := beyondTheWire[id]
	return r, ok
}

// NeedsConfiguration returns the sandbox configuration the rule needs to
// show, if the default one cannot.
func NeedsConfiguration(id string) (string, bool) {
	r, ok := needsConfiguration[id]
	return r, ok
}

func catalogueOrder() map[string]int {
	order := map[string]int{}
	for i, r := range docs.Rules() {
		order[r.ID] = i
	}
	return order
}

// RuleIDs are the IDs of every rule of docs/contract.md, the API's and the
// clients', in the contract's order: what a tag may cite.
func RuleIDs() []string {
	var ids []string
	for _, r := range slices.Concat(docs.Rules(), docs.ClientRules()) {
		ids = append(ids, r.ID)
	}
	return ids
}
