package model

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// faultHeader names, on an answer a planned fault changed, the fault.
const faultHeader = "X-Sandbox-Fault"

// The network failures a fault may plan.
const (
	netReset     = "reset"
	netClose     = "close"
	netTruncate  = "truncate"
	netMalformed = "malformed"
	netTrickle   = "trickle"
)

// plannedFault is one fault of an account's plan, as POST /_sandbox/faults
// planned it.
type plannedFault struct {
	id      string
	method  string // "" for any
	path    string // "" for any; a final * matches every path it starts
	left    int    // requests it will still hit; -1 until cleared
	random  bool   // it has a rate below 1: whether it hits is drawn
	status  int
	network string
	// delay is how long it waits before the API sees the request
	// (delayMs); a client that gives up meanwhile has the request not
	// carried out (FAULT-42).
	delay time.Duration
	// after: phase "after", the API carries the request out first and the
	// fault acts on its answer (FAULT-41).
	after bool
	// retryAfter is the Retry-After its answer carries, "" for none
	// (FAULT-14, FAULT-15); headers are extra headers of the answer
	// (FAULT-16), which replace the sandbox's own; body, when set, is
	// answered instead of the envelope (FAULT-17), or of the empty body of
	// a stub, a status under 400 (FAULT-13).
	retryAfter string
	headers    map[string]string
	body       *string
}

func (f *plannedFault) matches(method, path string) bool {
	if f.method != "" && f.method != method {
		return false
	}
	if prefix, ok := strings.CutSuffix(f.path, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return f.path == "" || f.path == path
}

// answersInPlace says whether the fault answers instead of the API, so that
// the request spends no budget and changes nothing (FAULT-26, FAULT-28).
func (f *plannedFault) answersInPlace() bool {
	return !f.after && f.replaces()
}

// replaces says whether the fault's answer, or the lack of one, stands in
// for the API's: a status, a drop or a malformed body.
func (f *plannedFault) replaces() bool {
	return f.status != 0 || f.drops() || f.network == netMalformed
}

// drops says whether the fault drops the connection instead of answering.
func (f *plannedFault) drops() bool {
	return f.network == netReset || f.network == netClose
}

// carriesOut says whether the request reaches the API whatever its client
// sees of the answer, gives up on included (FAULT-43): any fault of phase
// after, a truncate or a trickle. A delay before the API carries it out
// only if the client waits it out.
func (f *plannedFault) carriesOut() bool {
	return f.after || (f.delay == 0 && (f.network == netTruncate || f.network == netTrickle))
}

func (f *plannedFault) String() string {
	what := strconv.Itoa(f.status)
	if f.network != "" {
		what = f.network
	} else if f.status == 0 {
		what = "delay"
	}
	target := strings.TrimSpace(f.method + " " + f.path)
	if target == "" {
		target = "every /v1 request"
	}
	return fmt.Sprintf("%s (%s, %s)", f.id, what, target)
}

// faultPlan is an account's planned faults, oldest first. known: the model
// holds the plan exactly; otherwise it learns which fault hit a request from
// X-Sandbox-Fault alone and asserts nothing about which one must.
type faultPlan struct {
	known   bool
	planned []*plannedFault
}

func (p *faultPlan) byID(id string) (int, *plannedFault) {
	for i, f := range p.planned {
		if f.id == id {
			return i, f
		}
	}
	return -1, nil
}

// candidates are the faults that may hit a request: those that match it up
// to and including the oldest one that hits every matching request (must,
// nil when none does), whose rate draws decide the others.
func (p *faultPlan) candidates(method, path string) (may []*plannedFault, must *plannedFault) {
	for _, f := range p.planned {
		if !f.matches(method, path) {
			continue
		}
		may = append(may, f)
		if !f.random {
			return may, f
		}
	}
	return may, nil
}

// fire counts one hit of f: it is gone once it has hit its count.
func (p *faultPlan) fire(f *plannedFault) {
	if f.left < 0 {
		return
	}
	f.left--
	if f.left == 0 {
		i, _ := p.byID(f.id)
		p.planned = append(p.planned[:i:i], p.planned[i+1:]...)
	}
}

// faultFields are the fields of a fault the model follows.
var faultFields = map[string]bool{
	"method": true, "path": true, "count": true, "rate": true, "seed": true, "status": true,
	"retryAfter": true, "delayMs": true, "network": true, "trickleMs": true, "headers": true, "body": true, "phase": true,
}

// faultOf reads a fault as planned (planned: a POST body, whose count
// defaults to 1) or as listed (whose count is what is left, null until
// cleared). ok is false when it has a field the model does not follow.
func faultOf(m map[string]any, planned bool) (*plannedFault, bool) {
	f := &plannedFault{id: str(m["id"]), method: str(m["method"]), path: str(m["path"]), network: str(m["network"]), left: -1}
	f.status, _ = intOf(m["status"])
	if d, ok := intOf(m["delayMs"]); ok && d > 0 {
		f.delay = time.Duration(d) * time.Millisecond
	}
	f.after = m["phase"] == "after"
	if r, ok := m["rate"].(json.Number); ok {
		x, err := strconv.ParseFloat(string(r), 64)
		f.random = err != nil || x < 1
	}
	count, hasCount := m["count"]
	switch n, isInt := intOf(count); {
	case isInt:
		f.left = n
	case planned && !hasCount && !f.random:
		f.left = 1
	}
	switch ra, has := m["retryAfter"]; {
	case !has && (f.status == http.StatusTooManyRequests || f.status == http.StatusServiceUnavailable):
		f.retryAfter = "1"
	case ra == nil:
	default:
		f.retryAfter = strings.Trim(fmt.Sprint(ra), `"`)
	}
	if h, ok := m["headers"].(map[string]any); ok {
		f.headers = map[string]string{}
		for name, v := range h {
			f.headers[name] = str(v)
		}
	}
	if b, ok := m["body"].(string); ok {
		f.body = &b
	}
	for k := range m {
		if !faultFields[k] && (planned || (k != "id" && k != "fired")) {
			return f, false
		}
	}
	return f, true
}

// planFault follows POST /_sandbox/faults: the fault joins the end of the
// plan (FAULT-1). A fault with fields the model does not follow leaves the
// plan unknown until it is listed, cleared or reset.
func (c *check) planFault() {
	o := c.o
	if o.Status != http.StatusOK {
		return
	}
	p := &c.a.plan
	b, _, err := decodeStrictObject(o.ReqBody)
	id := str(o.data()["id"])
	if err != nil || id == "" || !c.exact {
		p.known = false
		return
	}
	f, ok := faultOf(b, true)
	f.id = id
	p.known = p.known && ok
	p.planned = append(p.planned, f)
}

// clearFaults follows DELETE /_sandbox/faults: nothing is planned after it.
func (c *check) clearFaults() {
	if c.o.Status != http.StatusOK {
		return
	}
	if d := c.o.data(); d != nil && c.exact && c.a.plan.known {
		c.judge("FAULT-32")
		if n, ok := intOf(d["cleared"]); ok && n != len(c.a.plan.planned) {
			c.fail("FAULT-32", "DELETE /_sandbox/faults clears every planned fault and says how many", fmt.Sprintf("cleared %d", len(c.a.plan.planned)), strconv.Itoa(n))
		}
	}
	c.a.plan = faultPlan{known: c.exact}
}

// listFaults holds GET /_sandbox/faults to the plan the model keeps: the
// faults still planned, oldest first, each with the count it has left
// (FAULT-30, FAULT-31). A plan the model lost track of is learned here.
func (c *check) listFaults() {
	o := c.o
	d := o.data()
	if o.Status != http.StatusOK || d == nil || !c.exact {
		return
	}
	items, _ := d["items"].([]any)
	p := &c.a.plan
	if p.known {
		var want, got []string
		for _, f := range p.planned {
			left := "null"
			if f.left >= 0 {
				left = strconv.Itoa(f.left)
			}
			want = append(want, f.id+" count "+left)
		}
		for _, it := range items {
			e, _ := it.(map[string]any)
			left := "null"
			if n, ok := intOf(e["count"]); ok {
				left = strconv.Itoa(n)
			}
			got = append(got, str(e["id"])+" count "+left)
		}
		c.judge("FAULT-30")
		if strings.Join(want, ", ") != strings.Join(got, ", ") {
			c.fail("FAULT-30", "the plan lists the faults still planned, oldest first, with the count each has left", "["+strings.Join(want, ", ")+"]", "["+strings.Join(got, ", ")+"]")
		}
	}
	learned := faultPlan{known: true}
	for _, it := range items {
		e, _ := it.(map[string]any)
		f, ok := faultOf(e, false)
		learned.known = learned.known && ok
		learned.planned = append(learned.planned, f)
	}
	*p = learned
}

// faulted applies the plan to a /v1 request that was answered: which fault
// hit it, if any (the oldest that matches and draws it, FAULT-9), named by
// X-Sandbox-Fault (FAULT-25). It reports whether a fault answered in the
// API's place, so that the answer says nothing about the API.
func (c *check) faulted() (inPlace bool, faultID string) {
	o := c.o
	p := &c.a.plan
	id := o.Header.Get(faultHeader)
	if !p.known {
		if id == "" {
			return false, ""
		}
		// Some fault hit it, of a kind the model does not hold: it may
		// have let the API carry the request out first (FAULT-41). Learn.
		c.a.carriedOutUnseen()
		c.a.logRequest(o, c.exact, id)
		return true, id
	}
	may, must := p.candidates(o.Method, o.Path)
	var hit *plannedFault
	for _, f := range may {
		if f.id == id {
			hit = f
		}
	}
	switch {
	case id == "" && must == nil && !mayDrop(o.Method, may):
		return false, ""
	case mayDrop(o.Method, may):
		// The client's HTTP stack sends a GET again, by itself, when a
		// fault dropped it: this answer may follow drops the model did not
		// see, each spending a fault's count and leaving a journal entry.
		p.known, c.a.logKnown = false, false
		if dropsAfter(may) {
			// Each unseen attempt was carried out before its drop.
			c.a.carriedOutUnseen()
		}
		if id == "" {
			return false, ""
		}
		// A later attempt may meet any fault of the plan.
		if _, hit = p.byID(id); hit == nil {
			c.a.v1.known = false
			return true, id
		}
		p.fire(hit)
		if hit.after && hit.replaces() {
			c.a.carriedOutUnseen()
			return true, id
		}
		if !hit.answersInPlace() {
			return false, id
		}
		c.a.logRequest(o, c.exact, id)
		c.unspent(hit)
		return true, id
	case id == "":
		if c.exact {
			c.judge("FAULT-9")
			c.fail("FAULT-9", "the oldest planned fault that matches a request hits it, and its answer names it in X-Sandbox-Fault", "an answer from "+must.String(), fmt.Sprintf("%d without %s", o.Status, faultHeader))
		}
		p.known = false
		return false, ""
	case hit == nil:
		if c.exact {
			c.judge("FAULT-9")
			c.fail("FAULT-9", "a request is hit only by the oldest planned fault that matches it", faultsNamed(may), faultHeader+": "+id)
		}
		p.known = false
		c.a.v1.known = false
		c.a.logRequest(o, c.exact, id)
		return true, id
	}
	if c.exact {
		c.judge("FAULT-9")
	}
	p.fire(hit)
	if hit.after && hit.replaces() {
		// Carried out, its answer replaced (FAULT-41): it spent its unit
		// and wrote what the model cannot see.
		c.a.forgetWrites()
		c.rate(&c.a.v1, true, "FAULT-41", "the /v1 limit (a request a fault of phase after answered was carried out first)")
		c.a.logRequest(o, c.exact, id)
		if c.exact {
			c.faultAnswer(hit)
		}
		return true, id
	}
	if !hit.answersInPlace() {
		// Delayed, trickled or truncated: the API answered, and the request
		// counts like any other (FAULT-27).
		return false, id
	}
	c.a.logRequest(o, c.exact, id)
	if c.exact {
		c.faultAnswer(hit)
		c.faultScope(hit)
	}
	c.unspent(hit)
	return true, id
}

// unspent checks that a fault that answered in the API's place spent none
// of the budget, and that its status and malformed answers say so in the
// rate-limit headers as they stand (FAULT-26), unless its planned headers
// write those headers themselves.
func (c *check) unspent(f *plannedFault) {
	for name := range f.headers {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Ratelimit-") {
			c.a.v1.known = false
			return
		}
	}
	if c.exact && c.sandbox {
		c.judge("FAULT-26")
		if _, ok := rules.LooseRateHeaders(c.o.Header); !ok {
			c.fail("FAULT-26", "a fault's status or malformed answer carries the rate-limit headers as they stand", "X-RateLimit-Limit, -Remaining and -Reset of the /v1 budget", "none")
		}
	}
	c.rate(&c.a.v1, false, "FAULT-26", "the /v1 limit (a fault that answers in the API's place spends none of it)")
}

// faultAnswer holds the answer of a fault that answered in the API's place
// to what was planned.
func (c *check) faultAnswer(f *plannedFault) {
	o := c.o
	if f.network == netMalformed {
		c.judge("FAULT-22")
		if o.Status != http.StatusOK || o.V != nil || !mediaTypeIsJSON(o.Header.Get("Content-Type")) {
			c.fail("FAULT-22", "a malformed answer is a 200 with a JSON content type whose body is not JSON", "200, Content-Type: application/json, a body that is not JSON", fmt.Sprintf("%d, Content-Type: %s, %s", o.Status, o.Header.Get("Content-Type"), wire.Truncate(string(o.Body), 80)))
		}
		return
	}
	want := map[int]string{500: "INTERNAL_ERROR", 429: "RATE_LIMIT_EXCEEDED"}[f.status]
	if o.Method == http.MethodHead || f.body != nil {
		// The answer to HEAD has no body to carry a code, and a planned
		// body replaces the envelope.
		want = ""
	}
	c.judge("FAULT-13")
	if o.Status != f.status || (want != "" && o.errorCode() != want) {
		c.fail("FAULT-13", "a planned status fault answers with that status and its code", fmt.Sprintf("%d %s", f.status, want), fmt.Sprintf("%d %s", o.Status, o.errorCode()))
	}
	if f.body != nil {
		c.judge("FAULT-17")
	}
	if f.body != nil && o.Method != http.MethodHead && string(o.Body) != *f.body {
		c.fail("FAULT-17", "a status fault with a body answers that body instead of the envelope", wire.Truncate(*f.body, 80), wire.Truncate(string(o.Body), 80))
	}
	if f.body == nil && f.status < 400 && len(o.Body) > 0 {
		// A stub planned without a body, a success or redirect, has no
		// envelope to answer in.
		c.fail("FAULT-13", "a stub planned without a body answers an empty one", "no body", wire.Truncate(string(o.Body), 80))
	}
	wantAfter := f.retryAfter
	for name, v := range f.headers {
		c.judge("FAULT-16")
		if got := o.Header.Get(name); got != v {
			c.fail("FAULT-16", "a status fault's answer carries the headers planned with it", name+": "+v, name+": "+got)
		}
		if http.CanonicalHeaderKey(name) == "Retry-After" {
			wantAfter = v
		}
	}
	if f.status == http.StatusTooManyRequests || f.status == http.StatusServiceUnavailable {
		c.judge("FAULT-14")
	}
	if got := o.Header.Get("Retry-After"); got != wantAfter {
		c.fail("FAULT-14", "an injected answer carries Retry-After as planned: 1 second for a 429 or 503 unless retryAfter says otherwise, none for null", "Retry-After: "+wantAfter, "Retry-After: "+got)
	}
}

func faultsNamed(fs []*plannedFault) string {
	if len(fs) == 0 {
		return "no fault (none planned matches " + "the request)"
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.String())
	}
	return "one of " + strings.Join(names, ", ")
}

// abandoned follows a /v1 request that got no whole answer. When the plan
// says a fault dropped it (reset or close), the account is untouched and
// the journal holds it with no status (FAULT-28, JRNL-9). When it says the
// answer was cut or trickled, the request was carried out and spent one
// unit of the budget whatever the client saw (FAULT-27, FAULT-29): what it
// wrote is unknown, what it spent is not. Anything else may have done
// anything, and the model forgets what it cannot know.
func (a *account) abandoned(method, path, query string, exact bool, waited time.Duration) {
	if !exact || !a.plan.known || !strings.HasPrefix(path, "/v1") {
		a.forget()
		return
	}
	may, must := a.plan.candidates(method, path)
	if must != nil && len(may) == 1 && !must.after && must.delay > 0 && waited < must.delay/2 {
		// Given up well within a delay before the API: not carried out,
		// nothing spent or written, journalled with no status (FAULT-42).
		a.notCarriedOut(must, method, path, query)
		return
	}
	if must != nil && len(may) == 1 && must.carriesOut() {
		if replayable(method) && must.drops() {
			// Sent again by the client's HTTP stack, each attempt carried
			// out before its drop: how many is unknown.
			a.forget()
			return
		}
		a.plan.fire(must)
		a.forgetWrites()
		a.v1.spentUnseen()
		return
	}
	if must == nil || len(may) > 1 || !must.drops() {
		a.forget()
		return
	}
	if replayable(method) {
		// The client's HTTP stack may have sent it again, to be dropped
		// again by this fault or the next: how many times is unknown, but
		// no attempt changed anything or spent any budget.
		a.plan.known, a.logKnown = false, false
		return
	}
	a.notCarriedOut(must, method, path, query)
}

// notCarriedOut follows a request the fault f kept from the API: it spent
// f's count and left a journal entry with no status, and nothing else.
func (a *account) notCarriedOut(f *plannedFault, method, path, query string) {
	a.plan.fire(f)
	a.reqlog = append(a.reqlog, logEntry{method: method, path: path, query: query, fault: f.id, size: entrySize(method, path, query, nil, 0)})
}

// dropsAfter says whether a fault of phase after that drops the connection
// may hit the request: each attempt it drops was carried out first.
func dropsAfter(may []*plannedFault) bool {
	for _, f := range may {
		if f.after && f.drops() {
			return true
		}
	}
	return false
}

// mayDrop says whether a request of method, which the faults may match,
// could have been dropped and sent again unseen.
func mayDrop(method string, may []*plannedFault) bool {
	if !replayable(method) {
		return false
	}
	for _, f := range may {
		if f.drops() {
			return true
		}
	}
	return false
}

// replayable says whether an HTTP client may send a request again by itself
// when its connection is lost before the answer.
func replayable(method string) bool {
	return method == http.MethodGet || method == http.MethodHead
}

// intOf reads a JSON integer.
func intOf(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil
}
