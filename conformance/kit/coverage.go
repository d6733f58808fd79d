package kit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/testcampaign/kit/docs"
)

// RuleState is how a run ended for one rule of docs/contract.md.
type RuleState int

const (
	// NotExercised: nothing in the run reached the rule. This is lost
	// coverage unless Reason says why (the deployment does not offer what
	// the rule is about, a scenario was skipped).
	NotExercised RuleState = iota
	// NotApplicable: the rule does not hold for this run, for the reason
	// given: the profile, the run's configuration, or a rule that no
	// exchange can show.
	NotApplicable
	// Checked: at least one exchange was judged against the rule.
	Checked
)

func (s RuleState) String() string {
	switch s {
	case Checked:
		return "checked"
	case NotApplicable:
		return "not applicable"
	}
	return "not exercised"
}

// Outcome is one rule of docs/contract.md at the end of a run, as
// Report.Coverage lists them.
type Outcome struct {
	Rule  docs.Rule
	State RuleState
	// Exchanges is how many exchanges were judged against the rule.
	Exchanges int
	// Broken is how many of them broke it.
	Broken int
	// Reason says why the rule was not applicable or not exercised.
	Reason string
	// Proofs name the broken sandboxes that prove the rule's check: each
	// breaks the rule alone and fails a default run.
	Proofs []string
}

// Summary is the outcome in a few words: "checked (12 exchanges)",
// "not applicable: profile: …", "not exercised".
func (o Outcome) Summary() string {
	s := o.State.String()
	switch {
	case o.State == Checked && o.Broken > 0:
		s += fmt.Sprintf(" (%d exchanges, %d broke it)", o.Exchanges, o.Broken)
	case o.State == Checked:
		s += fmt.Sprintf(" (%d exchanges)", o.Exchanges)
	case o.Reason != "":
		s += ": " + o.Reason
	}
	return s
}

// totals counts outcomes by state.
func totals(outcomes []Outcome) (checked, notExercised, notApplicable int) {
	for _, o := range outcomes {
		switch o.State {
		case Checked:
			checked++
		case NotApplicable:
			notApplicable++
		default:
			notExercised++
		}
	}
	return
}

// Check is one way the kit judges a rule, as `conform rules` lists it.
type Check struct {
	Rule string // the rule's ID, as docs/contract.md gives it
	// By is the part of the kit that judges it: "every response" (the
	// rules every response is held to), "model" (the contract's model,
	// fed every exchange) or "feature" (a scenario citing the rule by a
	// tag such as @AUTH-3).
	By  string
	How string // what it does, in a sentence
}

// Citations returns the rule IDs of docs/contract.md among tags, such as "@AUTH-3" or
// "AUTH-3", in order and without repeats; other tags are left out.
func Citations(tags []string) []string {
	var out []string
	for _, t := range tags {
		id := strings.TrimPrefix(t, "@")
		if _, ok := docs.Lookup(id); ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
