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
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"
)

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
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	files, err := openReportFiles(cfg)
	if err != nil {
		return nil, err
	}
	defer files.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	r, err := prepare(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w before the first scenario", ErrInterrupted)
		}
		rep := stoppedReport(cfg, start, err)
		return rep, errors.Join(err, files.write(cfg, rep))
	}
	out := newRedactingWriter(cfg.Output, cfg.APIKey)
	suite := r.suite(ctx, out)
	if files.cucumber != nil {
		suite.Options.Format += "," + registerCucumber(suite.Name, files.cucumber)
		defer unregisterCucumber(suite.Name)
	}
	exploring := startExploring(ctx, r.cfg, r.tgt)
	if code := suite.Run(); code > 1 {
		return nil, fmt.Errorf("%w: godog refused the options (exit %d)", ErrUsage, code)
	}
	if err := out.Flush(); err != nil {
		return nil, fmt.Errorf("writing the report: %w", err)
	}
	explored := exploring.wait()
	rep := r.report(start, time.Since(start))
	rep.Scenarios = append(rep.Scenarios, explored...)
	if ctx.Err() != nil {
		rep.Stopped = ErrInterrupted.Error()
		err = fmt.Errorf("%w: %d scenario(s) finished, %d did not", ErrInterrupted, len(rep.Scenarios)-rep.count(Disabled)-rep.count(Skipped), rep.Unfinished)
	}
	return rep, errors.Join(err, files.write(cfg, rep))
}

// stoppedReport is the report of a run that could not start: it judges
// nothing and says why.
func stoppedReport(cfg Config, start time.Time, err error) *Report {
	rep := newReport(cfg, start, time.Since(start))
	rep.Stopped = redactor(cfg.APIKey)(err.Error())
	return rep
}

func newReport(cfg Config, start time.Time, d time.Duration) *Report {
	return &Report{
		Version:  cfg.Version,
		BaseURL:  redactor(cfg.APIKey)(cfg.BaseURL),
		Key:      RedactKey(cfg.APIKey),
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
	cucumber                  *redactingWriter
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
			return nil, fmt.Errorf("%w: the %s report: %v", ErrUsage, what, err)
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
		f.cucumber = newRedactingWriter(f.cucumberFile, cfg.APIKey)
	}
	if cfg.OutputName != "" && (cfg.Format == FormatJUnit || cfg.Format == FormatCucumber) {
		f.names = append(f.names, cfg.OutputName)
	}
	return f, nil
}

// write writes every report of rep: junit (to its file, and to Output with
// --format junit), HTML, and the summary. The first error is returned, but
// every report is attempted.
func (f *reportFiles) write(cfg Config, rep *Report) error {
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
		w := newRedactingWriter(cfg.Summary, cfg.APIKey)
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
// @should failure counts as a failure there. With t set, each scenario is
// a subtest named after its feature and scenario, and a selection that
// runs nothing fails t.
func Suite(ctx context.Context, cfg Config) (godog.TestSuite, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return godog.TestSuite{}, err
	}
	r, err := prepare(ctx, cfg)
	if err != nil {
		return godog.TestSuite{}, err
	}
	return r.suite(ctx, newRedactingWriter(r.cfg.Output, r.cfg.APIKey)), nil
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
	if err := validateTags(cfg.Tags); err != nil {
		return nil, err
	}
	files, err := loadFeatures(cfg)
	if err != nil {
		return nil, err
	}
	problems := lint(files)
	problems = append(problems, unknownTags(cfg.Tags, files)...)
	problems = append(problems, unmatchedLines(files)...)
	if len(problems) > 0 {
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
	return &prepared{cfg: cfg, files: files, planned: planned, tgt: tgt, env: env, rec: newRecorder()}, nil
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

func (r *prepared) suite(ctx context.Context, out *redactingWriter) godog.TestSuite {
	cfg := r.cfg
	godogOut := io.Writer(out)
	format := cfg.Format
	if format == FormatJUnit || format == FormatNone {
		format, godogOut = FormatProgress, io.Discard
	}
	contents := make([]godog.Feature, len(r.files))
	for i, f := range r.files {
		contents[i] = godog.Feature{Name: f.uri, Contents: godogContent(f)}
	}
	tags := exclusionTags(cfg, r.env)
	if strings.TrimSpace(cfg.Tags) != "" {
		tags = append([]string{cfg.Tags}, tags...)
	}
	name := "conform-" + randomToken()
	return godog.TestSuite{
		Name:                name,
		ScenarioInitializer: scenarioInitializer(r.tgt, r.rec),
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

func (r *prepared) report(start time.Time, d time.Duration) *Report {
	cfg := r.cfg
	rep := newReport(cfg, start, d)
	defer unregisterIndex(r.rec)
	for _, p := range r.planned {
		if !p.selected {
			continue
		}
		res := ScenarioResult{
			Feature: p.feature, URI: p.uri, Line: p.line, Name: p.name, Tags: p.tags,
			Area: p.area, Level: p.level, Maturity: p.maturity,
		}
		got, ran := r.rec.result(p.key())
		switch {
		case p.skip != "":
			res.Status, res.SkipReason = p.skipAs, p.skip
		case !ran && r.rec.interrupted.Load():
			rep.Unfinished++
			continue
		case !ran:
			res.Status, res.Message = Errored, "godog did not run this scenario"
		default:
			level := res.Level
			got.Feature, got.URI, got.Line, got.Name, got.Tags = res.Feature, res.URI, res.Line, res.Name, res.Tags
			got.Level, got.Maturity = res.Level, res.Maturity
			if got.Area == "" {
				got.Area = p.area
			} else {
				// A rule with an area of its own (the document's) is
				// reported there, at its own level, whatever scenario broke it.
				got.Level = got.RuleLevel
			}
			if got.Rule != "" {
				level = got.RuleLevel
			}
			res = got
			if res.Status == Failed && level == LevelShould && !cfg.Strict {
				res.Status = Warned
			}
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

// recorder collects results from concurrently running scenarios, keyed by
// godog's own pickle ids. godog's documents (which the index formatter
// sees) turn each id into the file and line the plan knows the scenario by,
// so nothing assumes that the kit and godog parse in the same order.
type recorder struct {
	mu      sync.Mutex
	results map[string]*ScenarioResult // by pickle id
	pickles map[string]pickleRef       // by pickle id
	lines   map[string]int             // AST node id of godog's documents → line
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
	return &recorder{results: map[string]*ScenarioResult{}, pickles: map[string]pickleRef{}, lines: map[string]int{}}
}

func (r *recorder) started(p *godog.Scenario) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pickles[p.Id] = pickleRef{uri: p.Uri, node: p.AstNodeIds[len(p.AstNodeIds)-1]}
}

func (r *recorder) put(id string, res *ScenarioResult) {
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
	lines := nodeLines(doc.Feature)
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, l := range lines {
		r.lines[id] = l
	}
}

// result returns the result of the scenario at key, if godog ran it.
func (r *recorder) result(key scenarioKey) (ScenarioResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, ref := range r.pickles {
		if ref.uri == key.uri && r.lines[ref.node] == key.line {
			if res, ok := r.results[id]; ok {
				return *res, true
			}
		}
	}
	return ScenarioResult{}, false
}

type runInfoKey struct{}

// runInfo is the per-scenario bookkeeping of the runner, apart from the
// step state: when it started, the first failing step, the exchange that
// step judged, and the lock it holds.
type runInfo struct {
	start      time.Time
	exclusive  bool
	failedStep string
	fault      *exchange
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
			if ctx.Err() != nil {
				rec.interrupted.Store(true)
				return ctx, godog.ErrSkip
			}
			rec.started(p)
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
			info, ok := ctx.Value(runInfoKey{}).(*runInfo)
			if ok && info.failedStep == "" && status != godog.StepPassed && status != godog.StepSkipped {
				info.failedStep = st.Text
				if s, _ := ctx.Value(stateKey{}).(*scenarioState); s != nil {
					info.fault, _ = s.last()
				}
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
				return ctx, nil
			}
			s.closeHooks()
			if ctx.Err() != nil {
				// Interrupted: whatever the steps said was cut short, not
				// a verdict on the deployment.
				rec.interrupted.Store(true)
				return ctx, nil
			}
			res := &ScenarioResult{Duration: time.Since(info.start)}
			if s.skip != "" {
				res.Status, res.SkipReason = Skipped, s.skip
				rec.put(p.Id, res)
				return ctx, nil
			}
			// godog already holds the step's error; the hook adds one only
			// when it finds a new one, so that no error is printed twice.
			var added error
			// A scenario whose steps held can still have received an answer
			// breaking a rule of every response; it fails where that rule
			// first broke, on the exchange that broke it.
			if err == nil {
				if v, ok := s.sink.first(); ok {
					added = fmt.Errorf("%s: %s (answer to %s)", v.rule, v.message, v.request)
					res.Rule, res.RuleLevel, res.Area = v.rule, v.level, v.area
					info.failedStep = "every response: " + v.rule
					info.fault = v.exchange
					err = added
				}
			}
			res.Status = statusOf(err)
			if err != nil && res.Status != Skipped {
				res.FailedStep = info.failedStep
				res.Message = s.redact(err.Error())
				if e := info.fault; e != nil {
					res.Request, res.Response = s.requestLine(e), s.responseLine(e)
				}
				res.Exchanges = s.transcript()
			}
			rec.put(p.Id, res)
			return ctx, added
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
