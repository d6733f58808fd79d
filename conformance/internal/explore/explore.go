// Package explore sends seeded random sequences of requests to fresh sandbox
// accounts, each answer judged by the model, and shrinks what fails to the
// shortest sequence that still fails, printed as a scenario.
package explore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// Defaults of a run's bounded exploration.
const (
	// defaultExploreSteps is how many requests the bounded exploration of a
	// default --profile sandbox run sends.
	defaultExploreSteps = 400
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
}

var refRe = regexp.MustCompile(`\{([a-z]+[0-9]+)\}`)

// explorer runs sequences against one deployment.
type explorer struct {
	t    *transport.Target
	seed uint64
	// sandbox: each sequence runs on fresh accounts of its own.
	sandbox bool
	// pace keeps the explorer under its client address's budget.
	pace *pacer
	// deadline is when the exploration ends; no wait goes past it.
	deadline time.Time
}

// outcome is what one sequence did: the violation it found, if any, the
// steps that ran, and the requests it spent.
type outcome struct {
	violation *rules.RuleViolation
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
	sink  *rules.Sink
	spent int
}

func (x *explorer) newSession() *session {
	sink := rules.NewSink(x.t.Coverage)
	// The explorer's fresh accounts are its own: their windows are not the
	// operator's key's share to budget.
	sink.Unbudgeted = x.sandbox
	return &session{x: x, saved: map[string]string{}, sink: sink}
}

func (s *session) key(i int) string {
	for len(s.keys) <= i {
		k := s.x.t.Key
		if s.x.sandbox {
			k = kit.TestPrefix + "conform_x" + wire.RandomToken()
			s.x.t.Model.Own(k, true)
		}
		s.keys = append(s.keys, k)
		s.left = append(s.left, -1)
	}
	return s.keys[i]
}

// close drops the session's fresh accounts from the model: nothing will
// send to them again, and a long exploration must not keep them all.
func (s *session) close() {
	if !s.x.sandbox {
		return
	}
	for _, k := range s.keys {
		s.x.t.Model.Drop(k)
	}
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
func (s *session) run(ctx context.Context, st xstep, sequential bool) (bool, *rules.RuleViolation) {
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
			if h, ok := rules.LooseRateHeaders(e.Header); ok && strings.HasPrefix(path, "/v1") {
				s.left[st.key] = h.Remaining
			}
			if st.saveAs != "" && e.Status == http.StatusOK {
				if v, err := e.JSON(); err == nil {
					if x, err := wire.Lookup(v, st.saveAt); err == nil {
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
	if v, ok := s.sink.First(); ok && v.Level != docs.Should {
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

func (s *session) send(ctx context.Context, key, method, path, body, contentType string) (*wire.Exchange, error) {
	// The explorer waits out its client address's budget itself, within
	// its deadline.
	r := transport.Request{Method: method, Path: path, Key: key, ContentType: contentType, Sink: s.sink, SelfPaced: true}
	if body != "" {
		r.Body = []byte(body)
	}
	for waits := 0; ; waits++ {
		if err := s.x.pace.wait(ctx); err != nil {
			return nil, err
		}
		ex, err := s.x.t.Send(ctx, r)
		if err != nil {
			return nil, err
		}
		wait, throttled := s.x.pace.throttled(ex.Status, ex.Header)
		if !throttled {
			return ex, nil
		}
		if waits == maxClientWaits || time.Now().Add(wait).After(s.x.deadline) {
			return nil, errThrottled
		}
	}
}

// errThrottled ends a request the client's budget kept refusing: the
// exploration gives that sequence up rather than judge it.
var errThrottled = errors.New("the deployment's budget for this client address stayed spent")

// sequence runs steps in order, stopping at the first violation.
func (x *explorer) sequence(ctx context.Context, steps []xstep, sequential bool) outcome {
	s := x.newSession()
	defer s.close()
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
	violation rules.RuleViolation
	steps     []xstep
	shrunk    bool // the steps fail again when replayed one by one
}

// shrink looks for the shortest sequence that still breaks the same rule,
// replayed one request at a time as a scenario would: first the prefix up
// to the failure, then ever smaller chunks removed (delta debugging).
func (x *explorer) shrink(ctx context.Context, out outcome) *finding {
	return shrink(out, func(steps []xstep) outcome {
		if ctx.Err() != nil {
			return outcome{}
		}
		return x.sequence(ctx, steps, true)
	})
}

// shrink is the search of (*explorer).shrink, with replay running a
// sequence one request at a time on fresh accounts.
func shrink(out outcome, replay func([]xstep) outcome) *finding {
	f := &finding{violation: *out.violation, steps: out.ran[:out.failedAt+1]}
	budget := shrinkBudget
	fails := func(steps []xstep) (outcome, bool) {
		if budget <= 0 {
			return outcome{}, false
		}
		o := replay(steps)
		budget -= o.spent
		return o, o.violation != nil && o.violation.Rule == f.violation.Rule
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
	result kit.ScenarioResult
	ran    bool
}

// ExploreOptions are what a run asks of its exploration.
type ExploreOptions struct {
	// Duration is how long it runs: zero for the default bounded
	// exploration, negative for none.
	Duration time.Duration
	// Seed makes it reproducible; zero picks one at random.
	Seed uint64
	// ReproDir, if set, receives each shrunk failure as a .feature file.
	ReproDir string
	// Sandbox: the deployment has fresh accounts to explore with.
	Sandbox bool
}

// StartExploring starts the bounded exploration of a run (or a longer one
// with a duration) in the background; wait returns its result.
func StartExploring(ctx context.Context, opts ExploreOptions, t *transport.Target) *exploration {
	e := &exploration{done: make(chan struct{})}
	// Fresh accounts exist only in the sandbox; a live deployment is
	// explored only through `conform explore`.
	if opts.Duration < 0 || t.Model == nil || !opts.Sandbox {
		close(e.done)
		return e
	}
	e.ran = true
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	steps, deadline := defaultExploreSteps, time.Now().Add(exploreCap)
	if opts.Duration > 0 {
		steps, deadline = 1<<30, time.Now().Add(opts.Duration)
	}
	x := &explorer{t: t, seed: seed, sandbox: true, pace: newPacer(defaultPace), deadline: deadline}
	go func() {
		defer close(e.done)
		start := time.Now()
		f, spent := x.explore(ctx, steps, deadline)
		e.result = x.result(opts.ReproDir, f, spent, time.Since(start))
	}()
	return e
}

// Wait blocks until the exploration ends and returns its verdict as one
// scenario result, or none when it did not run.
func (e *exploration) Wait() []kit.ScenarioResult {
	<-e.done
	if !e.ran {
		return nil
	}
	return []kit.ScenarioResult{e.result}
}

func (x *explorer) result(reproDir string, f *finding, spent int, d time.Duration) kit.ScenarioResult {
	res := kit.ScenarioResult{
		Feature: "Exploration", URI: fmt.Sprintf("explorer(seed=%d)", x.seed), Name: fmt.Sprintf("Random requests judged by the model (seed %d, %d requests)", x.seed, spent),
		Area: model.RuleModel, Level: docs.Sandbox, Maturity: "stable", Status: kit.Passed, Duration: d,
		Tags:     []string{"@sandbox", "@writes", "@" + model.RuleModel},
		Explored: &kit.Exploration{Seed: x.seed, Requests: spent},
	}
	if f == nil {
		return res
	}
	res.Status = kit.Failed
	res.Rule, res.RuleLevel = f.violation.Rule, f.violation.Level
	res.FailedStep = "every answer agrees with the model: " + f.violation.Rule
	res.Request = f.violation.Request
	scenario := x.t.Redact(scenarioText(fmt.Sprintf("Found by conform's explorer (seed %d)", x.seed), f))
	how := "the shortest sequence that still fails, replayed one request at a time"
	if !f.shrunk {
		how = "the sequence that failed (it did not fail again when replayed one request at a time, so it was not shrunk)"
	}
	res.Message = fmt.Sprintf("%s\n\n%s (%d requests), as a scenario for conform --features (rerun the exploration with --seed %d):\n%s",
		f.violation.Message, how, len(f.steps), x.seed, scenario)
	if reproDir != "" {
		if path, err := writeRepro(reproDir, fmt.Sprintf("explorer-seed-%d.feature", x.seed), scenario); err != nil {
			res.Message += "\n(could not write the scenario: " + err.Error() + ")"
		} else {
			res.Message += "\nwritten to " + path
		}
	}
	return res
}
