package clientverdict

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
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
	// Reaction is how long after an answer a request on another connection
	// must arrive, when the client had other requests in flight, to be
	// taken as sent once the client had the answer: one sent sooner may
	// have been on its way already.
	Reaction = 10 * time.Millisecond
	// NewConnReaction is as Reaction, for a request on a connection opened
	// for it while the client had other requests in flight.
	NewConnReaction = 100 * time.Millisecond
	// LibraryRetryWithin is how soon after a connection closed an HTTP
	// library sends a request again by itself.
	LibraryRetryWithin = 100 * time.Millisecond
	// PollAfter is how long a client waits before it asks again for a
	// record it was told is not there (CLI-9).
	PollAfter = 100 * time.Millisecond
	// CheckWithin is how many requests after a lost POST the client's
	// check of what it made is looked for among (CLI-11).
	CheckWithin = 100
	// NewCallAfter is the least quiet gap that ends a retry run; a longer
	// one ends it only when it is also GapTimesBackOff times the run's
	// longest wait so far (CLI-7, CLI-8).
	NewCallAfter    = 10 * time.Second
	GapTimesBackOff = 10
)

// backOffBar is the least the longest wait of a retry run must have
// reached by its retry numbered n, from 1 (CLI-8): nothing asked of the
// first retry, 10 ms by the second, 100 ms by the third, and twice as much
// by each retry after.
func backOffBar(n int) time.Duration {
	switch {
	case n <= 1:
		return 0
	case n == 2:
		return 10 * time.Millisecond
	}
	return 100 * time.Millisecond << min(n-3, 20)
}

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

// judgements are the verdicts of the client rules in the making, each at
// its rule's number: CLI-7's at cli7.
type judgements [15]judgement

// The client rules' numbers, as judgements index them.
const (
	cli1 = iota + 1
	cli2
	cli3
	cli4
	cli5
	cli6
	cli7
	cli8
	cli9
	cli10
	cli11
	cli12
	cli13
	cli14
)

// ruleNumber is the number of a client rule the verdict judges: 7 for
// CLI-7. A rule of the contract without one is never judged, which
// TestEveryClientRuleIsJudged rules out.
func ruleNumber(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, docs.ClientPrefix+"-"))
	return n, err == nil && n >= cli1 && n <= cli14
}

// fail counts a break, and reports whether it is one the verdict shows,
// which the caller then explains with show: the explanations of breaks
// only counted are never written.
func (j *judgement) fail() bool {
	j.judged++
	j.broken++
	return len(j.breaks) < MaxBreaksShown
}

// show lists a break that fail said is shown.
func (j *judgement) show(why string, requests []*exchange, deliveries ...string) {
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
	ev := Evidence{Request: e.request, Method: e.method, Path: e.path, At: sandbox.At(time.Unix(0, e.at))}
	if e.fault != 0 {
		ev.Fault = faultID(e.fault)
	}
	if e.status != 0 {
		status := int(e.status)
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

// view is the trace of a window as the rules read it: the exchanges in the
// order they arrived, with what is known of their order in time.
type view struct {
	in []exchange
	// overlapped[i] is true when another request of the key was in flight
	// while in[i] was.
	overlapped []bool
	// nextSame[i] is the index of the next send of in[i]'s request, -1 for
	// none: a link to follow, so that finding a request sent again costs a
	// hop, not a scan of the trace.
	nextSame []int
	// lastOther[i] is the index of the latest request before in[i] that was
	// not the same request, -1 for none.
	lastOther []int
	// sameID[i] numbers in[i]'s request among the distinct requests of the
	// window, from 0; requests counts them.
	sameID   []int32
	requests int
	// firstOf holds, once asked for, the index of the first exchange of
	// each connection.
	firstOf map[uint64]int
}

func newView(in []exchange) *view {
	v := &view{
		in: in, overlapped: make([]bool, len(in)), nextSame: make([]int, len(in)),
		lastOther: make([]int, len(in)), sameID: make([]int32, len(in)),
	}
	ids := make(map[uint64]int32, len(in)/4)
	var lastOf []int
	var maxEnd int64
	for i := range in {
		e := &in[i]
		id, ok := ids[e.same]
		if !ok {
			id = int32(len(lastOf))
			ids[e.same] = id
			lastOf = append(lastOf, -1)
		}
		v.sameID[i] = id
		v.nextSame[i] = -1
		if k := lastOf[id]; k >= 0 {
			v.nextSame[k] = i
		}
		lastOf[id] = i
		if i > 0 && e.arrived < maxEnd || i+1 < len(in) && in[i+1].arrived < e.ended {
			v.overlapped[i] = true
		}
		maxEnd = max(maxEnd, e.ended)
		switch {
		case i == 0:
			v.lastOther[i] = -1
		case in[i-1].same != e.same:
			v.lastOther[i] = i - 1
		default:
			v.lastOther[i] = v.lastOther[i-1]
		}
	}
	v.requests = len(lastOf)
	return v
}

// knew reports whether the client sent in[b] once it had in[a]'s answer,
// so that it could act on it. A request that arrived while in[a] was
// served was sent before. One that came after it on in[a]'s connection,
// or after that connection ended, came after, unless other requests were
// in flight with in[a] and it came within Reaction: a worker waiting for a
// connection may be handed in[a]'s. One that came on another connection
// that had carried a request before came after when neither request
// overlapped another. One that came first on a connection the client
// opened once in[a] was over came after; first on one it had opened
// before, it was on its way alongside. Where the server did not note when
// connections opened, one that came first on its connection came after
// when it arrived Reaction later, NewConnReaction when the client had
// other requests in flight.
func (v *view) knew(a, b int) bool {
	ea, eb := &v.in[a], &v.in[b]
	if eb.arrived < ea.ended {
		return false
	}
	gap := time.Duration(eb.arrived - ea.ended)
	concurrent := v.overlapped[a] || v.overlapped[b]
	switch {
	case ea.conn != 0 && eb.conn == ea.conn || ea.connEnded():
		return !v.overlapped[a] || gap >= Reaction
	case eb.opened != 0 && !eb.connFirst:
		return !concurrent || gap >= Reaction
	case eb.opened != 0:
		return eb.opened >= ea.ended || gap >= NewConnReaction
	case !v.firstOnConn(b):
		return !concurrent || gap >= Reaction
	case concurrent:
		return gap >= NewConnReaction
	}
	return gap >= Reaction
}

// firstOnConn reports whether in[i] is the first request the trace holds
// of its connection.
func (v *view) firstOnConn(i int) bool {
	if v.in[i].conn == 0 {
		return false
	}
	if v.firstOf == nil {
		v.firstOf = make(map[uint64]int, len(v.in)/4)
		for k := range v.in {
			if _, ok := v.firstOf[v.in[k].conn]; !ok {
				v.firstOf[v.in[k].conn] = k
			}
		}
	}
	return v.firstOf[v.in[i].conn] == i
}

// nextKnowing returns the index of the first request the client sent once
// it had in[i]'s answer, or -1.
func (v *view) nextKnowing(i int) int {
	for k := i + 1; k < len(v.in); k++ {
		if v.knew(i, k) {
			return k
		}
	}
	return -1
}

// sentAgain returns the index of the first send of in[i]'s request that
// the client made once it had in[i]'s answer, or -1.
func (v *view) sentAgain(i int) int {
	for k := v.nextSame[i]; k >= 0; k = v.nextSame[k] {
		if v.knew(i, k) {
			return k
		}
	}
	return -1
}

// libraryRetry reports whether in[b] is in[a] sent again by the client's
// HTTP library, not by the application: in[a] was idempotent, and its
// connection, one that had carried a request before, closed before any
// byte of an answer; in[b] came at once on another connection.
func (v *view) libraryRetry(a, b int) bool {
	ea, eb := &v.in[a], &v.in[b]
	if !ea.droppedBeforeAnswer() || !ea.idempotent() || ea.conn == 0 || eb.conn == ea.conn || time.Duration(eb.arrived-ea.ended) > LibraryRetryWithin {
		return false
	}
	if ea.opened != 0 {
		// The server counted the connection's requests, controls too.
		return !ea.connFirst
	}
	return !v.firstOnConn(a)
}

// Judge judges the exchanges of a trace in the window, and the delivery
// attempts of the account's outbox (nil for none), against every client
// rule.
func Judge(t *Trace, deliveries []sandbox.Delivery, w Window) Verdict {
	buf := snapshots.Get().(*[]exchange)
	defer snapshots.Put(buf)
	kept, forgotten := t.snapshot(*buf)
	*buf = kept
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
	rules := docs.ClientRules()
	judged := new(judgements)
	view := newView(in)
	judgeRequests(view, judged)
	judgeLostPosts(view, &judged[cli11])
	judgeRetries(view, &judged[cli7], &judged[cli8])
	judgeDeliveries(judgedDeliveries, judged)
	v.Held = true
	for _, r := range rules {
		j := &judgement{}
		if n, ok := ruleNumber(r.ID); ok {
			j = &judged[n]
		}
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

// snapshots are the buffers verdicts copy a trace into: a full trace's is
// over a megabyte, which each verdict would otherwise allocate anew.
var snapshots = sync.Pool{New: func() any { return new([]exchange) }}

// judgeRequests judges what each request is on its own (CLI-1 to CLI-3),
// and what the client sent once an answer told it something (CLI-4, CLI-5,
// CLI-6, CLI-9, CLI-10). A client that sent nothing after such an answer
// met the rule, and held it.
func judgeRequests(v *view, j *judgements) {
	in := v.in
	for i := range in {
		e := &in[i]
		switch {
		case e.auth == authRight:
			j[cli1].held()
		case j[cli1].fail():
			why := "its scheme is not written `Bearer` as the spec gives it"
			if e.auth == authSpaces {
				why = "it has more than one space around the key"
			}
			j[cli1].show(e.name()+": its Authorization header is not `Bearer <key>`: "+why, []*exchange{e})
		}
		if e.hasBody {
			switch {
			case e.media == mediaRight:
				j[cli2].held()
			case j[cli2].fail():
				why := "it has a body and no Content-Type"
				if e.media == mediaOther {
					why = "it has a body sent as another type than application/json"
				}
				j[cli2].show(e.name()+": "+why, []*exchange{e})
			}
		}
		switch {
		case e.keyIn == keyNowhere:
			j[cli3].held()
		case j[cli3].fail():
			j[cli3].show(e.name()+": the API key it authenticates with is also in its "+keyPlaces[e.keyIn], []*exchange{e})
		}
		next := -1
		if e.status == http.StatusTooManyRequests && e.retryAfter >= 0 || e.resetWait >= 0 || e.status == http.StatusUnauthorized || clientError(e) {
			next = v.nextKnowing(i)
		}
		if e.status == http.StatusTooManyRequests && e.retryAfter >= 0 {
			judgeWait(&j[cli4], v, i, next, e.retryAfter, "with Retry-After asking for %s")
		}
		if e.resetWait >= 0 {
			judgeWait(&j[cli5], v, i, next, e.resetWait, "with X-RateLimit-Remaining 0 and X-RateLimit-Reset %s away")
		}
		if e.retryAfter >= 0 {
			judgeWait(&j[cli6], v, i, v.sentAgain(i), e.retryAfter, "with Retry-After asking for %s")
		}
		if clientError(e) {
			switch {
			case next < 0 || in[next].same != e.same:
				j[cli9].held()
			case e.status == http.StatusNotFound && (e.method == http.MethodGet || e.method == http.MethodHead) && waited(e, &in[next]) >= PollAfter:
				// Polling for a record that is not there yet.
				j[cli9].held()
			case j[cli9].fail():
				j[cli9].show(fmt.Sprintf("%s was answered %d and sent again unchanged as request %d, %s later", e.name(), e.status, in[next].request, seconds(waited(e, &in[next]))), []*exchange{e, &in[next]})
			}
		}
		if e.status == http.StatusUnauthorized {
			switch {
			case next < 0 || in[next].route != e.route:
				j[cli10].held()
			case j[cli10].fail():
				j[cli10].show(fmt.Sprintf("%s was refused with 401 and sent again with the same key as request %d", e.name(), in[next].request), []*exchange{e, &in[next]})
			}
		}
	}
}

// clientError reports whether the exchange was answered with a 4xx that
// no retry can change (CLI-9); a 401 is CLI-10's.
func clientError(e *exchange) bool {
	return e.status >= 400 && e.status < 500 && e.received == receivedAll &&
		e.status != http.StatusRequestTimeout && e.status != http.StatusTooManyRequests && e.status != http.StatusUnauthorized
}

// judgeWait judges whether in[next] came long enough after in[i], whose
// answer told the client to wait, as told says with the wait for its %s; a
// client that sent nothing after it waited as long as it was told.
func judgeWait(j *judgement, v *view, i, next int, want time.Duration, told string) {
	if next < 0 {
		j.held()
		return
	}
	e, n := &v.in[i], &v.in[next]
	got := waited(e, n)
	switch {
	case got >= want:
		j.held()
	case j.fail():
		j.show(fmt.Sprintf("%s was answered %d "+told+", and %s was sent %s later", e.name(), e.status, seconds(want), n.name(), seconds(got)), []*exchange{e, n})
	}
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f s", d.Seconds())
}

// judgeLostPosts judges every POST whose answer was lost and the first
// later send of the same request (CLI-11). A re-send after the client
// checked, with a GET answered in full, and found no record, is held: the
// first send was not carried out, and the check told the client so.
func judgeLostPosts(v *view, j *judgement) {
	in := v.in
	for i := range in {
		e := &in[i]
		if e.method != http.MethodPost || !e.lost() {
			continue
		}
		// A client that gave up knew of its loss before the sandbox saw
		// the request end: any later send counts.
		again := -1
		for k := v.nextSame[i]; k >= 0; k = v.nextSame[k] {
			if e.abandoned || v.knew(i, k) {
				again = k
				break
			}
		}
		if again < 0 {
			j.held()
			continue
		}
		check := v.checkBetween(i, again)
		if check >= 0 && !e.wroteRecord() {
			j.held()
			continue
		}
		if !j.fail() {
			continue
		}
		a := &in[again]
		evidence := []*exchange{e, a}
		what := "the first was not carried out, but the client sent it again without checking"
		switch {
		case e.wroteRecord() && check >= 0:
			evidence = append(evidence, &in[check])
			what = fmt.Sprintf("after %s showed what the first had made", in[check].name())
		case e.wroteRecord():
			what = "and the first had been carried out"
		}
		if e.wroteRecord() && a.wroteRecord() {
			what += ": two records where the client meant one"
		}
		j.show(fmt.Sprintf("%s lost its answer (%s) and was sent again as request %d, %s; journal entries %d and %d (GET /_sandbox/requests) show both", e.name(), e.howLost(), a.request, what, e.request, a.request), evidence)
	}
}

// checkBetween returns the index of a GET of in[i]'s collection or of a
// record in it, answered in full with a success, among the CheckWithin
// requests after in[i], that the client sent once it knew in[i]'s answer
// was lost and that ended before in[again] arrived; -1 for none.
func (v *view) checkBetween(i, again int) int {
	e := &v.in[i]
	for k := i + 1; k < min(again, i+1+CheckWithin); k++ {
		c := &v.in[k]
		if c.method == http.MethodGet && c.received == receivedAll && c.status >= 200 && c.status < 300 &&
			(c.path == e.path || strings.HasPrefix(c.path, e.path+"/")) &&
			(e.abandoned || c.arrived >= e.ended) && c.ended <= v.in[again].arrived {
			return k
		}
	}
	return -1
}

// howLost says how an exchange lost its answer, as its journal entry does.
func (e *exchange) howLost() string {
	var b strings.Builder
	switch {
	case e.abandoned && e.fault != 0:
		b.WriteString("the client gave up while fault " + faultID(e.fault) + " held it back")
	case e.abandoned:
		b.WriteString("the client gave up before it came")
	case e.network != 0:
		b.WriteString("network fault " + faultID(e.fault) + ", " + sandbox.NetworkFaults[e.network-1])
		if e.after {
			b.WriteString(" after the API answered")
		}
	case e.status == http.StatusGatewayTimeout:
		b.WriteString("a 504: a gateway lost it")
	default:
		b.WriteString("no answer was sent")
	}
	fmt.Fprintf(&b, "; its journal entry says carriedOut %t", e.carriedOut)
	if e.made != 0 {
		fmt.Fprintf(&b, ", status %d", e.made)
	}
	b.WriteString(", received " + receivedWords[e.received])
	return b.String()
}

var receivedWords = [...]string{receivedAll: "all", receivedNothing: "nothing", receivedHeaders: "headers", receivedPartial: "partial"}

// run is a retry run: the sends of one request, each sent once the client
// had the previous one's failed answer, from the first to where the
// application evidently gave up or started a new call.
type run struct {
	first, last int
	sends       int
	// retries numbers the retries; envelope is the longest wait before
	// one so far; waits counts those CLI-8 judges, and shown keeps the
	// first of them, for the why.
	retries  int
	envelope time.Duration
	waits    int
	shown    [shownWaits]time.Duration
	// slow is the retry at which the envelope fell short, 0 for none, and
	// slowEnvelope and slowBar what it was and should have been then.
	slow                  int
	slowEnvelope, slowBar time.Duration
}

// judgeRetries judges every retry run (CLI-7, CLI-8), once it is over.
func judgeRetries(v *view, sends, backOff *judgement) {
	in := v.in
	// current holds the index in runs of each request's current run, by
	// its number in the view; -1 before its first send.
	current := make([]int32, v.requests)
	for k := range current {
		current[k] = -1
	}
	runs := make([]run, 0, v.requests)
	end := func(r *run) {
		if !in[r.first].failed() {
			return
		}
		e := &in[r.last]
		switch {
		case r.sends <= MaxSends:
			sends.held()
		case sends.fail():
			sends.show(fmt.Sprintf("%s %s was sent %d times in a row, from request %d to request %d, each once the previous send had failed: more than %d", e.method, e.path, r.sends, in[r.first].request, e.request, MaxSends), []*exchange{&in[r.first], e})
		}
		switch {
		case r.waits == 0:
		case r.slow == 0:
			backOff.held()
		case backOff.fail():
			backOff.show(fmt.Sprintf("%s %s was retried %d times from request %d, waiting %s: by retry %d the longest wait was %s, short of the %s a run that backs off has reached by then", e.method, e.path, r.retries, in[r.first].request, listWaits(r.shown[:min(r.waits, shownWaits)], r.waits), r.slow, seconds(r.slowEnvelope), seconds(r.slowBar)), []*exchange{&in[r.first], e})
		}
	}
	for i := range in {
		e := &in[i]
		if k := current[v.sameID[i]]; k >= 0 {
			r := &runs[k]
			prev := &in[r.last]
			switch {
			case !v.knew(r.last, i):
				// Sent alongside the run's last send: concurrency, not a
				// retry.
				continue
			case !prev.failed():
			case v.libraryRetry(r.last, i):
				// The same send, as far as the application knows.
				r.last = i
				continue
			case v.lastOther[i] >= 0 && in[v.lastOther[i]].arrived >= prev.ended:
				// The application did something else in between: this is
				// a new call.
			case waited(prev, e) > max(NewCallAfter, GapTimesBackOff*max(r.envelope, prev.retryAfter)):
				// A quiet gap far longer than the run's back-off.
			default:
				wait := waited(prev, e)
				r.sends++
				r.retries++
				r.last = i
				r.envelope = max(r.envelope, wait)
				if prev.retryAfter < 0 {
					// Waits that Retry-After asked for are CLI-6's.
					if r.waits < shownWaits {
						r.shown[r.waits] = wait
					}
					r.waits++
					if bar := backOffBar(r.retries); r.slow == 0 && r.envelope < bar {
						r.slow, r.slowEnvelope, r.slowBar = r.retries, r.envelope, bar
					}
				}
				continue
			}
			end(r)
			// The run is over: its slot takes the next.
			runs[k] = run{first: i, last: i, sends: 1}
			continue
		}
		current[v.sameID[i]] = int32(len(runs))
		runs = append(runs, run{first: i, last: i, sends: 1})
	}
	for k := range runs {
		end(&runs[k])
	}
}

// shownWaits is how many of a run's waits the why of a break lists.
const shownWaits = 8

// listWaits lists the waits shown of a run that waited n times.
func listWaits(shown []time.Duration, n int) string {
	var b strings.Builder
	for i, w := range shown {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.3f", w.Seconds())
	}
	b.WriteString(" s")
	if n > len(shown) {
		fmt.Fprintf(&b, " and %d more", n-len(shown))
	}
	return b.String()
}

// judgeDeliveries judges the receiver's answers to the delivery attempts
// (CLI-12, CLI-13, CLI-14).
func judgeDeliveries(deliveries []sandbox.Delivery, j *judgements) {
	for _, d := range deliveries {
		ok := d.StatusCode >= 200 && d.StatusCode < 300
		fault := ""
		if d.Fault != nil {
			fault = d.Fault.Webhook
		}
		switch {
		case fault == sandbox.WebhookBadSignature:
			judgeRefusal(&j[cli12], d, ok, "whose signature does not verify")
		case fault == sandbox.WebhookStaleTimestamp:
			judgeRefusal(&j[cli13], d, ok, "whose timestamp is 10 minutes old")
		case ok:
			j[cli14].held()
		case d.StatusCode != 0:
			if j[cli14].fail() {
				j[cli14].show(fmt.Sprintf("delivery %s of %s %s was answered %d by the receiver", d.ID, d.EventType, d.EventID, d.StatusCode), nil, d.ID)
			}
		case d.Error == "timeout":
			if j[cli14].fail() {
				j[cli14].show(fmt.Sprintf("delivery %s of %s %s had no answer within the attempt's 10 s", d.ID, d.EventType, d.EventID), nil, d.ID)
			}
		}
	}
}

func judgeRefusal(j *judgement, d sandbox.Delivery, accepted bool, what string) {
	switch {
	case accepted:
		if j.fail() {
			j.show(fmt.Sprintf("delivery %s of %s %s, %s, was accepted with %d", d.ID, d.EventType, d.EventID, what, d.StatusCode), nil, d.ID)
		}
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
