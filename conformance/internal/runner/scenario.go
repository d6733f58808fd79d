package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// godogSuite is the run as one godog.TestSuite over every feature file.
func (r *prepared) godogSuite(ctx context.Context, out *wire.RedactingWriter) godog.TestSuite {
	return r.suite(ctx, out, r.files, false)
}

// featureSuite is the run of one feature file as a godog.TestSuite for go
// test, whose failures name the file and line of the step that failed.
func (r *prepared) featureSuite(ctx context.Context, out *wire.RedactingWriter, f plan.FeatureFile) godog.TestSuite {
	return r.suite(ctx, out, []plan.FeatureFile{f}, true)
}

func (r *prepared) suite(ctx context.Context, out *wire.RedactingWriter, files []plan.FeatureFile, locate bool) godog.TestSuite {
	cfg := r.cfg
	godogOut := io.Writer(out)
	format := cfg.Format
	if format == kit.FormatJUnit || format == kit.FormatNone || (format == kit.FormatCucumber && r.writesReports) {
		// The kit writes these from its own results, after the run.
		format, godogOut = kit.FormatProgress, io.Discard
	}
	flush := out.Flush
	if format == kit.FormatPretty {
		// Scenarios run at once interleave their lines in godog's output,
		// where following it would put a step at another scenario's line:
		// then each step only loses godog's comment.
		placed := files
		if cfg.Concurrency > 1 {
			placed = nil
		}
		loc := newStepLocator(godogOut, placed)
		godogOut, flush = loc, func() error { return errors.Join(loc.Flush(), out.Flush()) }
	}
	contents := make([]godog.Feature, len(files))
	for i, f := range files {
		contents[i] = godog.Feature{Name: f.URI, Contents: plan.GodogContent(f)}
	}
	tags := plan.ExclusionTags(planOptions(cfg), r.env)
	if strings.TrimSpace(cfg.Tags) != "" {
		tags = append([]string{cfg.Tags}, tags...)
	}
	r.rec = newRecorder(newPickleIndex(r.planned, files))
	return godog.TestSuite{
		Name:                "conform",
		ScenarioInitializer: scenarioInitializer(r.tgt, r.hooks, r.rec, cfg.Strict, locate),
		TestSuiteInitializer: func(sc *godog.TestSuiteContext) {
			// A report's last line has no newline for the writer to wait for.
			sc.AfterSuite(func() { _ = flush() })
		},
		Options: &godog.Options{
			Format:          format,
			Output:          godogOut,
			NoColors:        !cfg.Color,
			FeatureContents: contents,
			Tags:            strings.Join(tags, " && "),
			// Undefined or ambiguous steps mean a check did not happen; they
			// must never pass silently.
			Strict:      true,
			Concurrency: cfg.Concurrency,
			// Cancelling the run's context (Ctrl-C) cancels every request
			// and wait in flight, and the scenarios not yet started do not.
			DefaultContext: ctx,
		},
	}
}

// pickleIndex places godog's pickles at the planned scenarios they run,
// and so their steps at their file and line, by fingerprint: godog's
// pickle of a scenario is made of what the plan's is, whatever ids its own
// parse gave it.
type pickleIndex struct {
	mu sync.Mutex
	// unclaimed are, per fingerprint, the planned scenarios no pickle has
	// claimed yet, in the order of their files.
	unclaimed map[string][]*plan.PlannedScenario
}

func newPickleIndex(planned []*plan.PlannedScenario, files []plan.FeatureFile) *pickleIndex {
	run := map[string]bool{}
	for _, f := range files {
		run[f.URI] = true
	}
	idx := &pickleIndex{unclaimed: map[string][]*plan.PlannedScenario{}}
	for _, p := range planned {
		if p.Selected && run[p.URI] {
			idx.unclaimed[p.Fingerprint] = append(idx.unclaimed[p.Fingerprint], p)
		}
	}
	return idx
}

// claim returns the planned scenario godog's pickle p runs. Pickles alike
// in name, tags and steps are one check written twice; each claims the
// first of them left.
func (idx *pickleIndex) claim(p *godog.Scenario) (*plan.PlannedScenario, bool) {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	key := plan.Fingerprint(p)
	left := idx.unclaimed[key]
	if len(left) == 0 {
		return nil, false
	}
	idx.unclaimed[key] = left[1:]
	return left[0], true
}

type stepRef struct {
	uri, keyword string
	line         int
}

func (s stepRef) String() string { return fmt.Sprintf("%s:%d", s.uri, s.line) }

// recorder collects results from concurrently running scenarios, keyed by
// the planned scenario each ran.
type recorder struct {
	index   *pickleIndex
	mu      sync.Mutex
	results map[plan.ScenarioKey]*kit.ScenarioResult
	// interrupted is set when the run's context ended with scenarios left.
	interrupted atomic.Bool
}

func newRecorder(idx *pickleIndex) *recorder {
	return &recorder{index: idx, results: map[plan.ScenarioKey]*kit.ScenarioResult{}}
}

func (r *recorder) put(key plan.ScenarioKey, res *kit.ScenarioResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results[key] = res
}

// result returns the result of the scenario at key, if godog ran it.
func (r *recorder) result(key plan.ScenarioKey) (kit.ScenarioResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.results[key]
	if !ok {
		return kit.ScenarioResult{}, false
	}
	return *res, true
}

// scenarioRun is the runner's bookkeeping of one scenario, apart from the
// step state: when it started, its steps as they ran, the first step that
// failed, the exchange at fault, and the lock it holds.
type scenarioRun struct {
	started   bool
	start     time.Time
	exclusive bool
	lastStep  string // the pickle step id of the scenario's last step
	// planned is the scenario of the plan the pickle runs, nil if none.
	planned *plan.PlannedScenario
	// steps are where the pickle's steps are written, by pickle step id.
	stepsAt   map[string]stepRef
	step      stepRef
	stepStart time.Time
	steps     []kit.StepResult
	failed    int // the index in steps of the first step that failed, -1 if none
	fault     *wire.Exchange
	violation *rules.RuleViolation
	// ownFailed is set when the step that failed failed its own check too,
	// so that the rule grades the scenario only when it is @must.
	ownFailed bool
}

// place finds the planned scenario godog's pickle p runs, and where each
// of its steps is written.
func (run *scenarioRun) place(idx *pickleIndex, p *godog.Scenario) {
	run.planned, _ = idx.claim(p)
	run.stepsAt = map[string]stepRef{}
	for i, st := range p.Steps {
		ref := stepRef{uri: p.Uri}
		if run.planned != nil && i < len(run.planned.Steps) {
			ref.keyword, ref.line = run.planned.Steps[i].Keyword, run.planned.Steps[i].Line
		}
		run.stepsAt[st.Id] = ref
	}
}

// stepEnded records the step st of scenario s as it ended, with status
// and its own error err, and returns what the runner adds to godog's
// verdict on it: the rule its exchanges broke and, with locate, its file
// and line.
func (run *scenarioRun) stepEnded(s *steps.ScenarioState, st *godog.Step, status godog.StepResultStatus, err error, strict, locate bool) error {
	res := kit.StepResult{Keyword: run.step.keyword, Text: st.Text, Line: run.step.line,
		Status: stepStatus[status], Duration: time.Since(run.stepStart)}
	var added error
	if status == godog.StepPassed || status == godog.StepFailed {
		v, broke := run.ruleBroken(s.Sink, strict, st.Id == run.lastStep)
		if v != nil {
			run.violation, run.ownFailed, added = v, status == godog.StepFailed, broke
			res.Status = stepStatus[godog.StepFailed]
		}
	}
	if locate && res.Status == stepStatus[godog.StepFailed] {
		if added != nil {
			added = fmt.Errorf("%s: %w", run.step, added)
		} else {
			added = fmt.Errorf("%s: %s%s", run.step, run.step.keyword, st.Text)
		}
	}
	// godog joins a hook's error before the step's own.
	switch {
	case added != nil && err != nil:
		res.Error = s.Redact(fmt.Sprintf("%v, %v", added, err))
	case added != nil:
		res.Error = s.Redact(added.Error())
	case err != nil && status != godog.StepSkipped:
		res.Error = s.Redact(err.Error())
	}
	run.steps = append(run.steps, res)
	if run.failed < 0 && res.Status != stepStatus[godog.StepPassed] && res.Status != stepStatus[godog.StepSkipped] {
		run.failed = len(run.steps) - 1
		// A request that got no connection made no exchange: the last one
		// is an earlier step's, which is not at fault.
		if !errors.Is(err, kit.ErrConnection) {
			run.fault = s.Last()
		}
		if v := run.violation; v != nil && v.Exchange != nil {
			run.fault = v.Exchange
		}
	}
	return added
}

// record keeps the scenario's result for the report, under the planned
// scenario the pickle ran.
func (run *scenarioRun) record(rec *recorder, res *kit.ScenarioResult) {
	if run.planned != nil {
		rec.put(run.planned.Key(), res)
	}
}

// describe names the step at where (file:line) with its text, as it ran.
func (run *scenarioRun) describe(where string) string {
	for _, st := range run.steps {
		if fmt.Sprintf("%s:%d", run.step.uri, st.Line) == where {
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
func (run *scenarioRun) ruleBroken(sink *rules.Sink, strict, last bool) (*rules.RuleViolation, error) {
	here := run.step.String()
	if v, ok := sink.BrokenAt(here); ok && (v.Level != wire.LevelShould || strict || last) {
		return &v, fmt.Errorf("%s: %s (answer to %s)", v.Rule, v.Message, v.Request)
	}
	if !last {
		return nil, nil
	}
	if v, ok := sink.First(); ok {
		return &v, fmt.Errorf("%s: %s (answer to %s, sent by the step at %s)", v.Rule, v.Message, v.Request, run.describe(v.Where))
	}
	return nil, nil
}

// stepStatus is godog's word for a step's outcome, as cucumber has it.
var stepStatus = map[godog.StepResultStatus]string{
	godog.StepPassed: "passed", godog.StepFailed: "failed", godog.StepSkipped: "skipped",
	godog.StepUndefined: "undefined", godog.StepPending: "pending", godog.StepAmbiguous: "ambiguous",
}

// scenarioInitializer wires the step library and the hooks that record each
// scenario's outcome. godog calls it once per scenario, so the state it
// builds is the scenario's own, and the steps are bound to it. @exhaustive
// scenarios hold the window lock exclusively, so no other scenario's
// requests are counted in, or refused because of, the window they spend.
//
// A step whose own check held can still have sent an exchange that breaks
// a rule of every response or disagrees with the model: the step fails
// then, with the rule's message, in godog's output as in every report.
// With strict, a @should rule fails the run, so it too fails its step at
// once. With locate, every failure names the file and line of its step,
// for go test, whose output otherwise names only godog's own source.
func scenarioInitializer(t *transport.Target, hooks *receiver.Receiver, rec *recorder, strict, locate bool) func(*godog.ScenarioContext) {
	var window sync.RWMutex
	library := steps.NewLibrary()
	return func(sc *godog.ScenarioContext) {
		s := steps.NewScenarioState(t, hooks)
		run := &scenarioRun{failed: -1}
		library.Bind(sc, s)
		sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
			if ctx.Err() != nil {
				rec.interrupted.Store(true)
				return ctx, godog.ErrSkip
			}
			run.started, run.start = true, time.Now()
			if n := len(p.Steps); n > 0 {
				run.lastStep = p.Steps[n-1].Id
			}
			run.place(rec.index, p)
			for _, tg := range p.Tags {
				run.exclusive = run.exclusive || tg.Name == plan.TagExhaustive
			}
			if run.exclusive {
				window.Lock()
			} else {
				window.RLock()
			}
			s.Sink.Unbudgeted = run.exclusive
			return ctx, nil
		})
		sc.StepContext().Before(func(ctx context.Context, st *godog.Step) (context.Context, error) {
			run.step, run.stepStart = run.stepsAt[st.Id], time.Now()
			s.Sink.At(run.step.String())
			return ctx, nil
		})
		sc.StepContext().After(func(ctx context.Context, st *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
			added := run.stepEnded(s, st, status, err, strict, locate)
			return ctx, added
		})
		sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
			if !run.started {
				return ctx, nil
			}
			if run.exclusive {
				window.Unlock()
			} else {
				window.RUnlock()
			}
			s.Close()
			// godog keeps every scenario's steps, and so their state, to the
			// end of the run: what the report needs is taken below, and the
			// answers themselves (up to 1 MiB each) are let go.
			defer s.Forget()
			if ctx.Err() != nil {
				// Interrupted: whatever the steps said was cut short, not
				// a verdict on the deployment.
				rec.interrupted.Store(true)
				return ctx, nil
			}
			var tags []string
			for _, tg := range p.Tags {
				tags = append(tags, tg.Name)
			}
			cited := coverage.Citations(tags)
			res := &kit.ScenarioResult{Duration: time.Since(run.start), Steps: run.steps}
			if s.Skip != "" {
				for _, id := range cited {
					t.Coverage.Unreached(id, "its scenario was skipped: "+s.Skip)
				}
				res.Status, res.SkipReason = kit.Skipped, s.Skip
				run.record(rec, res)
				return ctx, nil
			}
			switch v := run.violation; {
			case v == nil:
			case !run.ownFailed:
				res.Rule, res.RuleLevel, res.Area = v.Rule, v.Level, v.Area
			case v.Level == wire.LevelMust:
				// A rule of every response is graded at its own level,
				// whichever scenario saw the answer, even when the step
				// that sent it failed its own check too.
				res.Rule, res.RuleLevel = v.Rule, v.Level
			}
			res.Status = statusOf(err)
			if res.Status == kit.Passed || res.Status == kit.Failed {
				t.Coverage.Scenario(cited, s.Sent())
			}
			if err != nil && res.Status != kit.Skipped {
				if run.failed >= 0 {
					f := run.steps[run.failed]
					res.FailedStep, res.FailedLine = f.Text, f.Line
				}
				res.Message = s.Redact(err.Error())
				if e := run.fault; e != nil {
					res.Request, res.Response = s.RequestLine(e), s.ResponseLine(e)
				}
				res.Exchanges = s.Transcript()
			}
			run.record(rec, res)
			return ctx, nil
		})
	}
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

// report joins the plan and what godog ran into the run's results.
func (r *prepared) report(start time.Time, d time.Duration) *kit.Report {
	cfg := r.cfg
	rep := newReport(cfg, start, d)
	defer func() { rep.Coverage = r.tgt.Coverage.Outcomes() }()
	for _, p := range r.planned {
		if !p.Selected {
			continue
		}
		res := kit.ScenarioResult{
			Feature: p.Feature, URI: p.URI, Line: p.Line, Name: p.Name, Tags: p.Tags,
			Area: p.Area, Level: p.Level, Maturity: p.Maturity,
		}
		got, ran := r.rec.result(p.Key())
		switch {
		case p.Skip != "":
			res.Status, res.SkipReason = p.SkipAs, p.Skip
			for _, id := range coverage.Citations(p.Tags) {
				if p.SkipAs == kit.Disabled {
					r.tgt.Coverage.NotApplicable(id, "configuration: "+p.Skip)
				} else {
					r.tgt.Coverage.Unreached(id, "its scenario was skipped: "+p.Skip)
				}
			}
		case !ran && r.rec.interrupted.Load():
			rep.Unfinished++
			continue
		case !ran:
			res.Status, res.Message = kit.Errored, "godog did not run this scenario"
		default:
			level := res.Level
			got.Feature, got.URI, got.Line, got.Name, got.Tags = res.Feature, res.URI, res.Line, res.Name, res.Tags
			got.Level, got.Maturity = res.Level, res.Maturity
			if got.Area == "" {
				got.Area = p.Area
			} else {
				// A rule with an area of its own (the document's) is
				// reported there, at its own level, whatever scenario broke it.
				got.Level = got.RuleLevel
			}
			if got.Rule != "" {
				level = got.RuleLevel
			}
			res = got
			if res.Status == kit.Failed && level == wire.LevelShould && !cfg.Strict {
				res.Status = kit.Warned
			}
		}
		rep.Scenarios = append(rep.Scenarios, res)
	}
	return rep
}
