package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
)

// Run runs the selected scenarios against cfg.BaseURL and returns their
// results. The error is non-nil only when nothing could be judged: a bad
// configuration or feature file (ErrUsage) or an unreachable deployment
// (ErrConnection). Deviations are in the report, not in the error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	files, err := loadFeatures(cfg)
	if err != nil {
		return nil, err
	}
	planned, err := plan(cfg, files)
	if err != nil {
		return nil, err
	}
	redact := redactor(cfg.APIKey)
	tgt := &target{
		baseURL: strings.TrimRight(cfg.BaseURL, "/"),
		key:     cfg.APIKey,
		profile: cfg.Profile,
		client:  newClient(cfg),
		redact:  redact,
	}
	if err := preflight(ctx, tgt); err != nil {
		return nil, err
	}

	rec := &recorder{results: map[string]*ScenarioResult{}}
	out := newRedactingWriter(cfg.Output, cfg.APIKey)
	godogOut := io.Writer(out)
	format := cfg.Format
	if format == FormatJUnit || format == FormatNone {
		format, godogOut = FormatProgress, io.Discard
	}
	contents := make([]godog.Feature, len(files))
	for i, f := range files {
		contents[i] = godog.Feature{Name: f.uri, Contents: f.content}
	}
	tags := exclusionTags(cfg)
	if strings.TrimSpace(cfg.Tags) != "" {
		tags = append([]string{cfg.Tags}, tags...)
	}

	start := time.Now()
	suite := godog.TestSuite{
		Name:                "conform",
		ScenarioInitializer: scenarioInitializer(tgt, rec),
		Options: &godog.Options{
			Format:          format,
			Output:          godogOut,
			NoColors:        !cfg.Color,
			FeatureContents: contents,
			Tags:            strings.Join(tags, " && "),
			// Undefined or ambiguous steps mean a check did not happen; they
			// must never pass silently.
			Strict:         true,
			Concurrency:    cfg.Concurrency,
			DefaultContext: ctx,
		},
	}
	if code := suite.Run(); code > 1 {
		return nil, fmt.Errorf("%w: godog refused the options (exit %d)", ErrUsage, code)
	}
	if err := out.Flush(); err != nil {
		return nil, fmt.Errorf("writing the report: %w", err)
	}

	rep := &Report{
		BaseURL:  redact(cfg.BaseURL),
		Key:      RedactKey(cfg.APIKey),
		Profile:  cfg.Profile,
		Strict:   cfg.Strict,
		Duration: time.Since(start),
	}
	for _, p := range planned {
		if !p.selected {
			continue
		}
		r := ScenarioResult{
			Feature: p.feature, URI: p.uri, Line: p.line, Name: p.name, Tags: p.tags,
			Area: p.area, Level: p.level, Maturity: p.maturity,
		}
		switch got := rec.get(p.id); {
		case p.skip != "":
			r.Status, r.SkipReason = Skipped, p.skip
		case got == nil:
			r.Status, r.Message = Errored, "godog did not run this scenario"
		default:
			r.Status, r.Duration = got.Status, got.Duration
			r.FailedStep, r.Message, r.Request, r.Response = got.FailedStep, got.Message, got.Request, got.Response
		}
		if r.Status == Failed && r.Level == LevelShould && !cfg.Strict {
			r.Status = Warned
		}
		rep.Scenarios = append(rep.Scenarios, r)
	}
	if cfg.Format == FormatJUnit {
		w := newRedactingWriter(cfg.Output, cfg.APIKey)
		if err := rep.WriteJUnit(w); err != nil {
			return nil, err
		}
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("writing the report: %w", err)
		}
	}
	if cfg.Summary != nil {
		w := newRedactingWriter(cfg.Summary, cfg.APIKey)
		rep.WriteSummary(w)
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("writing the summary: %w", err)
		}
	}
	return rep, nil
}

func newClient(cfg Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.Concurrency * 2
	return &http.Client{
		Timeout:   cfg.Timeout,
		Transport: tr,
		// A redirect would hide the status the deployment really answered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// preflight sends one unauthenticated request so that a wrong URL or a
// stopped server is reported once, not as a failure of every scenario.
func preflight(ctx context.Context, t *target) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.baseURL+"/v1", nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: cannot reach %s: %s", ErrConnection, t.redact(t.baseURL), t.redact(err.Error()))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// recorder collects results from concurrently running scenarios.
type recorder struct {
	mu      sync.Mutex
	results map[string]*ScenarioResult
}

func (r *recorder) put(id string, res *ScenarioResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results[id] = res
}

func (r *recorder) get(id string) *ScenarioResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.results[id]
}

type runInfoKey struct{}

// runInfo is the per-scenario bookkeeping of the runner, apart from the
// step state: when it started, the first failing step, and the lock it holds.
type runInfo struct {
	start      time.Time
	exclusive  bool
	failedStep string
}

// scenarioInitializer wires the step library and the hooks that give each
// scenario fresh state and record its outcome. @exhaustive scenarios hold the
// window lock exclusively, so no other scenario's requests are counted in, or
// refused because of, the window they spend.
func scenarioInitializer(t *target, rec *recorder) func(*godog.ScenarioContext) {
	var window sync.RWMutex
	steps := compileSteps()
	return func(sc *godog.ScenarioContext) {
		registerSteps(sc, steps)
		sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
			info := &runInfo{start: time.Now()}
			for _, tg := range p.Tags {
				info.exclusive = info.exclusive || tg.Name == tagExhaustive
			}
			if info.exclusive {
				window.Lock()
			} else {
				window.RLock()
			}
			ctx = context.WithValue(ctx, runInfoKey{}, info)
			return withState(ctx, newScenarioState(t)), nil
		})
		sc.StepContext().After(func(ctx context.Context, st *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
			if info, ok := ctx.Value(runInfoKey{}).(*runInfo); ok && info.failedStep == "" && status != godog.StepPassed && status != godog.StepSkipped {
				info.failedStep = st.Text
			}
			return ctx, nil
		})
		sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
			info, _ := ctx.Value(runInfoKey{}).(*runInfo)
			if info == nil {
				return ctx, nil
			}
			if info.exclusive {
				window.Unlock()
			} else {
				window.RUnlock()
			}
			res := &ScenarioResult{Status: statusOf(err), Duration: time.Since(info.start)}
			if err != nil && res.Status != Skipped {
				res.FailedStep = info.failedStep
				res.Message = t.redact(err.Error())
				if errors.Is(err, godog.ErrUndefined) {
					res.Message += " (no step of the library matches; `conform steps` lists them)"
				}
				if s, ok := ctx.Value(stateKey{}).(*scenarioState); ok {
					if e, lerr := s.last(); lerr == nil {
						res.Request, res.Response = s.requestLine(e), s.responseLine(e)
					}
				}
			}
			rec.put(p.Id, res)
			return ctx, nil
		})
	}
}

// statusOf ranks a scenario's error: the kit's own trouble (undefined steps,
// misuse, no connection) is an error, anything else a deviation.
func statusOf(err error) Status {
	switch {
	case err == nil:
		return Passed
	case errors.Is(err, godog.ErrSkip):
		return Skipped
	case errors.Is(err, godog.ErrUndefined), errors.Is(err, godog.ErrPending), errors.Is(err, godog.ErrAmbiguous),
		errors.Is(err, ErrUsage), errors.Is(err, ErrConnection):
		return Errored
	}
	return Failed
}
