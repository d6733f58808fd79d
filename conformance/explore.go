package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The explorer sends seeded random sequences of requests to fresh sandbox
// accounts, each answer judged by the model, and shrinks what fails to the
// shortest sequence that still fails, printed as a scenario.

// Defaults of a run's bounded exploration.
const (
	// DefaultExploreSteps is how many requests the bounded exploration of a
	// default --profile sandbox run sends.
	DefaultExploreSteps = 400
	// exploreCap bounds the default exploration's time on a slow deployment.
	exploreCap = 6 * time.Second
	// shrinkBudget bounds the requests spent shrinking one failure.
	shrinkBudget = 1500
	// keyReserve is what the explorer leaves of a key's window.
	keyReserve = 3
)

// xstep is one request of an exploration. Paths and bodies may name values
// saved by earlier steps ({c1}); a step whose names are not saved does not
// run.
type xstep struct {
	key         int
	method      string
	path        string
	body        string
	contentType string
	// saveAt/saveAs keep a value of a successful answer for later steps.
	saveAt, saveAs string
	burst          int // >1: sent that many times at once
	note           string
}

var refRe = regexp.MustCompile(`\{([a-z]+[0-9]+)\}`)

func (s xstep) refs() []string {
	var out []string
	for _, m := range refRe.FindAllStringSubmatch(s.path+s.body, -1) {
		out = append(out, m[1])
	}
	return out
}

// explorer runs sequences against one deployment.
type explorer struct {
	t    *target
	seed uint64
	// sandbox: each sequence runs on fresh accounts of its own.
	sandbox bool
}

// outcome is what one sequence did: the violation it found, if any, the
// steps that ran, and the requests it spent.
type outcome struct {
	violation *ruleViolation
	failedAt  int
	ran       []xstep
	spent     int
}

// session is one sequence being run: its accounts and saved values.
type session struct {
	x     *explorer
	keys  []string
	left  []int // what each key's window has left, -1 unknown
	saved map[string]string
	sink  *ruleSink
	spent int
}

func (x *explorer) newSession() *session {
	sink := newRuleSink()
	// The explorer's fresh accounts are its own: their windows are not the
	// operator's key's share to budget.
	sink.unbudgeted = x.sandbox
	return &session{x: x, saved: map[string]string{}, sink: sink}
}

func (s *session) key(i int) string {
	for len(s.keys) <= i {
		k := s.x.t.key
		if s.x.sandbox {
			k = TestPrefix + "conform_x" + randomToken()
			s.x.t.model.own(k, true)
		}
		s.keys = append(s.keys, k)
		s.left = append(s.left, -1)
	}
	return s.keys[i]
}

// expand fills in saved values; ok is false if one is missing.
func (s *session) expand(text string) (string, bool) {
	ok := true
	out := refRe.ReplaceAllStringFunc(text, func(m string) string {
		v, found := s.saved[m[1:len(m)-1]]
		ok = ok && found
		return v
	})
	return out, ok
}

// run sends one step (each copy of a burst at once) and reports whether it
// ran and the first violation the model or the every-response rules found.
func (s *session) run(ctx context.Context, st xstep, sequential bool) (bool, *ruleViolation) {
	path, ok1 := s.expand(st.path)
	body, ok2 := s.expand(st.body)
	if !ok1 || !ok2 {
		return false, nil
	}
	key := s.key(st.key)
	n := max(st.burst, 1)
	if s.left[st.key] >= 0 && s.left[st.key] < n+keyReserve && strings.HasPrefix(path, "/v1") {
		return false, nil
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var saved string
	s.spent += n
	for i := 0; i < n; i++ {
		send := func() {
			e, err := s.send(ctx, key, st.method, path, body, st.contentType)
			if err != nil || e == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if h, ok := looseRateHeaders(e.header); ok && strings.HasPrefix(path, "/v1") {
				s.left[st.key] = h.remaining
			}
			if st.saveAs != "" && e.status == http.StatusOK {
				if v, err := e.json(); err == nil {
					if x, err := lookup(v, st.saveAt); err == nil {
						if str, ok := x.(string); ok {
							saved = str
						}
					}
				}
			}
		}
		if sequential || n == 1 {
			send()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); send() }()
	}
	wg.Wait()
	if saved != "" {
		s.saved[st.saveAs] = saved
	}
	if v, ok := s.sink.first(); ok && v.level != LevelShould {
		return true, &v
	}
	return true, nil
}

// saved says whether the step's value was kept, so that a scenario saves
// only what the replay saved.
func (s *session) kept(st xstep) bool {
	_, ok := s.saved[st.saveAs]
	return st.saveAs != "" && ok
}

func (s *session) send(ctx context.Context, key, method, path, body, contentType string) (*exchange, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, ruleSinkKey{}, s.sink), method, s.x.t.baseURL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.x.t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	return &exchange{method: method, url: path, status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// sequence runs steps in order, stopping at the first violation.
func (x *explorer) sequence(ctx context.Context, steps []xstep, sequential bool) outcome {
	s := x.newSession()
	var out outcome
	for _, st := range steps {
		if ctx.Err() != nil {
			break
		}
		ran, v := s.run(ctx, st, sequential)
		if ran {
			if !s.kept(st) {
				st.saveAs, st.saveAt = "", ""
			}
			out.ran = append(out.ran, st)
		}
		if v != nil {
			out.violation, out.failedAt = v, len(out.ran)-1
			break
		}
	}
	out.spent = s.spent
	return out
}

// explore generates and runs sequences until n steps or the deadline, and
// returns the first failure, shrunk.
func (x *explorer) explore(ctx context.Context, n int, deadline time.Time) (*finding, int) {
	rng := rand.New(rand.NewPCG(x.seed, x.seed^0x9e3779b97f4a7c15))
	made, spent := 0, 0
	for made < n && time.Now().Before(deadline) && ctx.Err() == nil {
		g := newGenerator(rng, x)
		steps := g.sequence(min(120, n-made))
		made += len(steps)
		out := x.sequence(ctx, steps, false)
		spent += out.spent
		if out.violation != nil {
			f := x.shrink(ctx, out)
			return f, spent
		}
	}
	return nil, spent
}

// finding is a failure of the explorer, shrunk.
type finding struct {
	violation ruleViolation
	steps     []xstep
	shrunk    bool // the steps fail again when replayed one by one
}

// shrink looks for the shortest sequence that still breaks the same rule,
// replayed one request at a time as a scenario would: first the prefix up
// to the failure, then ever smaller chunks removed (delta debugging).
func (x *explorer) shrink(ctx context.Context, out outcome) *finding {
	f := &finding{violation: *out.violation, steps: out.ran[:out.failedAt+1]}
	budget := shrinkBudget
	fails := func(steps []xstep) (outcome, bool) {
		if budget <= 0 || ctx.Err() != nil {
			return outcome{}, false
		}
		o := x.sequence(ctx, steps, true)
		budget -= o.spent
		return o, o.violation != nil && o.violation.rule == f.violation.rule
	}
	o, ok := fails(f.steps)
	if !ok {
		return f
	}
	f.shrunk = true
	f.steps = o.ran[:o.failedAt+1]
	for chunk := len(f.steps) / 2; chunk >= 1; {
		removed := false
		for start := 0; start+chunk <= len(f.steps)-1; {
			try := append(append([]xstep(nil), f.steps[:start]...), f.steps[start+chunk:]...)
			if o, ok := fails(try); ok {
				f.steps, f.violation = o.ran[:o.failedAt+1], *o.violation
				removed = true
				continue
			}
			start += chunk
		}
		if !removed {
			chunk /= 2
		}
		if budget <= 0 {
			break
		}
	}
	return f
}

// exploration is the explorer's part of a run, running beside the suite.
type exploration struct {
	done   chan struct{}
	result ScenarioResult
	ran    bool
}

// startExploring starts the bounded exploration of a run (or a longer one
// with Config.Explore) in the background; wait returns its result.
func startExploring(ctx context.Context, cfg Config, t *target) *exploration {
	e := &exploration{done: make(chan struct{})}
	// Fresh accounts exist only in the sandbox; a live deployment is
	// explored only through `conform explore`.
	if cfg.Explore < 0 || t.model == nil || cfg.Profile != ProfileSandbox {
		close(e.done)
		return e
	}
	e.ran = true
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	x := &explorer{t: t, seed: seed, sandbox: true}
	steps, deadline := DefaultExploreSteps, time.Now().Add(exploreCap)
	if cfg.Explore > 0 {
		steps, deadline = 1<<30, time.Now().Add(cfg.Explore)
	}
	go func() {
		defer close(e.done)
		start := time.Now()
		f, spent := x.explore(ctx, steps, deadline)
		e.result = x.result(cfg, f, spent, time.Since(start))
	}()
	return e
}

func (e *exploration) wait() []ScenarioResult {
	<-e.done
	if !e.ran {
		return nil
	}
	return []ScenarioResult{e.result}
}

func (x *explorer) result(cfg Config, f *finding, spent int, d time.Duration) ScenarioResult {
	res := ScenarioResult{
		Feature: "Exploration", URI: fmt.Sprintf("explorer(seed=%d)", x.seed), Name: fmt.Sprintf("Random requests judged by the model (seed %d, %d requests)", x.seed, spent),
		Area: ruleModel, Level: LevelSandbox, Maturity: "stable", Status: Passed, Duration: d,
		Tags: []string{"@sandbox", "@writes", "@" + ruleModel},
	}
	if f == nil {
		return res
	}
	res.Status = Failed
	res.Rule, res.RuleLevel = f.violation.rule, f.violation.level
	res.FailedStep = "every answer agrees with the model: " + f.violation.rule
	res.Request = f.violation.request
	scenario := x.gherkin(f)
	how := "the shortest sequence that still fails, replayed one request at a time"
	if !f.shrunk {
		how = "the sequence that failed (it did not fail again when replayed one request at a time, so it was not shrunk)"
	}
	res.Message = fmt.Sprintf("%s\n\n%s (%d requests), as a scenario for conform --features (rerun the exploration with --seed %d):\n%s",
		f.violation.message, how, len(f.steps), x.seed, scenario)
	if cfg.ReproDir != "" {
		if path, err := writeRepro(cfg.ReproDir, x.seed, scenario); err != nil {
			res.Message += "\n(could not write the scenario: " + err.Error() + ")"
		} else {
			res.Message += "\nwritten to " + path
		}
	}
	return res
}

// Explore runs only the explorer, for cfg.Explore (the bounded exploration
// of a run when zero): the long soak of `conform explore`. It needs the sandbox's fresh accounts, so
// it never writes with a live key.
func Explore(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Profile != ProfileSandbox {
		return nil, fmt.Errorf("%w: the explorer needs fresh accounts: run it with --profile sandbox", ErrUsage)
	}
	tgt := &target{baseURL: strings.TrimRight(cfg.BaseURL, "/"), key: cfg.APIKey, profile: cfg.Profile, redact: redactor(cfg.APIKey)}
	tgt.client = newClient(cfg, tgt)
	if err := preflight(ctx, tgt); err != nil {
		return nil, err
	}
	tgt.model = startModel(ctx, cfg, tgt)
	start := time.Now()
	res := startExploring(ctx, cfg, tgt).wait()
	rep := newReport(cfg, start, time.Since(start))
	rep.Scenarios = res
	if cfg.Summary != nil {
		w := newRedactingWriter(cfg.Summary, cfg.APIKey)
		rep.WriteSummary(w)
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("writing the summary: %w", err)
		}
	}
	return rep, nil
}
