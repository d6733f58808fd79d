package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	cfg = r.cfg

	out := newRedactingWriter(cfg.Output, cfg.APIKey)
	suite := r.suite(out)
	var cucumber *redactingWriter
	if cfg.CucumberFile != "" {
		f, err := os.Create(cfg.CucumberFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		defer f.Close()
		cucumber = newRedactingWriter(f, cfg.APIKey)
		suite.Options.Format += "," + registerCucumber(suite.Name, cucumber)
		defer unregisterCucumber(suite.Name)
	}
	start := time.Now()
	exploring := startExploring(ctx, cfg, r.tgt)
	if code := suite.Run(); code > 1 {
		return nil, fmt.Errorf("%w: godog refused the options (exit %d)", ErrUsage, code)
	}
	if err := out.Flush(); err != nil {
		return nil, fmt.Errorf("writing the report: %w", err)
	}
	if cucumber != nil {
		if err := cucumber.Flush(); err != nil {
			return nil, fmt.Errorf("writing the cucumber report: %w", err)
		}
	}

	explored := exploring.wait()
	rep := r.report(time.Since(start))
	rep.Scenarios = append(rep.Scenarios, explored...)
	if cfg.Format == FormatJUnit {
		if err := writeRedacted(cfg.Output, cfg.APIKey, rep.WriteJUnit); err != nil {
			return nil, err
		}
	}
	if cfg.JUnitFile != "" {
		f, err := os.Create(cfg.JUnitFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		werr := writeRedacted(f, cfg.APIKey, rep.WriteJUnit)
		if err := f.Close(); werr == nil && err != nil {
			werr = fmt.Errorf("writing the junit report: %w", err)
		}
		if werr != nil {
			return nil, werr
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

func writeRedacted(w io.Writer, key string, write func(io.Writer) error) error {
	rw := newRedactingWriter(w, key)
	if err := write(rw); err != nil {
		return err
	}
	if err := rw.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// Suite prepares a run as a godog.TestSuite, for Go teams that run the kit
// with `go test` and godog's own flags. Its webhook receiver, if any, stops
// when ctx ends. Results come from godog's formatters, not a Report, so a
// @should failure counts as a failure there.
func Suite(ctx context.Context, cfg Config) (godog.TestSuite, error) {
	r, err := prepare(ctx, cfg)
	if err != nil {
		return godog.TestSuite{}, err
	}
	return r.suite(newRedactingWriter(r.cfg.Output, r.cfg.APIKey)), nil
}

// prepared is a run whose features are planned and checked and whose
// deployment has been reached.
type prepared struct {
	cfg     Config
	files   []featureFile
	planned []*plannedScenario
	tgt     *target
	env     runEnv
	rec     *recorder
}

// prepare does everything that can fail before the first scenario: it
// checks the configuration and the features (so that an authoring mistake is
// found before any request is sent), reaches the deployment, reads the limit
// in force and starts the webhook receiver.
func prepare(ctx context.Context, cfg Config) (*prepared, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := validateTags(cfg.Tags); err != nil {
		return nil, err
	}
	files, err := loadFeatures(cfg)
	if err != nil {
		return nil, err
	}
	if problems := lint(files); len(problems) > 0 {
		return nil, fmt.Errorf("%w: the features have authoring errors:\n  %s", ErrUsage, strings.Join(problems, "\n  "))
	}
	tgt := &target{
		baseURL: strings.TrimRight(cfg.BaseURL, "/"),
		key:     cfg.APIKey,
		profile: cfg.Profile,
		redact:  redactor(cfg.APIKey),
	}
	tgt.client = newClient(cfg, tgt)
	if err := preflight(ctx, tgt); err != nil {
		return nil, err
	}
	if cfg.OpenAPI != "" {
		// Loaded after the preflight, whose exchanges are the kit's own
		// business, and before any scenario.
		schema, err := loadSchema(ctx, cfg, tgt.client)
		if err != nil {
			return nil, err
		}
		tgt.schema = schema
	}
	if cfg.Profile == ProfileSandbox {
		tgt.seeded = holdsBuiltinSeed(ctx, tgt)
	}
	tgt.model = startModel(ctx, cfg, tgt)
	env := runEnv{seeded: tgt.seeded, noReceiver: receiverProblem(cfg)}
	if env.noReceiver == "" {
		rcv, err := startReceiver(ctx, cfg.WebhookListen, cfg.WebhookURL)
		if err != nil {
			return nil, fmt.Errorf("%w: webhook receiver on %s: %v", ErrUsage, cfg.WebhookListen, err)
		}
		tgt.hooks = rcv
	}
	planned, err := plan(cfg, files, env)
	if err != nil {
		return nil, err
	}
	selected, runnable, reason := 0, 0, ""
	for _, p := range planned {
		switch {
		case !p.selected:
		case p.skip == "":
			selected++
			runnable++
		default:
			selected++
			reason = p.skip
		}
	}
	// A run that judges nothing must not look like a pass in CI.
	switch {
	case selected == 0:
		return nil, fmt.Errorf("%w: the tag expression %q selects no scenario", ErrUsage, cfg.Tags)
	case runnable == 0:
		return nil, fmt.Errorf("%w: nothing to run: the %d scenario(s) selected are all skipped (%s)", ErrUsage, selected, reason)
	}
	return &prepared{cfg: cfg, files: files, planned: planned, tgt: tgt, env: env, rec: &recorder{results: map[string]*ScenarioResult{}}}, nil
}

// receiverProblem says why deliveries from the deployment cannot reach the
// receiver, or "" if they can: the receiver is off, or it listens on
// loopback while the deployment runs elsewhere and no --webhook-url says
// how that deployment reaches it.
func receiverProblem(cfg Config) string {
	if cfg.WebhookListen == "off" {
		return "it is off (--webhook-listen off)"
	}
	if cfg.WebhookURL != "" {
		return ""
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return "the base URL does not parse"
	}
	host, _, err := net.SplitHostPort(cfg.WebhookListen)
	if err != nil {
		return fmt.Sprintf("--webhook-listen %q is not host:port", cfg.WebhookListen)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Sprintf("it listens on every interface (%s) and no --webhook-url says which address the deployment should post to", cfg.WebhookListen)
	}
	if !isLoopbackHost(u.Hostname()) && isLoopbackHost(host) {
		return fmt.Sprintf("it listens on %s, which the deployment at %s cannot reach; pass --webhook-url with an address it can", cfg.WebhookListen, u.Host)
	}
	return ""
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (r *prepared) suite(out *redactingWriter) godog.TestSuite {
	cfg := r.cfg
	godogOut := io.Writer(out)
	format := cfg.Format
	if format == FormatJUnit || format == FormatNone {
		format, godogOut = FormatProgress, io.Discard
	}
	contents := make([]godog.Feature, len(r.files))
	for i, f := range r.files {
		contents[i] = godog.Feature{Name: f.uri, Contents: f.content}
	}
	tags := exclusionTags(cfg, r.env)
	if strings.TrimSpace(cfg.Tags) != "" {
		tags = append([]string{cfg.Tags}, tags...)
	}
	return godog.TestSuite{
		Name:                "conform-" + randomToken(),
		ScenarioInitializer: scenarioInitializer(r.tgt, r.rec),
		// A report's last line has no newline for the writer to wait for.
		TestSuiteInitializer: func(sc *godog.TestSuiteContext) { sc.AfterSuite(func() { _ = out.Flush() }) },
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
			DefaultContext: context.Background(),
		},
	}
}

func (r *prepared) report(d time.Duration) *Report {
	cfg := r.cfg
	rep := &Report{
		Version:  cfg.Version,
		BaseURL:  r.tgt.redact(cfg.BaseURL),
		Key:      RedactKey(cfg.APIKey),
		Profile:  cfg.Profile,
		Strict:   cfg.Strict,
		Duration: d,
	}
	for _, p := range r.planned {
		if !p.selected {
			continue
		}
		res := ScenarioResult{
			Feature: p.feature, URI: p.uri, Line: p.line, Name: p.name, Tags: p.tags,
			Area: p.area, Level: p.level, Maturity: p.maturity,
		}
		switch got := r.rec.get(p.id); {
		case p.skip != "":
			res.Status, res.SkipReason = Skipped, p.skip
		case got == nil:
			res.Status, res.Message = Errored, "godog did not run this scenario"
		default:
			res.Status, res.Duration, res.SkipReason = got.Status, got.Duration, got.SkipReason
			res.FailedStep, res.Message, res.Request, res.Response = got.FailedStep, got.Message, got.Request, got.Response
			res.Rule, res.RuleLevel = got.Rule, got.RuleLevel
			// A rule with an area of its own (the document's) is reported
			// there, at its own level, whatever scenario broke it.
			if got.Area != "" {
				res.Area, res.Level = got.Area, got.RuleLevel
			}
		}
		level := res.Level
		if res.Rule != "" {
			level = res.RuleLevel
		}
		if res.Status == Failed && level == LevelShould && !cfg.Strict {
			res.Status = Warned
		}
		rep.Scenarios = append(rep.Scenarios, res)
	}
	return rep
}

func newClient(cfg Config, t *target) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.Concurrency * 2
	return &http.Client{
		Timeout:   cfg.Timeout,
		Transport: &checkingTransport{next: tr, target: t},
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
	if err := resp.Body.Close(); err != nil {
		return fmt.Errorf("%w: %v", ErrConnection, err)
	}
	t.budget = readBudget(ctx, t)
	return nil
}

// budgetShare is the part of the key's window a run may spend: enough for
// the whole suite under the published limits, little enough that the key's
// other clients keep most of their window.
const budgetShare = 3

// readBudget reads the limit in force from one authenticated request. A
// deployment without usable rate-limit headers gets no budget: the
// rate-limit scenarios report that deviation.
func readBudget(ctx context.Context, t *target) *budget {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.baseURL+"/v1/campaigns?limit=1", nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	resp, err := t.client.Do(req)
	if err != nil {
		return nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e := &exchange{status: resp.StatusCode, header: resp.Header}
	h, err := readRateHeaders(e)
	if err != nil || h.limit <= 0 {
		return nil
	}
	share := min(h.limit/budgetShare, h.remaining)
	return &budget{left: share, of: h.limit, share: share}
}

// holdsBuiltinSeed tells whether a fresh sandbox account starts with the
// built-in fixtures, which @seed scenarios check.
func holdsBuiltinSeed(ctx context.Context, t *target) bool {
	key := TestPrefix + "conform_seed_" + randomToken()
	for path, want := range map[string]int{"/v1/campaigns": seedCampaigns, "/v1/bugs": seedBugs, "/v1/testers": seedTesters} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.baseURL+path+"?limit=100", nil)
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := t.client.Do(req)
		if err != nil {
			return false
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if err != nil {
			return false
		}
		v, err := decodeJSON(b)
		if err != nil {
			return false
		}
		items, err := lookup(v, "data.items")
		if a, ok := items.([]any); err != nil || !ok || len(a) != want {
			return false
		}
	}
	return true
}

// The size of the built-in seed, as the README documents it.
const (
	seedCampaigns = 4
	seedBugs      = 9
	seedTesters   = 6
)

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
			st := newScenarioState(t)
			st.sink.unbudgeted = info.exclusive
			return withState(ctx, st), nil
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
			s, _ := ctx.Value(stateKey{}).(*scenarioState)
			if s == nil {
				return ctx, err
			}
			s.closeHooks()
			res := &ScenarioResult{Duration: time.Since(info.start)}
			if s.skip != "" {
				res.Status, res.SkipReason = Skipped, s.skip
				rec.put(p.Id, res)
				return ctx, err
			}
			// A scenario whose steps held can still have received an answer
			// breaking a rule of every response; it fails where that rule
			// first broke.
			if err == nil {
				if v, ok := s.sink.first(); ok {
					err = fmt.Errorf("%s: %s (answer to %s)", v.rule, v.message, v.request)
					res.Rule, res.RuleLevel, res.Area = v.rule, v.level, v.area
					info.failedStep = "every response: " + v.rule
				}
			}
			res.Status = statusOf(err)
			if err != nil && res.Status != Skipped {
				res.FailedStep = info.failedStep
				res.Message = s.redact(err.Error())
				if e, lerr := s.last(); lerr == nil {
					res.Request, res.Response = s.requestLine(e), s.responseLine(e)
				}
			}
			rec.put(p.Id, res)
			return ctx, err
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
