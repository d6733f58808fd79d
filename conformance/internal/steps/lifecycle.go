package steps

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// TagExhaustive marks a scenario that spends a whole rate-limit window of
// the key: it runs alone.
const TagExhaustive = "@exhaustive"

// Place is where a step is written: its file, its line and its keyword as
// written there.
type Place struct {
	URI, Keyword string
	Line         int
}

func (p Place) String() string { return fmt.Sprintf("%s:%d", p.URI, p.Line) }

// Run is what the scenarios of one run share, and what the run wants
// told of each.
type Run struct {
	Target *transport.Target
	// Receiver is the webhook receiver, nil when none runs.
	Receiver *receiver.Receiver
	// Strict makes a @should rule fail its step at once, as it fails the
	// run.
	Strict bool
	// Locate makes every failure name the file and line of its step, for
	// go test, whose output otherwise names only godog's own source.
	Locate bool
	// Places says where each step of a pickle is written, by pickle step
	// ID; a step it leaves out is placed by its file only.
	Places func(*godog.Scenario) map[string]Place
	// Ended receives each scenario's result as it ends, nil for one the
	// end of the run's context cut short, which has no verdict. It may be
	// called from several scenarios at once.
	Ended func(*godog.Scenario, *kit.ScenarioResult)
	// Disagreed receives, before Ended, a failed scenario that the model
	// disagreed with: the disagreement and every exchange the scenario
	// sent, in order, from which the run may build a reproduction. Nil
	// when the run wants none; it may be called from several scenarios
	// at once.
	Disagreed func(p *godog.Scenario, v rules.RuleViolation, sent []*wire.Exchange)
}

// Initializer is the godog ScenarioInitializer of a run: it binds the
// library to a state of the scenario's own, and registers the hooks that
// start it, place and judge each step, and hand its result to run.Ended.
// @exhaustive scenarios hold the window lock exclusively, so no other
// scenario's requests are counted in, or refused because of, the window
// they spend.
//
// A step whose own check held can still have sent an exchange that breaks
// a rule of every response or disagrees with the model: the step fails
// then, with the rule's message, in godog's output as in every report.
// With run.Strict, a @should rule fails the run, so it too fails its step
// at once.
func (l *Library) Initializer(run Run) func(*godog.ScenarioContext) {
	var window sync.RWMutex
	return func(sc *godog.ScenarioContext) {
		s := newScenarioState(run.Target, run.Receiver)
		l.bind(sc, s)
		sr := &scenarioRun{run: run, s: s, failed: -1}
		sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
			if ctx.Err() != nil {
				run.Ended(p, nil)
				return ctx, godog.ErrSkip
			}
			sr.start(p)
			if sr.exclusive {
				window.Lock()
			} else {
				window.RLock()
			}
			return ctx, nil
		})
		sc.StepContext().Before(func(ctx context.Context, st *godog.Step) (context.Context, error) {
			sr.stepStarted(st)
			return ctx, nil
		})
		sc.StepContext().After(func(ctx context.Context, st *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
			return ctx, sr.stepEnded(st, status, err)
		})
		sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
			if !sr.started {
				return ctx, nil
			}
			if sr.exclusive {
				window.Unlock()
			} else {
				window.RUnlock()
			}
			run.Ended(p, sr.ended(ctx, p, err))
			return ctx, nil
		})
	}
}

// scenarioRun is the bookkeeping of one scenario beside its state: when it
// started, its steps as they ran, the first step that failed, the
// exchange at fault.
type scenarioRun struct {
	run       Run
	s         *scenarioState
	started   bool
	begun     time.Time
	exclusive bool
	lastStep  string // the pickle step id of the scenario's last step
	// places are where the pickle's steps are written, by pickle step id.
	places    map[string]Place
	step      Place
	stepStart time.Time
	steps     []kit.StepResult
	failed    int // the index in steps of the first step that failed, -1 if none
	fault     *wire.Exchange
	violation *rules.RuleViolation
	// ownFailed is set when the step that failed failed its own check too,
	// so that the rule grades the scenario only when it is @must.
	ownFailed bool
}

func (sr *scenarioRun) start(p *godog.Scenario) {
	sr.started, sr.begun = true, time.Now()
	if n := len(p.Steps); n > 0 {
		sr.lastStep = p.Steps[n-1].Id
	}
	sr.places = sr.run.Places(p)
	for _, st := range p.Steps {
		if _, ok := sr.places[st.Id]; !ok {
			sr.places[st.Id] = Place{URI: p.Uri}
		}
	}
	for _, tg := range p.Tags {
		sr.exclusive = sr.exclusive || tg.Name == TagExhaustive
	}
	sr.s.sink.Unbudgeted = sr.exclusive
}

func (sr *scenarioRun) stepStarted(st *godog.Step) {
	sr.step, sr.stepStart = sr.places[st.Id], time.Now()
	sr.s.sink.At(sr.step.String())
}

// stepEnded records the step st as it ended, with status and its own error
// err, and returns what the library adds to godog's verdict on it: the
// rule its exchanges broke and, with Locate, its file and line.
func (sr *scenarioRun) stepEnded(st *godog.Step, status godog.StepResultStatus, err error) error {
	s := sr.s
	res := kit.StepResult{Keyword: sr.step.Keyword, Text: st.Text, Line: sr.step.Line,
		Status: stepStatus[status], Duration: time.Since(sr.stepStart)}
	var added error
	if status == godog.StepPassed || status == godog.StepFailed {
		v, broke := sr.ruleBroken(st.Id == sr.lastStep)
		if v != nil {
			sr.violation, sr.ownFailed, added = v, status == godog.StepFailed, broke
			res.Status = stepStatus[godog.StepFailed]
		}
	}
	if sr.run.Locate && res.Status == stepStatus[godog.StepFailed] {
		if added != nil {
			added = fmt.Errorf("%s: %w", sr.step, added)
		} else {
			added = fmt.Errorf("%s: %s%s", sr.step, sr.step.Keyword, st.Text)
		}
	}
	// godog joins a hook's error before the step's own.
	switch {
	case added != nil && err != nil:
		res.Error = s.redact(fmt.Sprintf("%v, %v", added, err))
	case added != nil:
		res.Error = s.redact(added.Error())
	case err != nil && status != godog.StepSkipped:
		res.Error = s.redact(err.Error())
	}
	sr.steps = append(sr.steps, res)
	if sr.failed < 0 && res.Status != stepStatus[godog.StepPassed] && res.Status != stepStatus[godog.StepSkipped] {
		sr.failed = len(sr.steps) - 1
		// A request that got no connection made no exchange: the last one
		// is an earlier step's, which is not at fault.
		if !errors.Is(err, kit.ErrConnection) {
			sr.fault = s.last()
		}
		if v := sr.violation; v != nil && v.Exchange != nil {
			sr.fault = v.Exchange
		}
	}
	return added
}

// describe names the step at where (file:line) with its text, as it ran.
func (sr *scenarioRun) describe(where string) string {
	for _, st := range sr.steps {
		if fmt.Sprintf("%s:%d", sr.step.URI, st.Line) == where {
			return where + " (" + st.Keyword + st.Text + ")"
		}
	}
	return where
}

// ruleBroken is the rule, if any, that fails the step now ending, and how
// the failure says so. A step fails for what its own exchanges broke. A
// @should rule under a run that only warns of them waits instead for the
// scenario's last step, which then names the step that sent the exchange:
// failing at once would skip the checks after it and turn a failure they
// might find into a warning.
func (sr *scenarioRun) ruleBroken(last bool) (*rules.RuleViolation, error) {
	sink := sr.s.sink
	if v, ok := sink.BrokenAt(sr.step.String()); ok && (v.Level != docs.Should || sr.run.Strict || last) {
		return &v, fmt.Errorf("%s: %s (answer to %s)", v.Rule, v.Message, v.Request)
	}
	if !last {
		return nil, nil
	}
	if v, ok := sink.First(); ok {
		return &v, fmt.Errorf("%s: %s (answer to %s, sent by the step at %s)", v.Rule, v.Message, v.Request, sr.describe(v.Where))
	}
	return nil, nil
}

// ended closes the scenario and returns its result, nil when the run's
// context ended under it. godog keeps every scenario's steps, and so their
// state, to the end of the run: what the report needs is taken here, and
// the answers themselves (up to 1 MiB each) are let go.
func (sr *scenarioRun) ended(ctx context.Context, p *godog.Scenario, err error) *kit.ScenarioResult {
	s := sr.s
	s.close()
	defer s.forget()
	if ctx.Err() != nil {
		// Interrupted: whatever the steps said was cut short, not a
		// verdict on the deployment.
		return nil
	}
	var tags []string
	for _, tg := range p.Tags {
		tags = append(tags, tg.Name)
	}
	cited := kit.Citations(tags)
	res := &kit.ScenarioResult{Duration: time.Since(sr.begun), Steps: sr.steps}
	if s.skip != "" {
		for _, id := range cited {
			s.t.Coverage.Unreached(id, "its scenario was skipped: "+s.skip)
		}
		res.Status, res.SkipReason = kit.Skipped, s.skip
		return res
	}
	switch v := sr.violation; {
	case v == nil:
	case !sr.ownFailed:
		res.Rule, res.RuleLevel, res.Area = v.Rule, v.Level, v.Area
	case v.Level == docs.Must:
		// A rule of every response is graded at its own level, whichever
		// scenario saw the answer, even when the step that sent it failed
		// its own check too.
		res.Rule, res.RuleLevel = v.Rule, v.Level
	}
	res.Status = statusOf(err)
	if res.Status == kit.Passed || res.Status == kit.Failed {
		s.t.Coverage.Scenario(cited, s.sent())
	}
	if err != nil && res.Status != kit.Skipped {
		if sr.failed >= 0 {
			f := sr.steps[sr.failed]
			res.FailedStep, res.FailedLine = f.Text, f.Line
		}
		res.Message = s.redact(err.Error())
		if e := sr.fault; e != nil {
			res.Request, res.Response = s.requestLine(e), s.responseLine(e)
		}
		res.Exchanges = s.transcript()
	}
	if v := sr.violation; v != nil && v.Area == model.RuleModel && res.Status == kit.Failed && sr.run.Disagreed != nil {
		sr.run.Disagreed(p, *v, s.history)
	}
	return res
}

// stepStatus is godog's word for a step's outcome, as cucumber has it.
var stepStatus = map[godog.StepResultStatus]string{
	godog.StepPassed: "passed", godog.StepFailed: "failed", godog.StepSkipped: "skipped",
	godog.StepUndefined: "undefined", godog.StepPending: "pending", godog.StepAmbiguous: "ambiguous",
}

// statusOf ranks a scenario's error: the kit's own trouble (undefined steps,
// misuse, no connection) is an error, anything else a deviation.
func statusOf(err error) kit.Status {
	switch {
	case err == nil:
		return kit.Passed
	case errors.Is(err, godog.ErrSkip):
		return kit.Skipped
	case errors.Is(err, godog.ErrUndefined), errors.Is(err, godog.ErrPending), errors.Is(err, godog.ErrAmbiguous),
		errors.Is(err, kit.ErrUsage), errors.Is(err, kit.ErrConnection), errors.Is(err, transport.ErrThrottled):
		return kit.Errored
	}
	return kit.Failed
}
