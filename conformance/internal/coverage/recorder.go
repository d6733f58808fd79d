package coverage

import (
	"sync"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

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
func (r *Recorder) Outcomes() []kit.Outcome {
	rules := docs.Rules()
	out := make([]kit.Outcome, 0, len(rules))
	if r == nil {
		r = NewRecorder(true, nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rule := range rules {
		o := kit.Outcome{Rule: rule, Exchanges: max(r.judged[rule.ID], r.broken[rule.ID]), Broken: r.broken[rule.ID], Proofs: Proofs(rule.ID)}
		switch {
		case o.Exchanges > 0:
			o.State = kit.Checked
		case rule.Level == docs.Sandbox && !r.sandbox:
			o.State, o.Reason = kit.NotApplicable, "profile: a sandbox rule, checked only with --profile sandbox"
		case r.na[rule.ID] != "":
			o.State, o.Reason = kit.NotApplicable, r.na[rule.ID]
		default:
			if why, ok := BeyondTheWire(rule.ID); ok {
				o.State, o.Reason = kit.NotApplicable, "not observable over the wire: "+why
			} else if why, ok := NeedsConfiguration(rule.ID); ok && r.unmet[rule.ID] == "" {
				o.State, o.Reason = kit.NotApplicable, "configuration: "+why
			} else if why, ok := NotInDefaultRun(rule.ID); ok && r.unmet[rule.ID] == "" {
				o.Reason = why
			} else {
				o.Reason = r.unmet[rule.ID]
			}
			if o.State == kit.NotExercised && o.Reason == "" && len(r.checks.Of(rule.ID)) > 0 {
				o.Reason = untouched
			}
		}
		out = append(out, o)
	}
	return out
}
