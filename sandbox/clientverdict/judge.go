package clientverdict

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/testcampaign/kit/docs"
	"github.com/testcampaign/kit/sandbox"
)

// Outcomes of a rule.
const (
	Held         = "held"
	Broken       = "broken"
	NotExercised = "not exercised"
)

// Bounds of a verdict's answer.
const (
	// MaxBreaksShown is how many breaks of one rule a verdict lists; it
	// counts the others.
	MaxBreaksShown = 10
	// MaxDeliveries is how many of the account's delivery attempts are
	// judged: all the outbox keeps.
	MaxDeliveries = 1 << 20
)

// Judgement thresholds of the client rules, as docs/contract.md states them.
const (
	// MaxSends is how many times in a row a failing request may be sent
	// (CLI-7).
	MaxSends = 5
	// MinRetryWait is the least a retry waits after a failure that did not
	// say how long to wait (CLI-8).
	MinRetryWait = 100 * time.Millisecond
)

// Window limits a verdict to part of the account's history: the requests
// that arrived at or after Since on the account's clock, or after the
// request numbered After. The zero Window is the whole trace.
type Window struct {
	Since time.Time
	After uint64
}

// Verdict is how a client did against each client rule.
type Verdict struct {
	// Held is true when no rule was broken.
	Held bool `json:"held"`
	// Requests and Deliveries count what was judged: the requests of the
	// window, and the delivery attempts.
	Requests   int `json:"requests"`
	Deliveries int `json:"deliveries"`
	// LastRequest is the number of the account's latest request the trace
	// holds, 0 for none: pass it as after to judge only what follows.
	LastRequest uint64 `json:"lastRequest"`
	// Forgotten counts the account's requests the trace no longer holds.
	Forgotten uint64        `json:"forgotten"`
	Rules     []RuleVerdict `json:"rules"`
}

// RuleVerdict is how a client did against one rule.
type RuleVerdict struct {
	ID    string `json:"id"`
	Level string `json:"level"`
	Rule  string `json:"rule"`
	// Outcome is Held, Broken or NotExercised.
	Outcome string `json:"outcome"`
	// Judged counts the times the client met the rule.
	Judged int `json:"judged"`
	// BrokenTimes counts the breaks; Breaks lists the first MaxBreaksShown.
	BrokenTimes int     `json:"brokenTimes"`
	Breaks      []Break `json:"breaks"`
}

// Break is one time a client broke a rule, with what shows it.
type Break struct {
	Why        string     `json:"why"`
	Requests   []Evidence `json:"requests"`
	Deliveries []string   `json:"deliveries"`
}

// Evidence names one request of the trace.
type Evidence struct {
	// Request is its number in the account's journal.
	Request uint64       `json:"request"`
	Method  string       `json:"method"`
	Path    string       `json:"path"`
	At      sandbox.Time `json:"at"`
	// Status is its answer's, nil when none was sent.
	Status *int `json:"status"`
	// Fault is the ID of the planned fault that hit it, if one did.
	Fault string `json:"fault,omitempty"`
}

// judgement gathers one rule's verdict.
type judgement struct {
	judged int
	broken int
	breaks []Break
}

func (j *judgement) held() { j.judged++ }

func (j *judgement) broke(why string, requests []*exchange, deliveries ...string) {
	j.judged++
	j.broken++
	if len(j.breaks) == MaxBreaksShown {
		return
	}
	b := Break{Why: why, Requests: make([]Evidence, 0, len(requests)), Deliveries: deliveries}
	if b.Deliveries == nil {
		b.Deliveries = []string{}
	}
	for _, e := range requests {
		b.Requests = append(b.Requests, e.evidence())
	}
	j.breaks = append(j.breaks, b)
}

func (e *exchange) evidence() Evidence {
	ev := Evidence{Request: e.request, Method: e.method, Path: e.path, At: sandbox.At(time.Unix(0, e.at)), Fault: e.faultID}
	if e.status != 0 {
		status := e.status
		ev.Status = &status
	}
	return ev
}

// name is how a why names a request: "POST /v1/campaigns (request 4)".
func (e *exchange) name() string {
	return fmt.Sprintf("%s %s (request %d)", e.method, e.path, e.request)
}

// waited is how long passed between the end of a's answer and b's arrival:
// on the account's clock, or in real time where that went further.
func waited(a, b *exchange) time.Duration {
	return time.Duration(max(b.at-a.answered, b.arrived-a.ended))
}

// after reports whether b arrived once a's answer was over, so that the
// client could have acted on it.
func after(a, b *exchange) bool {
	return b.arrived >= a.ended
}

// Judge judges the exchanges of a trace in the window, and the delivery
// attempts of the account's outbox (nil for none), against every client
// rule.
func Judge(t *Trace, deliveries []sandbox.Delivery, w Window) Verdict {
	kept, forgotten := t.snapshot()
	v := Verdict{Forgotten: forgotten}
	if len(kept) > 0 {
		v.LastRequest = kept[len(kept)-1].request
	}
	in := kept[:0]
	for _, e := range kept {
		if e.request > w.After && (w.Since.IsZero() || e.at >= w.Since.UnixNano()) {
			in = append(in, e)
		}
	}
	// The deliveries of the window are those attempted since it began: at
	// its time, or at the first request after its request number; with no
	// request after that number, none.
	var from time.Time
	allDeliveries := true
	switch {
	case !w.Since.IsZero():
		from, allDeliveries = w.Since, false
	case w.After > 0 && len(in) > 0:
		from, allDeliveries = time.Unix(0, in[0].at), false
	case w.After > 0:
		deliveries = nil
	}
	var judgedDeliveries []sandbox.Delivery
	for _, d := range deliveries {
		if allDeliveries || !d.At.Std().Before(from) {
			judgedDeliveries = append(judgedDeliveries, d)
		}
	}
	v.Requests, v.Deliveries = len(in), len(judgedDeliveries)
	judged := map[string]*judgement{}
	for _, r := range docs.ClientRules() {
		judged[r.ID] = &judgement{}
	}
	judgeRequests(in, judged)
	judgeRetries(in, judged)
	judgeDeliveries(judgedDeliveries, judged)
	v.Held = true
	for _, r := range docs.ClientRules() {
		j := judged[r.ID]
		rv := RuleVerdict{ID: r.ID, Level: r.Level, Rule: r.Text, Judged: j.judged, BrokenTimes: j.broken, Breaks: j.breaks, Outcome: Held}
		switch {
		case j.broken > 0:
			rv.Outcome = Broken
			v.Held = false
		case j.judged == 0:
			rv.Outcome = NotExercised
		}
		if rv.Breaks == nil {
			rv.Breaks = []Break{}
		}
		v.Rules = append(v.Rules, rv)
	}
	return v
}

// judgeRequests judges what each request is on its own (CLI-1 to CLI-3),
// and what the client sent after an answer told it something (CLI-4, CLI-5,
// CLI-6, CLI-9, CLI-10, CLI-11).
func judgeRequests(in []exchange, j map[string]*judgement) {
	// nextSame[i] is the index of the next send of in[i]'s request, or -1:
	// a link to follow, so that finding a request sent again costs a hop,
	// not a scan of the trace.
	nextSame := make([]int, len(in))
	last := map[uint64]int{}
	for i := len(in) - 1; i >= 0; i-- {
		nextSame[i] = -1
		if k, ok := last[in[i].same]; ok {
			nextSame[i] = k
		}
		last[in[i].same] = i
	}
	sentAgain := func(i int) *exchange {
		for k := nextSame[i]; k >= 0; k = nextSame[k] {
			if after(&in[i], &in[k]) {
				return &in[k]
			}
		}
		return nil
	}
	for i := range in {
		e := &in[i]
		if e.authProblem != "" {
			j["CLI-1"].broke(e.name()+": its Authorization header is not `Bearer <key>`: "+e.authProblem, []*exchange{e})
		} else {
			j["CLI-1"].held()
		}
		if e.hasBody {
			if e.mediaProblem != "" {
				j["CLI-2"].broke(e.name()+": "+e.mediaProblem, []*exchange{e})
			} else {
				j["CLI-2"].held()
			}
		}
		if e.keyIn != "" {
			j["CLI-3"].broke(e.name()+": an API key is in its "+e.keyIn, []*exchange{e})
		} else {
			j["CLI-3"].held()
		}
		next := firstAfter(in, i)
		if e.status == http.StatusTooManyRequests && e.retryAfter >= 0 {
			judgeWait(j["CLI-4"], e, next, e.retryAfter, "with Retry-After asking for "+seconds(e.retryAfter))
		}
		if e.resetWait >= 0 {
			judgeWait(j["CLI-5"], e, next, e.resetWait, "with X-RateLimit-Remaining 0 and X-RateLimit-Reset "+seconds(e.resetWait)+" away")
		}
		if e.retryAfter >= 0 {
			again := sentAgain(i)
			judgeWait(j["CLI-6"], e, again, e.retryAfter, "with Retry-After asking for "+seconds(e.retryAfter))
		}
		if e.status >= 400 && e.status < 500 && e.status != http.StatusRequestTimeout && e.status != http.StatusTooManyRequests {
			switch {
			case next == nil:
			case next.same == e.same:
				j["CLI-9"].broke(fmt.Sprintf("%s was answered %d and sent again unchanged as request %d", e.name(), e.status, next.request), []*exchange{e, next})
			default:
				j["CLI-9"].held()
			}
		}
		if e.status == http.StatusUnauthorized {
			switch {
			case next == nil:
			case next.route == e.route:
				j["CLI-10"].broke(fmt.Sprintf("%s was refused with 401 and sent again with the same key as request %d", e.name(), next.request), []*exchange{e, next})
			default:
				j["CLI-10"].held()
			}
		}
		if e.method == http.MethodPost && e.lost() {
			// Any later send counts, even one that arrived before the
			// sandbox saw the first end: a client that gave up knew of
			// its loss before the sandbox did.
			var again *exchange
			if k := nextSame[i]; k >= 0 {
				again = &in[k]
			}
			if again == nil {
				j["CLI-11"].held()
				continue
			}
			j["CLI-11"].broke(fmt.Sprintf("%s lost its answer (%s) and was sent again as request %d, %s", e.name(), e.howLost(), again.request, secondRecord(e, again)), []*exchange{e, again})
		}
	}
}

// firstAfter returns the first exchange after in[i] that arrived once its
// answer was over, or nil: the next request the client sent knowing it.
func firstAfter(in []exchange, i int) *exchange {
	for k := i + 1; k < len(in); k++ {
		if after(&in[i], &in[k]) {
			return &in[k]
		}
	}
	return nil
}

// judgeWait judges whether next came long enough after e, whose answer
// told the client to wait; a client that sent nothing after e has not met
// the rule.
func judgeWait(j *judgement, e, next *exchange, want time.Duration, told string) {
	if next == nil {
		return
	}
	if got := waited(e, next); got < want {
		j.broke(fmt.Sprintf("%s was answered %d %s, and %s was sent %s later", e.name(), e.status, told, next.name(), seconds(got)), []*exchange{e, next})
		return
	}
	j.held()
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f s", d.Seconds())
}

// howLost says how an exchange lost its answer.
func (e *exchange) howLost() string {
	switch {
	case e.abandoned:
		return "the client gave up before it came"
	case e.network != "":
		return "network fault " + e.network + " " + e.faultID
	}
	return "no answer was sent"
}

// secondRecord says what a re-sent POST did: whether both sends were
// carried out, as far as the trace tells.
func secondRecord(first, again *exchange) string {
	if first.network == sandbox.NetworkTruncate && again.status >= 200 && again.status < 300 {
		return "and both were carried out: two records where the client meant one"
	}
	return "which may create a second record"
}

// judgeRetries judges the runs of sends of one request, each after the
// previous one failed (CLI-7, CLI-8).
func judgeRetries(in []exchange, j map[string]*judgement) {
	type run struct {
		last     *exchange
		sends    int
		lastWait time.Duration
		reported bool
	}
	runs := map[uint64]*run{}
	for i := range in {
		e := &in[i]
		r := runs[e.same]
		if r == nil || !r.last.failed() || !after(r.last, e) {
			if r != nil && r.last.failed() && !r.reported {
				j["CLI-7"].held()
			}
			runs[e.same] = &run{last: e, sends: 1, lastWait: -1}
			continue
		}
		prev := r.last
		wait := waited(prev, e)
		r.sends++
		r.last = e
		if prev.retryAfter < 0 {
			switch {
			case wait < MinRetryWait:
				j["CLI-8"].broke(fmt.Sprintf("request %d retried %s %s after its failure, sooner than %s", e.request, prev.name(), seconds(wait), seconds(MinRetryWait)), []*exchange{prev, e})
			case r.lastWait >= 0 && wait < r.lastWait/2:
				j["CLI-8"].broke(fmt.Sprintf("request %d retried %s after %s, less than half the %s the retry before it waited", e.request, prev.name(), seconds(wait), seconds(r.lastWait)), []*exchange{prev, e})
			default:
				j["CLI-8"].held()
			}
			r.lastWait = wait
		}
		if r.sends > MaxSends && !r.reported {
			r.reported = true
			j["CLI-7"].broke(fmt.Sprintf("%s was sent %d times in a row, each after the previous send failed: more than %d", e.method+" "+e.path, r.sends, MaxSends), []*exchange{prev, e})
		}
	}
	for _, r := range runs {
		if r.last.failed() && !r.reported {
			j["CLI-7"].held()
		}
	}
}

// judgeDeliveries judges the receiver's answers to the delivery attempts
// (CLI-12, CLI-13, CLI-14).
func judgeDeliveries(deliveries []sandbox.Delivery, j map[string]*judgement) {
	for _, d := range deliveries {
		ok := d.StatusCode >= 200 && d.StatusCode < 300
		fault := ""
		if d.Fault != nil {
			fault = d.Fault.Webhook
		}
		switch {
		case fault == sandbox.WebhookBadSignature:
			judgeRefusal(j["CLI-12"], d, ok, "whose signature does not verify")
		case fault == sandbox.WebhookStaleTimestamp:
			judgeRefusal(j["CLI-13"], d, ok, "whose timestamp is 10 minutes old")
		case ok:
			j["CLI-14"].held()
		case d.StatusCode != 0:
			j["CLI-14"].broke(fmt.Sprintf("delivery %s of %s %s was answered %d by the receiver", d.ID, d.EventType, d.EventID, d.StatusCode), nil, d.ID)
		case d.Error == "timeout":
			j["CLI-14"].broke(fmt.Sprintf("delivery %s of %s %s had no answer within the attempt's 10 s", d.ID, d.EventType, d.EventID), nil, d.ID)
		}
	}
}

func judgeRefusal(j *judgement, d sandbox.Delivery, accepted bool, what string) {
	switch {
	case accepted:
		j.broke(fmt.Sprintf("delivery %s of %s %s, %s, was accepted with %d", d.ID, d.EventType, d.EventID, what, d.StatusCode), nil, d.ID)
	case d.StatusCode != 0:
		j.held()
	}
}

// ParseWindow reads the since and after parameters of GET /_sandbox/verdict:
// a time in RFC 3339, or a request number of the journal; at most one of
// them. It returns an INVALID_PARAMETER error for anything else.
func ParseWindow(since, after string) (Window, error) {
	var w Window
	switch {
	case since != "" && after != "":
		return w, sandbox.Errorf(sandbox.ErrInvalidParameter, "give since or after, not both")
	case since != "":
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return w, sandbox.Errorf(sandbox.ErrInvalidParameter, "since must be a time in RFC 3339, as 2026-01-01T00:00:30.000Z (got %q)", sandbox.Echo(since))
		}
		w.Since = t
	case after != "":
		n, err := strconv.ParseUint(after, 10, 64)
		if err != nil {
			return w, sandbox.Errorf(sandbox.ErrInvalidParameter, "after must be a request number, an integer from 0 up (got %q)", sandbox.Echo(after))
		}
		w.After = n
	}
	return w, nil
}
