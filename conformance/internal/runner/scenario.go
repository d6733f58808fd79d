package runner

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/explore"
	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
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
	if format == kit.FormatPretty {
		format = placingPretty
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
	run := steps.Run{
		Target: r.tgt, Receiver: r.hooks, Strict: cfg.Strict, Locate: locate,
		Places: r.rec.places, Ended: r.rec.ended,
	}
	// Only Run, which writes the reports, reproduces after the suite; a
	// suite handed to go test keeps nothing for it.
	if cfg.ReproDir != "" && cfg.Profile == kit.ProfileSandbox && r.writesReports {
		run.Disagreed = r.disagreed
	}
	return godog.TestSuite{
		Name:                "conform",
		ScenarioInitializer: steps.NewLibrary().Initializer(run),
		TestSuiteInitializer: func(sc *godog.TestSuiteContext) {
			// A report's last line has no newline for the writer to wait for.
			sc.AfterSuite(func() { _ = out.Flush() })
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

// recorder collects results from concurrently running scenarios, keyed by
// the planned scenario each ran.
type recorder struct {
	index *pickleIndex
	mu    sync.Mutex
	// running are the planned scenarios of the pickles started, by pickle
	// id.
	running map[string]*plan.PlannedScenario
	results map[plan.ScenarioKey]*kit.ScenarioResult
	// interrupted is set when the run's context ended with scenarios left.
	interrupted atomic.Bool
	// disagreements are the first failed scenario of each rule the model
	// judged broken, in the order they ended.
	disagreements []disagreement
}

func newRecorder(idx *pickleIndex) *recorder {
	return &recorder{index: idx, running: map[string]*plan.PlannedScenario{}, results: map[plan.ScenarioKey]*kit.ScenarioResult{}}
}

// places finds the planned scenario godog's pickle p runs, and so where
// each of its steps is written: the planned scenario's steps, in order.
func (r *recorder) places(p *godog.Scenario) map[string]steps.Place {
	planned, ok := r.index.claim(p)
	at := map[string]steps.Place{}
	if !ok {
		return at
	}
	r.mu.Lock()
	r.running[p.Id] = planned
	r.mu.Unlock()
	for i, st := range p.Steps {
		if i < len(planned.Steps) {
			at[st.Id] = steps.Place{URI: p.Uri, Keyword: planned.Steps[i].Keyword, Line: planned.Steps[i].Line}
		}
	}
	return at
}

// ended keeps the result of pickle p for the report, under the planned
// scenario it ran; a nil result is a scenario the run's end cut short.
func (r *recorder) ended(p *godog.Scenario, res *kit.ScenarioResult) {
	if res == nil {
		r.interrupted.Store(true)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if planned, ok := r.running[p.Id]; ok {
		r.results[planned.Key()] = res
	}
}

// disagreement is a failed scenario the model disagreed with, kept for a
// reproduction.
type disagreement struct {
	scenario plan.ScenarioKey
	rule     string
	replay   explore.Replay
}

// disagreed keeps the first scenario of each rule the model judged broken,
// with what it sent, for reproduce.
func (r *prepared) disagreed(p *godog.Scenario, v rules.RuleViolation, sent []*wire.Exchange) {
	replay := explore.ReplayOf(r.tgt, v, sent)
	rec := r.rec
	rec.mu.Lock()
	defer rec.mu.Unlock()
	planned, ok := rec.running[p.Id]
	if !ok || slices.ContainsFunc(rec.disagreements, func(d disagreement) bool { return d.rule == v.Rule }) {
		return
	}
	rec.disagreements = append(rec.disagreements, disagreement{scenario: planned.Key(), rule: v.Rule, replay: replay})
}

// reproduce writes a reproduction of each rule the model judged broken in
// a scenario and the exploration did not fail on, which has written its
// own, and tells the scenario's message where it is.
func (r *prepared) reproduce(ctx context.Context, explored []kit.ScenarioResult) {
	rec := r.rec
	rec.mu.Lock()
	found := slices.Clone(rec.disagreements)
	rec.mu.Unlock()
	for _, d := range found {
		if ctx.Err() != nil {
			return
		}
		if slices.ContainsFunc(explored, func(e kit.ScenarioResult) bool { return e.Status == kit.Failed && e.Rule == d.rule }) {
			continue
		}
		note := explore.Reproduce(ctx, r.tgt, r.cfg.ReproDir, d.replay)
		rec.mu.Lock()
		if res, ok := rec.results[d.scenario]; ok {
			res.Message += "\n\n" + note
		}
		rec.mu.Unlock()
	}
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
			for _, id := range kit.Citations(p.Tags) {
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
			if res.Status == kit.Failed && level == docs.Should && !cfg.Strict {
				res.Status = kit.Warned
			}
		}
		rep.Scenarios = append(rep.Scenarios, res)
	}
	return rep
}
