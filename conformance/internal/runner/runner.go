// Package runner runs the kit: it prepares a run (features, the deployment
// reached, the model, the webhook receiver), drives godog and the explorer,
// joins godog's results to the plan, and writes the reports of every
// outcome to the writers its caller gives; it opens no file.
package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/testcampaign/kit/conformance/internal/coverage"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/explore"
	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Run runs the selected scenarios against cfg.BaseURL and returns their
// results. The error is non-nil only when the run could not judge
// everything: a bad configuration or feature file (kit.ErrUsage), an
// unreachable deployment (kit.ErrConnection), an interruption
// (kit.ErrInterrupted), or godog refusing its options. Deviations are in the
// report, not in the error. Every outcome writes the reports cfg asks for:
// a run that stopped early records why, so that CI always finds a report.
func Run(ctx context.Context, cfg kit.Config) (*kit.Report, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return Refuse(cfg, err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.RunTimeout)
	defer cancel()
	start := time.Now()
	overdue := func() bool { return ctx.Err() == context.DeadlineExceeded }
	r, err := prepare(ctx, cfg)
	if err != nil {
		switch {
		case overdue():
			err = fmt.Errorf("%w: %s before the first scenario", kit.ErrCouldNotJudge, pastRunTimeout(cfg))
		case ctx.Err() != nil:
			err = fmt.Errorf("%w before the first scenario", kit.ErrInterrupted)
		}
		if errors.Is(err, transport.ErrThrottled) {
			err = fmt.Errorf("%w: %w", kit.ErrCouldNotJudge, err)
		}
		rep := stoppedReport(cfg, start, err)
		return rep, errors.Join(err, writeReports(cfg, rep))
	}
	// A request the deployment kept throttling stops the run: what is left
	// could not be judged either.
	var throttled atomic.Pointer[transport.ThrottledError]
	r.tgt.OnThrottled = func(e *transport.ThrottledError) {
		throttled.CompareAndSwap(nil, e)
		cancel()
	}
	// A deployment that stopped answering stops the run too: every
	// scenario after would only repeat the refused connection, and a
	// scenario waiting for it (a webhook retry) is not its deviation.
	var gone atomic.Pointer[string]
	r.tgt.OnGone = func(request string, err error) {
		at := fmt.Sprintf("%s (%s: %s)", time.Now().UTC().Format("15:04:05.000"), request, r.tgt.Redact(err.Error()))
		gone.CompareAndSwap(nil, &at)
		cancel()
	}
	out := wire.NewRedactingWriter(cfg.Output, cfg.APIKey)
	r.writesReports = true
	suite := r.godogSuite(ctx, out)
	exploring := explore.StartExploring(ctx, exploreOptions(r.cfg), r.tgt)
	code := suite.Run()
	if code > 1 {
		// Nothing of the suite ran; the exploration has nothing to add.
		cancel()
	}
	if ferr := out.Flush(); ferr != nil {
		err = fmt.Errorf("writing the report: %w", ferr)
	}
	explored := exploring.Wait()
	r.reproduce(ctx, explored)
	rep := r.report(start, time.Since(start))
	rep.Scenarios = append(rep.Scenarios, explored...)
	rep.Unchecked = r.tgt.Model.Gaps()
	if cfg.Format == kit.FormatPretty || cfg.Format == kit.FormatProgress {
		// godog's footer counts only the scenarios it ran, and a @should
		// warning as failed; this line is the count every other report
		// gives.
		fmt.Fprintf(out, "\nconform: %s%s\n", rep.Counts(), explorerApart(explored))
		if ferr := out.Flush(); ferr != nil {
			err = errors.Join(err, fmt.Errorf("writing the report: %w", ferr))
		}
	}
	finished := len(rep.Scenarios) - rep.Count(kit.Disabled) - rep.Count(kit.Skipped)
	switch e := throttled.Load(); {
	case code > 1:
		stop := fmt.Errorf("%w: godog refused the options (exit %d)", kit.ErrUsage, code)
		rep.Stopped, err = stop.Error(), errors.Join(stop, err)
	case e != nil:
		rep.Stopped = fmt.Errorf("%w: %w", kit.ErrCouldNotJudge, e).Error()
		err = errors.Join(fmt.Errorf("%w: %w; %d scenario(s) finished, %d did not", kit.ErrCouldNotJudge, e, finished, rep.Unfinished), err)
	case gone.Load() != nil:
		stop := fmt.Errorf("%w: the deployment stopped answering at %s", kit.ErrCouldNotJudge, *gone.Load())
		rep.Stopped = stop.Error()
		err = errors.Join(fmt.Errorf("%w; %d scenario(s) finished, %d did not", stop, finished, rep.Unfinished), err)
	case overdue():
		stop := fmt.Errorf("%w: %s", kit.ErrCouldNotJudge, pastRunTimeout(cfg))
		rep.Stopped = stop.Error()
		err = errors.Join(fmt.Errorf("%w; %d scenario(s) finished, %d did not", stop, finished, rep.Unfinished), err)
	case ctx.Err() != nil:
		rep.Stopped = kit.ErrInterrupted.Error()
		err = errors.Join(fmt.Errorf("%w: %d scenario(s) finished, %d did not", kit.ErrInterrupted, finished, rep.Unfinished), err)
	}
	return rep, errors.Join(err, writeReports(cfg, rep))
}

// Suite prepares a run as a godog.TestSuite, for Go teams that run the kit
// with `go test` and godog's own flags. Its webhook receiver, if any, stops
// when ctx ends. Results come from godog's formatters, not a Report, so a
// @should failure counts as a failure there.
func Suite(ctx context.Context, cfg kit.Config) (godog.TestSuite, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return godog.TestSuite{}, err
	}
	r, err := prepare(ctx, cfg)
	if err != nil {
		return godog.TestSuite{}, err
	}
	return r.godogSuite(ctx, wire.NewRedactingWriter(r.cfg.Output, r.cfg.APIKey)), nil
}

// prepared is a run whose features are planned and checked and whose
// deployment has been reached.
type prepared struct {
	cfg     kit.Config
	files   []plan.FeatureFile
	planned []*plan.PlannedScenario
	tgt     *transport.Target
	hooks   *receiver.Receiver
	env     plan.RunEnv
	// writesReports: Run writes the reports from its results, so godog
	// writes none; a suite handed to Go code leaves them to godog.
	writesReports bool
	rec           *recorder
}

// prepare does everything that can fail before the first scenario: it
// checks the configuration and the features (so that an authoring mistake is
// found before any request is sent), reaches the deployment, reads the limit
// in force and starts the webhook receiver.
func prepare(ctx context.Context, cfg kit.Config) (*prepared, error) {
	if err := plan.ValidateTags(cfg.Tags); err != nil {
		return nil, err
	}
	files, err := plan.LoadFeatures(planOptions(cfg))
	if err != nil {
		return nil, err
	}
	problems := plan.Lint(files)
	problems = append(problems, plan.UnknownTags(cfg.Tags, files)...)
	problems = append(problems, plan.UnmatchedLines(files)...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: the features have authoring errors:\n  %s", kit.ErrUsage, strings.Join(problems, "\n  "))
	}
	tgt := &transport.Target{
		BaseURL:  strings.TrimRight(cfg.BaseURL, "/"),
		Key:      cfg.APIKey,
		Profile:  cfg.Profile,
		Redact:   wire.Redactor(cfg.APIKey),
		Coverage: coverage.NewRecorder(cfg.Profile == kit.ProfileSandbox, catalogue()),
	}
	tgt.Client = transport.NewClient(2*cfg.Concurrency, cfg.Timeout)
	if err := preflight(ctx, tgt); err != nil {
		return nil, err
	}
	if cfg.OpenAPI != "" {
		// Loaded after the preflight, whose exchanges are the kit's own
		// business, and before any scenario.
		schema, err := loadSchema(ctx, cfg, tgt)
		if err != nil {
			return nil, err
		}
		tgt.Schema = schema
	}
	env := plan.RunEnv{NoReceiver: receiverProblem(cfg)}
	if cfg.Profile == kit.ProfileSandbox {
		env.Clock = clockKind(ctx, tgt)
	}
	tgt.Model = startModel(ctx, cfg, tgt)
	tgt.Model.Coverage = tgt.Coverage
	env.Seeded = holdsBuiltinSeed(tgt.Model.Seed())
	var hooks *receiver.Receiver
	if env.NoReceiver == "" {
		rcv, err := receiver.Start(ctx, cfg.WebhookListen, cfg.WebhookURL)
		if err != nil {
			return nil, fmt.Errorf("%w: webhook receiver on %s: %w", kit.ErrUsage, cfg.WebhookListen, err)
		}
		hooks = rcv
	}
	planned, err := plan.Plan(planOptions(cfg), files, env)
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
		return nil, fmt.Errorf("%w: the tag expression %q selects no scenario", kit.ErrUsage, cfg.Tags)
	case runnable == 0:
		return nil, fmt.Errorf("%w: nothing to run: the %d scenario(s) selected are all skipped (%s)", kit.ErrUsage, selected, reason)
	}
	return &prepared{cfg: cfg, files: files, planned: planned, tgt: tgt, hooks: hooks, env: env}, nil
}

// receiverProblem says why deliveries from the deployment cannot reach the
// receiver, or "" if they can: the receiver is off, or it listens on
// loopback while the deployment runs elsewhere and no --webhook-url says
// how that deployment reaches it.
func receiverProblem(cfg kit.Config) string {
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

// preflight sends one unauthenticated request so that a wrong URL or a
// stopped server is reported once, not as a failure of every scenario.
func preflight(ctx context.Context, t *transport.Target) error {
	ex, err := t.Send(ctx, transport.Request{Method: http.MethodGet, Path: "/v1"})
	if ex == nil {
		return fmt.Errorf("%w: %w", kit.ErrUsage, err)
	}
	var throttled *transport.ThrottledError
	if errors.As(err, &throttled) {
		return throttled
	}
	if err != nil && ex.Header == nil {
		return fmt.Errorf("%w: cannot reach %s: %s", kit.ErrConnection, t.Redact(t.BaseURL), t.Redact(err.Error()))
	}
	t.Budget = readBudget(ctx, t)
	return nil
}

// budgetShare is the part of the key's window a run may spend: enough for
// the whole suite under the published limits, little enough that the key's
// other clients keep most of their window.
const budgetShare = 3

// readBudget reads the limit in force from two authenticated requests. A
// deployment without usable rate-limit headers gets no budget: the
// rate-limit scenarios report that deviation. Headers are judged before
// they are trusted: a limit over the published maximum, a remaining count
// above the limit or not going down are deviations for the rate-limit
// scenarios to report, so they budget the run as the published maximum
// would, rather than skip the scenarios that would catch them.
func readBudget(ctx context.Context, t *transport.Target) *transport.Budget {
	first, ok := rateHeadersOf(ctx, t)
	if !ok {
		return nil
	}
	h, ok := rateHeadersOf(ctx, t)
	if !ok {
		return nil
	}
	limit, remaining := h.Limit, h.Remaining
	if limit > rules.PublishedLimits[0] || remaining > limit || (remaining >= first.Remaining && h.Reset == first.Reset) {
		limit, remaining = min(limit, rules.PublishedLimits[0]), min(limit, rules.PublishedLimits[0])
	}
	share := min(limit/budgetShare, remaining)
	return &transport.Budget{Left: share, Of: limit, Share: share}
}

func rateHeadersOf(ctx context.Context, t *transport.Target) (rules.RateHeaders, bool) {
	e, _ := t.Send(ctx, transport.Request{Method: http.MethodGet, Path: "/v1/campaigns?limit=1", Key: t.Key})
	if e == nil || e.Header == nil {
		return rules.RateHeaders{}, false
	}
	h, err := rules.ReadRateHeaders(e)
	return h, err == nil && h.Limit > 0
}

// holdsBuiltinSeed tells whether a fresh sandbox account starts with the
// built-in fixtures, which @seed scenarios check, from what the model read
// of one.
func holdsBuiltinSeed(seed *model.Seed) bool {
	return seed != nil && len(seed.Records[model.KindCampaign]) == seedCampaigns &&
		len(seed.Records[model.KindBug]) == seedBugs && len(seed.Records[model.KindTester]) == seedTesters
}

// clockKind tells a sandbox whose account clocks are frozen from one whose
// clocks run, by moving the clock of an account nobody else uses (CLK-2,
// CLK-4): a frozen clock moves, a running one is 409 CONFLICT. A clock
// that takes a move without holding it, whose second move lands neither
// where the first left it plus the advance nor where it stood, runs all
// the same: the @running-clock scenarios judge it, and its taking a move
// (CLK-4). A frozen clock that moves wrongly stays frozen, for the
// @frozen-clock scenarios to judge (CLK-2).
func clockKind(ctx context.Context, t *transport.Target) string {
	key := kit.TestPrefix + "conform_clock_" + wire.RandomToken()
	first, status := moveClock(ctx, t, key, "1ms")
	switch status {
	case http.StatusOK:
	case http.StatusConflict:
		return plan.ClockRunning
	default:
		return ""
	}
	second, status := moveClock(ctx, t, key, "1h")
	if status != http.StatusOK || first.IsZero() || second.IsZero() {
		return plan.ClockFrozen
	}
	switch moved := second.Sub(first); {
	case moved == 0 && clockRuns(ctx, t, key):
		return plan.ClockRunning
	case moved > 0 && moved < 30*time.Minute:
		return plan.ClockRunning
	}
	return plan.ClockFrozen
}

// moveClock moves the account's clock by advance, and says where it went
// and the answer's status.
func moveClock(ctx context.Context, t *transport.Target, key, advance string) (time.Time, int) {
	ex, _ := t.Send(ctx, transport.Request{Method: http.MethodPost, Path: "/_sandbox/clock", Key: key,
		Body: []byte(`{"advance": "` + advance + `"}`), ContentType: "application/json"})
	if ex == nil || ex.Header == nil {
		return time.Time{}, 0
	}
	return clockNow(ex), ex.Status
}

// clockNow reads the data.now of a clock control's answer; zero when it
// has none.
func clockNow(ex *wire.Exchange) time.Time {
	v, err := ex.JSON()
	if err != nil {
		return time.Time{}
	}
	now, _ := wire.Lookup(v, "data.now")
	s, _ := now.(string)
	t, err := wire.ParseTimestamp(s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// clockRunLimit bounds how long clockRuns reads a clock: a running clock
// shows milliseconds, so it reads later within a few of them.
const clockRunLimit = 50 * time.Millisecond

// clockRuns reads the account's clock until it reads later than at first,
// within clockRunLimit and at least three reads: a frozen clock never
// does.
func clockRuns(ctx context.Context, t *transport.Target, key string) bool {
	read := func() time.Time {
		ex, _ := t.Send(ctx, transport.Request{Method: http.MethodGet, Path: "/_sandbox/clock", Key: key})
		if ex == nil || ex.Status != http.StatusOK {
			return time.Time{}
		}
		return clockNow(ex)
	}
	first := read()
	if first.IsZero() {
		return false
	}
	start := time.Now()
	for reads := 1; reads < 3 || time.Since(start) < clockRunLimit; reads++ {
		now := read()
		if now.IsZero() {
			return false
		}
		if !now.Equal(first) {
			return true
		}
	}
	return false
}

// The size of the built-in seed, as the README documents it.
const (
	seedCampaigns = 4
	seedBugs      = 9
	seedTesters   = 6
)

// explorerApart says why godog's count above the line conform writes is
// smaller: the explorer's scenario runs beside godog's, not in it.
func explorerApart(explored []kit.ScenarioResult) string {
	if len(explored) == 0 {
		return ""
	}
	return fmt.Sprintf(" (godog's count above leaves out the explorer's %d)", len(explored))
}
