// Package runner runs the kit: it prepares a run (features, the deployment
// reached, the model, the webhook receiver), drives godog and the explorer,
// and writes the reports of every outcome.
package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/testcampaign/kit/conformance/coverage"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"
	"github.com/testcampaign/kit/conformance/explore"
	"github.com/testcampaign/kit/conformance/plan"
	"github.com/testcampaign/kit/conformance/report"
	"github.com/testcampaign/kit/conformance/rules"
	"github.com/testcampaign/kit/conformance/steps"
	"github.com/testcampaign/kit/conformance/transport"
	"github.com/testcampaign/kit/conformance/wire"
)

// CouldNotJudge opens the reason of a run that stopped because of its
// environment, not of anything the deployment was judged on.
const CouldNotJudge = "could not judge"

// ErrInterrupted marks a run stopped by its context (Ctrl-C, SIGTERM)
// before every scenario finished; the report holds those that did.
var ErrInterrupted = errors.New("interrupted")

// Run runs the selected scenarios against cfg.BaseURL and returns their
// results. The error is non-nil only when the run could not judge
// everything: a bad configuration or feature file (ErrUsage), an
// unreachable deployment (ErrConnection) or an interruption
// (ErrInterrupted). Deviations are in the report, not in the error. Once the
// report files are open, every outcome writes them: a run that stopped
// early records why, as one error case, so that CI always finds a report.
func Run(ctx context.Context, cfg Config) (*report.Report, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	files, err := openReportFiles(cfg)
	if err != nil {
		return nil, err
	}
	defer files.close()
	ctx, cancel := context.WithTimeout(ctx, cfg.RunTimeout)
	defer cancel()
	start := time.Now()
	overdue := func() bool { return ctx.Err() == context.DeadlineExceeded }
	r, err := Prepare(ctx, cfg)
	if err != nil {
		switch {
		case overdue():
			err = fmt.Errorf("%s: %s before the first scenario", CouldNotJudge, cfg.overdue())
		case ctx.Err() != nil:
			err = fmt.Errorf("%w before the first scenario", ErrInterrupted)
		}
		if errors.Is(err, transport.ErrThrottled) {
			err = fmt.Errorf("%s: %w", CouldNotJudge, err)
		}
		rep := stoppedReport(cfg, start, err)
		return rep, errors.Join(err, files.write(cfg, rep))
	}
	// A request the deployment kept throttling stops the run: what is left
	// could not be judged either.
	var throttled atomic.Pointer[transport.ThrottledError]
	r.tgt.OnThrottled = func(e *transport.ThrottledError) {
		throttled.CompareAndSwap(nil, e)
		cancel()
	}
	out := wire.NewRedactingWriter(cfg.Output, cfg.APIKey)
	suite := r.Suite(ctx, out)
	if files.cucumber != nil {
		suite.Options.Format += "," + registerCucumber(suite.Name, files.cucumber)
		defer unregisterCucumber(suite.Name)
	}
	exploring := explore.StartExploring(ctx, r.Cfg.exploreOptions(), r.tgt)
	if code := suite.Run(); code > 1 {
		return nil, fmt.Errorf("%w: godog refused the options (exit %d)", wire.ErrUsage, code)
	}
	if err := out.Flush(); err != nil {
		return nil, fmt.Errorf("writing the report: %w", err)
	}
	explored := exploring.Wait()
	rep := r.report(start, time.Since(start))
	rep.Scenarios = append(rep.Scenarios, explored...)
	finished := len(rep.Scenarios) - rep.Count(report.Disabled) - rep.Count(report.Skipped)
	switch e := throttled.Load(); {
	case e != nil:
		rep.Stopped = CouldNotJudge + ": " + e.Error()
		err = fmt.Errorf("%s: %w; %d scenario(s) finished, %d did not", CouldNotJudge, e, finished, rep.Unfinished)
	case overdue():
		rep.Stopped = CouldNotJudge + ": " + cfg.overdue()
		err = fmt.Errorf("%s; %d scenario(s) finished, %d did not", rep.Stopped, finished, rep.Unfinished)
	case ctx.Err() != nil:
		rep.Stopped = ErrInterrupted.Error()
		err = fmt.Errorf("%w: %d scenario(s) finished, %d did not", ErrInterrupted, finished, rep.Unfinished)
	}
	return rep, errors.Join(err, files.write(cfg, rep))
}

// stoppedReport is the report of a run that could not start: it judges
// nothing and says why.
func stoppedReport(cfg Config, start time.Time, err error) *report.Report {
	rep := newReport(cfg, start, time.Since(start))
	rep.Stopped = wire.Redactor(cfg.APIKey)(err.Error())
	return rep
}

func newReport(cfg Config, start time.Time, d time.Duration) *report.Report {
	return &report.Report{
		Version:  cfg.Version,
		BaseURL:  wire.Redactor(cfg.APIKey)(cfg.BaseURL),
		Key:      wire.RedactKey(cfg.APIKey),
		Settings: cfg.settings(),
		Started:  start,
		Duration: d,
	}
}

// reportFiles are the report files of a run, created before anything is
// sent so that a path in a missing directory is refused at once, not after
// the whole run.
type reportFiles struct {
	junit, html, cucumberFile *os.File
	cucumber                  *wire.RedactingWriter
	names                     []string
}

func openReportFiles(cfg Config) (*reportFiles, error) {
	f := &reportFiles{}
	open := func(path, what string) (*os.File, error) {
		if path == "" {
			return nil, nil
		}
		file, err := os.Create(path)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("%w: the %s report: %v", wire.ErrUsage, what, err)
		}
		f.names = append(f.names, path)
		return file, nil
	}
	var err error
	if f.junit, err = open(cfg.JUnitFile, "junit"); err != nil {
		return nil, err
	}
	if f.html, err = open(cfg.HTMLFile, "HTML"); err != nil {
		return nil, err
	}
	if f.cucumberFile, err = open(cfg.CucumberFile, "cucumber"); err != nil {
		return nil, err
	}
	if f.cucumberFile != nil {
		f.cucumber = wire.NewRedactingWriter(f.cucumberFile, cfg.APIKey)
	}
	if cfg.OutputName != "" && (cfg.Format == FormatJUnit || cfg.Format == FormatCucumber) {
		f.names = append(f.names, cfg.OutputName)
	}
	return f, nil
}

// write writes every report of rep: junit (to its file, and to Output with
// --format junit), HTML, and the summary. The first error is returned, but
// every report is attempted.
func (f *reportFiles) write(cfg Config, rep *report.Report) error {
	rep.Files = f.names
	var errs []error
	if cfg.Format == FormatJUnit {
		errs = append(errs, writeRedacted(cfg.Output, cfg.APIKey, rep.WriteJUnit))
	}
	if f.junit != nil {
		errs = append(errs, writeRedacted(f.junit, cfg.APIKey, rep.WriteJUnit))
	}
	if f.html != nil {
		errs = append(errs, writeRedacted(f.html, cfg.APIKey, rep.WriteHTML))
	}
	if f.cucumber != nil {
		errs = append(errs, f.cucumber.Flush())
	}
	// A run that stopped before its first scenario has nothing to sum up:
	// the error that stopped it is all there is, and the caller prints it.
	if cfg.Summary != nil && (rep.Stopped == "" || len(rep.Scenarios) > 0 || rep.Unfinished > 0) {
		w := wire.NewRedactingWriter(cfg.Summary, cfg.APIKey)
		rep.WriteSummary(w)
		errs = append(errs, w.Flush())
	}
	return errors.Join(errs...)
}

func (f *reportFiles) close() {
	for _, file := range []*os.File{f.junit, f.html, f.cucumberFile} {
		if file != nil {
			file.Close()
		}
	}
}

func writeRedacted(w io.Writer, key string, write func(io.Writer) error) error {
	rw := wire.NewRedactingWriter(w, key)
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
// @should failure counts as a failure there. With t set, each scenario is
// a subtest named after its feature and scenario, and a selection that
// runs nothing fails t.
func Suite(ctx context.Context, cfg Config) (godog.TestSuite, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return godog.TestSuite{}, err
	}
	r, err := Prepare(ctx, cfg)
	if err != nil {
		return godog.TestSuite{}, err
	}
	return r.Suite(ctx, wire.NewRedactingWriter(r.Cfg.Output, r.Cfg.APIKey)), nil
}

// prepared is a run whose features are planned and checked and whose
// deployment has been reached.
type prepared struct {
	Cfg     Config
	Files   []plan.FeatureFile
	Planned []*plan.PlannedScenario
	tgt     *transport.Target
	hooks   *steps.Receiver
	env     plan.RunEnv
	rec     *recorder
}

// Prepare does everything that can fail before the first scenario: it
// checks the configuration and the features (so that an authoring mistake is
// found before any request is sent), reaches the deployment, reads the limit
// in force and starts the webhook receiver.
func Prepare(ctx context.Context, cfg Config) (*prepared, error) {
	if err := plan.ValidateTags(cfg.Tags); err != nil {
		return nil, err
	}
	files, err := plan.LoadFeatures(cfg.planOptions())
	if err != nil {
		return nil, err
	}
	problems := plan.Lint(files)
	problems = append(problems, plan.UnknownTags(cfg.Tags, files)...)
	problems = append(problems, plan.UnmatchedLines(files)...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: the features have authoring errors:\n  %s", wire.ErrUsage, strings.Join(problems, "\n  "))
	}
	tgt := &transport.Target{
		BaseURL:  strings.TrimRight(cfg.BaseURL, "/"),
		Key:      cfg.APIKey,
		Profile:  cfg.Profile,
		Redact:   wire.Redactor(cfg.APIKey),
		Coverage: coverage.NewRecorder(cfg.Profile == wire.ProfileSandbox),
	}
	tgt.Client = newClient(cfg, tgt)
	if err := preflight(ctx, tgt); err != nil {
		return nil, err
	}
	if cfg.OpenAPI != "" {
		// Loaded after the preflight, whose exchanges are the kit's own
		// business, and before any scenario.
		schema, err := loadSchema(ctx, cfg, tgt.Client)
		if err != nil {
			return nil, err
		}
		tgt.Schema = schema
	}
	env := plan.RunEnv{NoReceiver: receiverProblem(cfg)}
	if cfg.Profile == wire.ProfileSandbox {
		env.Seeded = holdsBuiltinSeed(ctx, tgt)
	}
	tgt.Model = startModel(ctx, cfg, tgt)
	tgt.Model.Coverage = tgt.Coverage
	var hooks *steps.Receiver
	if env.NoReceiver == "" {
		rcv, err := steps.StartReceiver(ctx, cfg.WebhookListen, cfg.WebhookURL)
		if err != nil {
			return nil, fmt.Errorf("%w: webhook receiver on %s: %v", wire.ErrUsage, cfg.WebhookListen, err)
		}
		hooks = rcv
	}
	planned, err := plan.Plan(cfg.planOptions(), files, env)
	if err != nil {
		return nil, err
	}
	selected, runnable, reason := 0, 0, ""
	for _, p := range planned {
		switch {
		case !p.Selected:
		case p.Skip == "":
			selected++
			runnable++
		default:
			selected++
			reason = p.Skip
		}
	}
	// A run that judges nothing must not look like a pass in CI.
	switch {
	case selected == 0:
		return nil, fmt.Errorf("%w: the tag expression %q selects no scenario", wire.ErrUsage, cfg.Tags)
	case runnable == 0:
		return nil, fmt.Errorf("%w: nothing to run: the %d scenario(s) selected are all skipped (%s)", wire.ErrUsage, selected, reason)
	}
	return &prepared{Cfg: cfg, Files: files, Planned: planned, tgt: tgt, hooks: hooks, env: env, rec: newRecorder()}, nil
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

func (r *prepared) Suite(ctx context.Context, out *wire.RedactingWriter) godog.TestSuite {
	cfg := r.Cfg
	godogOut := io.Writer(out)
	format := cfg.Format
	if format == FormatJUnit || format == FormatNone {
		format, godogOut = FormatProgress, io.Discard
	}
	contents := make([]godog.Feature, len(r.Files))
	for i, f := range r.Files {
		contents[i] = godog.Feature{Name: f.URI, Contents: plan.GodogContent(f)}
	}
	tags := plan.ExclusionTags(cfg.planOptions(), r.env)
	if strings.TrimSpace(cfg.Tags) != "" {
		tags = append([]string{cfg.Tags}, tags...)
	}
	name := "conform-" + wire.RandomToken()
	return godog.TestSuite{
		Name:                name,
		ScenarioInitializer: scenarioInitializer(r.tgt, r.hooks, r.rec),
		TestSuiteInitializer: func(sc *godog.TestSuiteContext) {
			// A report's last line has no newline for the writer to wait for.
			sc.AfterSuite(func() { _ = out.Flush() })
		},
		Options: &godog.Options{
			Format:          format + "," + registerIndex(name, r.rec),
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

func (r *prepared) report(start time.Time, d time.Duration) *report.Report {
	cfg := r.Cfg
	rep := newReport(cfg, start, d)
	defer unregisterIndex(r.rec)
	defer func() { rep.Coverage = r.tgt.Coverage.Outcomes() }()
	for _, p := range r.Planned {
		if !p.Selected {
			continue
		}
		res := report.ScenarioResult{
			Feature: p.Feature, URI: p.URI, Line: p.Line, Name: p.Name, Tags: p.Tags,
			Area: p.Area, Level: p.Level, Maturity: p.Maturity,
		}
		got, ran := r.rec.result(p.Key())
		switch {
		case p.Skip != "":
			res.Status, res.SkipReason = p.SkipAs, p.Skip
			for _, id := range coverage.Citations(p.Tags) {
				if p.SkipAs == report.Disabled {
					r.tgt.Coverage.NotApplicable(id, "configuration: "+p.Skip)
				} else {
					r.tgt.Coverage.Unreached(id, "its scenario was skipped: "+p.Skip)
				}
			}
		case !ran && r.rec.interrupted.Load():
			rep.Unfinished++
			continue
		case !ran:
			res.Status, res.Message = report.Errored, "godog did not run this scenario"
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
			if res.Status == report.Failed && level == report.LevelShould && !cfg.Strict {
				res.Status = report.Warned
			}
		}
		rep.Scenarios = append(rep.Scenarios, res)
	}
	return rep
}

func newClient(cfg Config, t *transport.Target) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.Concurrency * 2
	// The timeout is the transport's, for each try: a wait for a
	// throttled request's Retry-After is not the deployment's slowness.
	t.Timeout = cfg.Timeout
	return &http.Client{
		Transport: &transport.CheckingTransport{Next: tr, Target: t},
		// A redirect would hide the status the deployment really answered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// preflight sends one unauthenticated request so that a wrong URL or a
// stopped server is reported once, not as a failure of every scenario.
func preflight(ctx context.Context, t *transport.Target) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.BaseURL+"/v1", nil)
	if err != nil {
		return fmt.Errorf("%w: %v", wire.ErrUsage, err)
	}
	resp, err := t.Client.Do(req)
	var throttled *transport.ThrottledError
	if errors.As(err, &throttled) {
		return throttled
	}
	if err != nil {
		return fmt.Errorf("%w: cannot reach %s: %s", wire.ErrConnection, t.Redact(t.BaseURL), t.Redact(err.Error()))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if err := resp.Body.Close(); err != nil {
		return fmt.Errorf("%w: %v", wire.ErrConnection, err)
	}
	t.Budget = readBudget(ctx, t)
	return nil
}

// budgetShare is the part of the key's window a run may spend: enough for
// the whole suite under the published limits, little enough that the key's
// other clients keep most of their window.
const budgetShare = 3

// readBudget reads the limit in force from one authenticated request. A
// deployment without usable rate-limit headers gets no budget: the
// rate-limit scenarios report that deviation.
func readBudget(ctx context.Context, t *transport.Target) *transport.Budget {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.BaseURL+"/v1/campaigns?limit=1", nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+t.Key)
	resp, err := t.Client.Do(req)
	if err != nil {
		return nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e := &wire.Exchange{Status: resp.StatusCode, Header: resp.Header}
	h, err := rules.ReadRateHeaders(e)
	if err != nil || h.Limit <= 0 {
		return nil
	}
	share := min(h.Limit/budgetShare, h.Remaining)
	return &transport.Budget{Left: share, Of: h.Limit, Share: share}
}

// holdsBuiltinSeed tells whether a fresh sandbox account starts with the
// built-in fixtures, which @seed scenarios check.
func holdsBuiltinSeed(ctx context.Context, t *transport.Target) bool {
	key := wire.TestPrefix + "conform_seed_" + wire.RandomToken()
	for path, want := range map[string]int{"/v1/campaigns": seedCampaigns, "/v1/bugs": seedBugs, "/v1/testers": seedTesters} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.BaseURL+path+"?limit=100", nil)
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := t.Client.Do(req)
		if err != nil {
			return false
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxBody))
		resp.Body.Close()
		if err != nil {
			return false
		}
		v, err := wire.DecodeJSON(b)
		if err != nil {
			return false
		}
		items, err := wire.Lookup(v, "data.items")
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

// recorder collects results from concurrently running scenarios, keyed by
// godog's own pickle ids. godog's documents (which the index formatter
// sees) turn each id into the file and line the plan knows the scenario by,
// so nothing assumes that the kit and godog parse in the same order.
type recorder struct {
	mu      sync.Mutex
	results map[string]*report.ScenarioResult // by pickle id
	pickles map[string]pickleRef              // by pickle id
	lines   map[string]int                    // AST node id of godog's documents → line
	// interrupted is set when the run's context ended with scenarios left.
	interrupted atomic.Bool
	suite       string
}

// pickleRef is where a pickle comes from: its file, and the AST node that
// gives its line (its Examples row, or else its scenario).
type pickleRef struct {
	uri  string
	node string
}

func newRecorder() *recorder {
	return &recorder{results: map[string]*report.ScenarioResult{}, pickles: map[string]pickleRef{}, lines: map[string]int{}}
}

func (r *recorder) started(p *godog.Scenario) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pickles[p.Id] = pickleRef{uri: p.Uri, node: p.AstNodeIds[len(p.AstNodeIds)-1]}
}

func (r *recorder) put(id string, res *report.ScenarioResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results[id] = res
}

// document records the line of every scenario and Examples row of one of
// godog's parsed documents.
func (r *recorder) document(doc *messages.GherkinDocument) {
	if doc == nil || doc.Feature == nil {
		return
	}
	lines := plan.NodeLines(doc.Feature)
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, l := range lines {
		r.lines[id] = l
	}
}

// result returns the result of the scenario at key, if godog ran it.
func (r *recorder) result(key plan.ScenarioKey) (report.ScenarioResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, ref := range r.pickles {
		if ref.uri == key.URI && r.lines[ref.node] == key.Line {
			if res, ok := r.results[id]; ok {
				return *res, true
			}
		}
	}
	return report.ScenarioResult{}, false
}

// runInfo is the per-scenario bookkeeping of the runner, apart from the
// step state: when it started, the first failing step, the exchange that
// step judged, and the lock it holds.
type runInfo struct {
	started    bool
	start      time.Time
	exclusive  bool
	failedStep string
	fault      *wire.Exchange
}

// scenarioInitializer wires the step library and the hooks that record each
// scenario's outcome. godog calls it once per scenario, so the state it
// builds is the scenario's own, and the steps are bound to it. @exhaustive
// scenarios hold the window lock exclusively, so no other scenario's
// requests are counted in, or refused because of, the window they spend.
func scenarioInitializer(t *transport.Target, hooks *steps.Receiver, rec *recorder) func(*godog.ScenarioContext) {
	var window sync.RWMutex
	library := steps.NewLibrary()
	return func(sc *godog.ScenarioContext) {
		s := steps.NewScenarioState(t, hooks)
		info := &runInfo{}
		library.Bind(sc, s)
		sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
			if ctx.Err() != nil {
				rec.interrupted.Store(true)
				return ctx, godog.ErrSkip
			}
			rec.started(p)
			info.started, info.start = true, time.Now()
			for _, tg := range p.Tags {
				info.exclusive = info.exclusive || tg.Name == plan.TagExhaustive
			}
			if info.exclusive {
				window.Lock()
			} else {
				window.RLock()
			}
			s.Sink.Unbudgeted = info.exclusive
			return ctx, nil
		})
		sc.StepContext().After(func(ctx context.Context, st *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
			if info.failedStep == "" && status != godog.StepPassed && status != godog.StepSkipped {
				info.failedStep = st.Text
				info.fault, _ = s.Last()
			}
			return ctx, nil
		})
		sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
			if !info.started {
				return ctx, nil
			}
			if info.exclusive {
				window.Unlock()
			} else {
				window.RUnlock()
			}
			s.CloseHooks()
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
			if s.Skip != "" {
				for _, id := range cited {
					t.Coverage.Unreached(id, "its scenario was skipped: "+s.Skip)
				}
				rec.put(p.Id, &report.ScenarioResult{Duration: time.Since(info.start), Status: report.Skipped, SkipReason: s.Skip})
				return ctx, nil
			}
			res := &report.ScenarioResult{Duration: time.Since(info.start)}
			// godog already holds the step's error; the hook adds one only
			// when it finds a new one, so that no error is printed twice.
			var added error
			// A scenario whose steps held can still have received an answer
			// breaking a rule of every response; it fails where that rule
			// first broke, on the exchange that broke it.
			if err == nil {
				if v, ok := s.Sink.First(); ok {
					added = fmt.Errorf("%s: %s (answer to %s)", v.Rule, v.Message, v.Request)
					res.Rule, res.RuleLevel, res.Area = v.Rule, v.Level, v.Area
					info.failedStep = "every response: " + v.Rule
					info.fault = v.Exchange
					err = added
				}
			}
			res.Status = statusOf(err)
			if res.Status == report.Passed || res.Status == report.Failed {
				t.Coverage.Scenario(cited, s.Sent())
			}
			if err != nil && res.Status != report.Skipped {
				res.FailedStep = info.failedStep
				res.Message = s.Redact(err.Error())
				if e := info.fault; e != nil {
					res.Request, res.Response = s.RequestLine(e), s.ResponseLine(e)
				}
				res.Exchanges = s.Transcript()
			}
			rec.put(p.Id, res)
			return ctx, added
		})
	}
}

// statusOf ranks a scenario's error: the kit's own trouble (undefined steps,
// misuse, no connection) is an error, anything else a deviation.
func statusOf(err error) report.Status {
	switch {
	case err == nil:
		return report.Passed
	case errors.Is(err, godog.ErrSkip):
		return report.Skipped
	case errors.Is(err, godog.ErrUndefined), errors.Is(err, godog.ErrPending), errors.Is(err, godog.ErrAmbiguous),
		errors.Is(err, wire.ErrUsage), errors.Is(err, wire.ErrConnection), errors.Is(err, transport.ErrThrottled):
		return report.Errored
	}
	return report.Failed
}
