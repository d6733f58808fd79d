package coverage

import (
	"fmt"
	"sync"

	"github.com/testcampaign/kit/docs"
)

// State is how a run ended for one rule.
type State int

const (
	// NotExercised: nothing in the run reached the rule. This is lost
	// coverage unless Reason says why (the deployment does not offer what
	// the rule is about, a scenario was skipped).
	NotExercised State = iota
	// NotApplicable: the rule does not hold for this run, for the reason
	// given: the profile, the run's configuration, or a rule that no
	// exchange can show.
	NotApplicable
	// Checked: at least one exchange was judged against the rule.
	Checked
)

func (s State) String() string {
	switch s {
	case Checked:
		return "checked"
	case NotApplicable:
		return "not applicable"
	}
	return "not exercised"
}

// Outcome is one rule at the end of a run.
type Outcome struct {
	Rule  docs.Rule
	State State
	// Exchanges is how many exchanges were judged against the rule.
	Exchanges int
	// Broken is how many of them broke it.
	Broken int
	// Reason says why the rule was not applicable or not exercised.
	Reason string
	// Proofs name the broken sandboxes that prove the rule's check: each
	// breaks the rule alone and fails a default run (Proofs).
	Proofs []string
}

// Recorder counts, per rule, the exchanges a run judged against it. One
// recorder serves a whole run; it is safe for concurrent use, and a nil
// Recorder records nothing, so a check need not ask whether coverage is
// kept.
type Recorder struct {
	mu      sync.Mutex
	judged  map[string]int
	broken  map[string]int
	na      map[string]string
	unmet   map[string]string
	sandbox bool
	checks  Catalogue
}

// NewRecorder starts the coverage of a run; sandbox says whether the run's
// profile is the sandbox's, outside which sandbox rules do not apply, and
// checks are the kit's, which tell a rule nothing reached from one nothing
// checks.
func NewRecorder(sandbox bool, checks Catalogue) *Recorder {
	return &Recorder{judged: map[string]int{}, broken: map[string]int{}, na: map[string]string{}, unmet: map[string]string{}, sandbox: sandbox, checks: checks}
}

// Judged records that the rules were judged on one exchange, whether it
// held or not.
func (r *Recorder) Judged(ids ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.judged[id]++
	}
}

// Scenario records that a scenario citing the rules reached a verdict over
// the given number of exchanges, each judged against every rule it cites.
func (r *Recorder) Scenario(ids []string, exchanges int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.judged[id] += max(exchanges, 1)
	}
}

// Broke records that an exchange broke the rule. The exchange counts as
// judged against the rule even if Judged was not called for it.
func (r *Recorder) Broke(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.broken[id]++
}

// NotApplicable records that the rule does not hold for this run, and
// why: "--webhook-listen off", "a live key without --allow-writes".
func (r *Recorder) NotApplicable(id, reason string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.na[id]; !ok {
		r.na[id] = reason
	}
}

// Unreached records why the run could not reach a rule it should have:
// the deployment does not offer the control the rule is about, or the
// scenario that judges it was skipped. The rule stays not exercised, with
// the reason.
func (r *Recorder) Unreached(id, reason string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.unmet[id]; !ok {
		r.unmet[id] = reason
	}
}

// Count is how many exchanges were judged against the rule so far.
func (r *Recorder) Count(id string) int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.judged[id], r.broken[id])
}

// Outcomes returns every rule of the catalogue, in its order, with how the
// run ended for it. A rule judged at least once is checked, whatever else
// was recorded of it.
func (r *Recorder) Outcomes() []Outcome {
	rules := docs.Rules()
	out := make([]Outcome, 0, len(rules))
	if r == nil {
		r = NewRecorder(true, nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rule := range rules {
		o := Outcome{Rule: rule, Exchanges: max(r.judged[rule.ID], r.broken[rule.ID]), Broken: r.broken[rule.ID], Proofs: Proofs(rule.ID)}
		switch {
		case o.Exchanges > 0:
			o.State = Checked
		case rule.Level == docs.Sandbox && !r.sandbox:
			o.State, o.Reason = NotApplicable, "profile: a sandbox rule, checked only with --profile sandbox"
		case r.na[rule.ID] != "":
			o.State, o.Reason = NotApplicable, r.na[rule.ID]
		default:
			if why, ok := BeyondTheWire(rule.ID); ok {
				o.State, o.Reason = NotApplicable, "not observable over the wire: "+why
			} else if why, ok := NeedsConfiguration(rule.ID); ok && r.unmet[rule.ID] == "" {
				o.State, o.Reason = NotApplicable, "configuration: "+why
			} else if why, ok := NotInDefaultRun(rule.ID); ok && r.unmet[rule.ID] == "" {
				o.Reason = why
			} else {
				o.Reason = r.unmet[rule.ID]
			}
			if o.State == NotExercised && o.Reason == "" && len(r.checks.Of(rule.ID)) > 0 {
				o.Reason = untouched
			}
		}
		out = append(out, o)
	}
	return out
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

// Totals counts outcomes by state.
func Totals(outcomes []Outcome) (checked, notExercised, notApplicable int) {
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
