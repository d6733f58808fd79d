// Package model is the kit's own account of what the API must answer, written
// from the rules of docs/contract.md. Every exchange of a run passes through it
// (the checking transport feeds it), so a scenario that merely reads a list
// still fails when the list disagrees with what the run wrote earlier.
//
// It asserts only what it knows. Keys the run owns (fresh sandbox accounts,
// or the operator's key with --exclusive-key) start from the seed the run
// read at its start and are held exactly: every record, ID, event, logged
// request and rate-limit count. On a key others may use, only what no other
// client can change is asserted (a write's answer echoes what was sent, a
// campaign once written never changes); everything else is learned.
package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// RuleModel prefixes the rules the model enforces, so a report tells them
// from the features' own steps.
const RuleModel = "model"

// historyShown is how many earlier requests of the key a Disagreement shows.
const historyShown = 8

// Disagreement is one answer the model did not expect: the rule it breaks,
// what the model wanted and what came back.
type Disagreement struct {
	ID   string // the rule's ID in docs/contract.md
	Rule string // what the rule says, as a report names it
	Want string // what the model expected
	Got  string // what came back
}

func (d Disagreement) String() string {
	return fmt.Sprintf("%s %s: want %s, got %s", d.ID, d.Rule, d.Want, d.Got)
}

// observed is one exchange as the model reads it: the exchange itself,
// with its target and Date header parsed once.
type observed struct {
	*wire.Exchange
	Path     string
	Query    url.Values
	RawQuery string
	// target is the request target as the server reads it, "" when the
	// URL does not parse.
	target string
	V      any // the decoded body, nil if it is not JSON
	Date   time.Time
}

func observe(e *wire.Exchange) *observed {
	o := &observed{Exchange: e}
	if u, err := url.Parse(e.URL); err == nil {
		o.Path, o.Query, o.RawQuery, o.target = u.Path, u.Query(), u.RawQuery, u.RequestURI()
	}
	o.V, _ = e.JSON()
	if d, err := http.ParseTime(e.Header.Get("Date")); err == nil {
		o.Date = d
	}
	return o
}

func (o *observed) data() map[string]any {
	m, _ := o.V.(map[string]any)
	d, _ := m["data"].(map[string]any)
	return d
}

func (o *observed) errorCode() string {
	m, _ := o.V.(map[string]any)
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (o *observed) line() string {
	s := o.Method + " " + o.Path
	if o.RawQuery != "" {
		s += "?" + o.RawQuery
	}
	if len(o.ReqBody) > 0 {
		s += " " + wire.Truncate(string(o.ReqBody), 120)
	}
	return fmt.Sprintf("%s → %d", s, o.Status)
}

// Model holds one account model per key seen in the run.
type Model struct {
	profile  string
	Switches kit.ContractSwitches

	mu       sync.Mutex
	accounts map[string]*account
	owned    map[string]bool
	seed     *Seed
	// gaps say what the model does not check that it would normally
	// check, and why, for the report; each once.
	gaps []string
	// firstIDs are the first IDs fresh accounts gave, per prefix: every
	// fresh account must give the same (ACCT-5: deterministic IDs).
	firstIDs map[string]string
	// Coverage counts the rules judged on each exchange; nil keeps no count.
	Coverage *coverage.Recorder
	// frozen is learned from POST /_sandbox/clock: 1 frozen, -1 running.
	frozen int
}

// New is the model of a run in profile. seed is what a fresh sandbox
// account holds; without it the model holds no account's records exactly.
func New(profile string, sw kit.ContractSwitches, seed *Seed) *Model {
	return &Model{profile: profile, Switches: sw, seed: seed, accounts: map[string]*account{}, owned: map[string]bool{}, firstIDs: map[string]string{}}
}

// Seed is what a fresh account holds, as the model was handed it.
func (m *Model) Seed() *Seed { return m.seed }

// Gap records something the model will not check, and why: a report must
// say what it did not judge.
func (m *Model) Gap(why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gap(why)
}

func (m *Model) gap(why string) {
	for _, g := range m.gaps {
		if g == why {
			return
		}
	}
	m.gaps = append(m.gaps, why)
}

// Gaps are what the model did not check that it would normally check, each
// with why.
func (m *Model) Gaps() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.gaps...)
}

// Drop forgets key's account: the run has finished with it. An exploration
// makes accounts without end, and the model's memory must not grow with them.
func (m *Model) Drop(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.accounts, key)
	delete(m.owned, key)
}

// Own marks key as the run's own. A fresh key also starts from the seed.
func (m *Model) Own(key string, fresh bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owned[key] = true
	a := m.account(key)
	a.owned = true
	if fresh {
		a.startFresh(m.seed)
	}
}

func (m *Model) account(key string) *account {
	a := m.accounts[key]
	if a == nil {
		a = newAccount(key)
		a.owned = m.owned[key]
		m.accounts[key] = a
	}
	return a
}

// Flight is one request on its way; requests of a key that overlap in time
// may be answered in any order, so order-dependent checks skip them.
type Flight struct {
	acct       *account
	overlapped bool
	// sent is when the request left, so that a request given up on can be
	// placed against a planned delay.
	sent time.Time
}

// Begin opens the flight of one request of key, before it is sent, so
// that the model knows which answers of the account overlapped in time.
// Observe or Abandon ends it.
func (m *Model) Begin(key string) *Flight {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(key)
	f := &Flight{acct: a, sent: time.Now()}
	if len(a.inflight) > 0 {
		f.overlapped = true
		for o := range a.inflight {
			o.overlapped = true
		}
	}
	a.inflight[f] = true
	return f
}

// Abandon ends a flight of method, path and raw query that got no answer:
// a planned fault dropped it, or what it did is unknown.
func (m *Model) Abandon(f *Flight, method, path, query string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(f.acct.inflight, f)
	f.acct.abandoned(method, path, query, f.acct.owned && !f.overlapped, time.Since(f.sent))
	f.acct.remember(method + " " + path + " → no answer")
}

// Observe checks the answer of exchange e, the flight f, against the
// model and advances it.
func (m *Model) Observe(f *Flight, e *wire.Exchange) []Disagreement {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := f.acct
	delete(a.inflight, f)
	o := observe(e)
	if o.Status == http.StatusUnauthorized {
		return nil // no account acted
	}
	c := &check{m: m, a: a, o: o, exact: a.owned && !f.overlapped, sandbox: m.profile == kit.ProfileSandbox}
	c.run()
	c.record()
	a.fresh = false
	a.remember(o.line())
	if len(c.found) == 0 {
		return nil
	}
	return c.found
}

// HistoryOf is what a report shows of the requests that led to a
// Disagreement on key.
func (m *Model) HistoryOf(key string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.accounts[key]
	if a == nil {
		return nil
	}
	return append([]string(nil), a.history...)
}

// check is the judgement of one exchange.
type check struct {
	m       *Model
	a       *account
	o       *observed
	exact   bool // the run owns the key and no other request overlapped
	sandbox bool // the sandbox profile's documented choices apply
	listing bool // the exchange reads a list, not one record
	found   []Disagreement
	// judged are the rules judged on this exchange, each once.
	judged map[string]bool
}

// judge records that the exchange was judged against the rules, whether it
// held or not.
func (c *check) judge(ids ...string) {
	if c.judged == nil {
		c.judged = map[string]bool{}
	}
	for _, id := range ids {
		c.judged[id] = true
	}
}

// fail records a break of rule id; each break is a judgement too.
func (c *check) fail(id, rule, want, got string) {
	c.judge(id)
	c.found = append(c.found, Disagreement{ID: id, Rule: rule, Want: want, Got: got})
}

// record hands the rules judged on the exchange, and the breaks, to the
// run's coverage.
func (c *check) record() {
	for id := range c.judged {
		c.m.Coverage.Judged(id)
	}
	for _, d := range c.found {
		c.m.Coverage.Broke(d.ID)
	}
}

func (c *check) run() {
	o := c.o
	inAPI := o.Path == "/v1" || strings.HasPrefix(o.Path, "/v1/")
	inControls := strings.HasPrefix(o.Path, "/_sandbox/")
	if o.Status == http.StatusTooManyRequests && o.Header.Get("X-RateLimit-Scope") == "client" {
		// A shared sandbox's budget for the client's address refused it
		// before any account saw it (RATE-15): nothing happened.
		return
	}
	if o.Status == http.StatusRequestHeaderFieldsTooLarge {
		// The HTTP server refused headers too large to read before any
		// account saw the request (ERR-24): nothing happened.
		return
	}
	if c.targetRefused() {
		return
	}
	c.clock()
	switch {
	case inAPI:
		inPlace, faultID := c.faulted()
		if inPlace {
			return
		}
		c.apiRate()
		c.a.logRequest(o, c.exact, faultID)
		if o.Status == http.StatusTooManyRequests {
			return
		}
		c.api()
		c.refusedCreate()
	case inControls && c.sandbox:
		c.rate(&c.a.ctl, o.Status != http.StatusTooManyRequests, "CTL-3", "the controls' budget")
		if o.Status == http.StatusTooManyRequests {
			return
		}
		c.controls()
		c.refusedCreate()
	}
}

// maxTarget is the longest request target the sandbox reads (ERR-20).
const maxTarget = 8 << 10

// targetRefused holds the request target to ERR-20: one over 8 KiB is
// refused with 414 URI_TOO_LONG before any account sees it, and one of
// 8 KiB or less is read. It says whether the request was refused for its
// target, so that nothing happened. Outside the sandbox profile a 414 is
// the deployment's own bound, judged by no rule, and still nothing.
func (c *check) targetRefused() bool {
	o := c.o
	refused := o.Status == http.StatusRequestURITooLong && o.Header.Get(faultHeader) == ""
	if !c.sandbox || o.target == "" {
		return refused
	}
	long := len(o.target) > maxTarget
	c.judge("ERR-20")
	got := fmt.Sprintf("%d %s", o.Status, o.errorCode())
	switch {
	case long && (o.Status != http.StatusRequestURITooLong || o.errorCode() != "URI_TOO_LONG"):
		c.fail("ERR-20", "a request target over 8 KiB is refused", "414 URI_TOO_LONG", got)
	case !long && refused:
		c.fail("ERR-20", "a request target of 8 KiB or less is read", fmt.Sprintf("no 414 for a target of %d bytes", len(o.target)), got)
	}
	return long || refused
}

// creates are the requests that make a record, by the prefix of its ID.
var creates = map[string]string{"POST /v1/campaigns": "cmp", "POST /v1/webhooks": "whk", "POST /_sandbox/bugs": "bug"}

// refusedCreate notes a creating request the account refused, so that the
// next ID of its kind is judged against ACCT-6.
func (c *check) refusedCreate() {
	o := c.o
	prefix, ok := creates[o.Method+" "+o.Path]
	if !ok || o.Status < 400 || o.Status == http.StatusTooManyRequests || !c.exact {
		return
	}
	if c.a.refusedSince == nil {
		c.a.refusedSince = map[string]bool{}
	}
	c.a.refusedSince[prefix] = true
}

// api dispatches a /v1 exchange to the rule of its endpoint.
func (c *check) api() {
	o := c.o
	parts := strings.Split(strings.TrimPrefix(o.Path, "/"), "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			c.unknownRoute()
			return
		}
	}
	method := o.Method
	if served := servedMethods(parts); served != nil && !slices.Contains(served, method) {
		c.wrongMethod(served)
		return
	}
	if method == http.MethodHead {
		c.head()
		return
	}
	switch {
	case len(parts) == 2 && parts[1] == "campaigns" && method == http.MethodPost:
		c.createCampaign()
	case len(parts) == 2 && parts[1] == "campaigns" && method == http.MethodGet:
		c.list(KindCampaign)
	case len(parts) == 3 && parts[1] == "campaigns" && method == http.MethodGet:
		c.getCampaign(parts[2])
	case len(parts) == 2 && parts[1] == "bugs" && method == http.MethodGet:
		c.list(KindBug)
	case len(parts) == 3 && parts[1] == "bugs" && method == http.MethodPatch:
		c.patchBug(parts[2])
	case len(parts) == 2 && parts[1] == "testers" && method == http.MethodGet:
		c.list(KindTester)
	case len(parts) == 2 && parts[1] == "analytics" && method == http.MethodGet:
		c.analytics()
	case len(parts) == 2 && parts[1] == "webhooks" && method == http.MethodPost:
		c.createWebhook()
	}
}

// unknownRoute holds a path no route has, such as one with a trailing
// slash or an empty or dot segment, to 404 NOT_FOUND: never a success, a
// redirect or another route's answer (ROUTE-3, ROUTE-4). A request the
// server refused before routing (its query, its size) keeps its refusal.
func (c *check) unknownRoute() {
	o := c.o
	if !c.sandbox {
		return
	}
	c.judge("ROUTE-3")
	if o.Status < 400 || o.Status == http.StatusMethodNotAllowed || (o.Status == http.StatusNotFound && o.Method != http.MethodHead && o.errorCode() != "NOT_FOUND") {
		c.fail("ROUTE-3", "a path with a trailing slash or an empty or dot segment is an unknown route", "404 NOT_FOUND", fmt.Sprintf("%d %s", o.Status, o.errorCode()))
	}
}

// head holds HEAD to what GET would answer (ROUTE-5: HEAD is answered wherever
// GET is, with the headers GET would send): no body, and nothing changes.
func (c *check) head() {
	c.judge("ROUTE-5")
	if c.sandbox && c.o.Status == http.StatusMethodNotAllowed {
		c.fail("ROUTE-5", "HEAD is answered wherever GET is", "the answer GET would give", fmt.Sprintf("%d %s", c.o.Status, c.o.errorCode()))
		return
	}
	if !c.sandbox || c.o.Status != http.StatusOK {
		return
	}
	if len(c.o.Body) > 0 {
		c.fail("ROUTE-5", "HEAD is answered like GET, without a body", "an empty body", fmt.Sprintf("%d bytes", len(c.o.Body)))
	}
	if ct := c.o.Header.Get("Content-Type"); ct != "application/json" {
		c.fail("ROUTE-5", "HEAD carries the headers GET would send", "Content-Type: application/json", fmt.Sprintf("Content-Type: %q", ct))
	}
}

// servedMethods are the methods a /v1 route serves, HEAD wherever GET is;
// nil for a path no route has.
func servedMethods(parts []string) []string {
	switch {
	case len(parts) == 2 && parts[1] == "campaigns":
		return []string{http.MethodGet, http.MethodHead, http.MethodPost}
	case len(parts) == 2 && (parts[1] == "bugs" || parts[1] == "testers" || parts[1] == "analytics"),
		len(parts) == 3 && parts[1] == "campaigns":
		return []string{http.MethodGet, http.MethodHead}
	case len(parts) == 2 && parts[1] == "webhooks":
		return []string{http.MethodPost}
	case len(parts) == 3 && parts[1] == "bugs":
		return []string{http.MethodPatch}
	}
	return nil
}

// wrongMethod holds a method a known route does not serve to 405
// METHOD_NOT_ALLOWED with an Allow naming exactly the methods it serves
// (ERR-17), and HEAD where GET is served to an answer (ROUTE-5). A request
// refused before routing (its query, its size, its body's type) keeps its
// refusal; a method outside the API's own, such as a browser's OPTIONS,
// is a matter of CORS.
func (c *check) wrongMethod(served []string) {
	o := c.o
	if !c.sandbox || !slices.Contains(routableMethods, o.Method) {
		return
	}
	if o.Status != http.StatusMethodNotAllowed && o.Status >= 400 && o.Status != http.StatusNotFound {
		return
	}
	c.judge("ERR-17")
	if o.Status != http.StatusMethodNotAllowed || o.errorCode() != "METHOD_NOT_ALLOWED" {
		c.fail("ERR-17", "a method a known path does not serve is 405 METHOD_NOT_ALLOWED", "405 METHOD_NOT_ALLOWED", fmt.Sprintf("%d %s", o.Status, o.errorCode()))
		return
	}
	var allowed []string
	for _, v := range o.Header.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				allowed = append(allowed, m)
			}
		}
	}
	slices.Sort(allowed)
	want := slices.Sorted(slices.Values(served))
	if !slices.Equal(allowed, want) {
		c.fail("ERR-17", "Allow lists exactly the methods the path serves", "Allow: "+strings.Join(want, ", "), "Allow: "+strings.Join(o.Header.Values("Allow"), ", "))
	}
}

// routableMethods are the methods the API routes; others are not judged
// against its routes.
var routableMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// refusal says whether the answer refuses the request, and checks that it
// refuses it the way the contract says. codes lists the acceptable codes
// (any refusal when empty).
func (c *check) expectRefusal(id, why string, status int, codes ...string) {
	o := c.o
	c.judge(id)
	if o.Status < 400 {
		c.fail(id, "a request the contract refuses is refused ("+why+")", fmt.Sprintf("%d %s", status, strings.Join(codes, " or ")), fmt.Sprintf("%d", o.Status))
		return
	}
	if !c.sandbox {
		return
	}
	code := o.errorCode()
	ok := status == 0 || o.Status == status
	if len(codes) > 0 {
		match := false
		for _, k := range codes {
			match = match || k == code
		}
		ok = ok && match
	}
	if !ok {
		c.fail(id, "a refusal carries the status and code of the contract ("+why+")", fmt.Sprintf("%d %s", status, strings.Join(codes, " or ")), fmt.Sprintf("%d %s", o.Status, code))
	}
}

func (c *check) expectSuccess(id, why string) bool {
	c.judge(id, "ENV-2")
	if !c.sandbox && c.o.Status != http.StatusOK {
		// The spec states neither bounds nor a success status beyond 200:
		// a foreign deployment may refuse a request the contract takes,
		// or answer 201, and the features judge what the spec states.
		if c.o.Status < 200 || c.o.Status > 299 {
			return false
		}
	} else if c.o.Status >= 200 && c.o.Status < 300 && c.o.Status != http.StatusOK {
		// Carried out, under another status than the sandbox's one (ENV-10).
		c.fail("ENV-10", "every success is 200, creations included", "200", fmt.Sprintf("%d", c.o.Status))
	} else if c.o.Status != http.StatusOK {
		c.fail(id, "a valid request succeeds ("+why+")", "200", fmt.Sprintf("%d %s", c.o.Status, c.o.errorCode()))
		return false
	}
	c.judge("ENV-2")
	if c.o.data() == nil {
		c.fail("ENV-2", "a success carries its data object", "an object at data", wire.Truncate(string(c.o.Body), 200))
		return false
	}
	return true
}

// --- rate limits and faults ---

// rateState is what the last answer said of one budget.
type rateState struct {
	known                   bool
	limit, remaining, reset int
	// untouched: nothing has been counted since the account was fresh or
	// reset, so the next counted request must leave limit-1.
	untouched bool
}

func (c *check) apiRate() {
	o := c.o
	counted := o.Status != http.StatusTooManyRequests
	if c.exact && c.a.v1.known && c.windowOpen(c.a.v1) {
		switch {
		case c.a.v1.remaining > 0:
			c.judge("RATE-6")
			if !counted {
				c.fail("RATE-6", "a request within the limit is not refused (spec §8)", fmt.Sprintf("an answer, with %d requests left", c.a.v1.remaining), "429")
			}
		default:
			c.judge("RATE-5")
			if counted {
				c.fail("RATE-5", "a request over the limit is refused with 429", "429 RATE_LIMIT_EXCEEDED", fmt.Sprintf("%d", o.Status))
			}
		}
	}
	c.rate(&c.a.v1, counted, "RATE-7", "the /v1 limit")
}

// spentUnseen counts a request that spent one unit of the budget without
// its answer being seen: the next answer in the same window has one less.
// A fresh window's first unit is gone, so the next answer is no longer
// the first of its window.
func (st *rateState) spentUnseen() {
	if st.known {
		st.remaining = max(st.remaining-1, 0)
	}
	st.untouched = false
}

// windowOpen says whether the window st describes has not ended by the
// server's clock at this answer.
func (c *check) windowOpen(st rateState) bool {
	return !c.o.Date.IsZero() && c.o.Date.Unix() < int64(st.reset)
}

// rate checks the rate-limit headers against the count the model keeps:
// within one window, every counted request takes exactly one unit and an
// uncounted one none. A window that ended, or a reported window that
// changed, is learned anew.
func (c *check) rate(st *rateState, counted bool, id, budgetName string) {
	o := c.o
	h, ok := rules.LooseRateHeaders(o.Header)
	if !ok {
		st.known = false
		return
	}
	c.judge("RATE-1")
	if h.Remaining < 0 {
		c.fail("RATE-1", "X-RateLimit-Remaining is never negative", "0 or more requests left", strconv.Itoa(h.Remaining))
	}
	c.judge("RATE-3")
	if h.Remaining > h.Limit {
		c.fail("RATE-3", "X-RateLimit-Remaining never exceeds X-RateLimit-Limit", fmt.Sprintf("at most %d", h.Limit), strconv.Itoa(h.Remaining))
	}
	if c.sandbox && !o.Date.IsZero() {
		c.judge("RATE-10")
		if !rules.IsWindowEnd(h.Reset, o.Date) {
			c.fail("RATE-10", "X-RateLimit-Reset is the end of the reported UTC window", fmt.Sprintf("the end of the minute, hour or day of %s", o.Date.UTC().Format(time.RFC3339)), strconv.Itoa(h.Reset))
		}
	}
	if c.exact {
		step := 0
		if counted {
			step = 1
		}
		switch {
		case st.known && h.Limit == st.limit && h.Reset == st.reset && c.windowOpen(*st):
			want := max(st.remaining-step, 0)
			if h.Remaining != want {
				c.fail(id, "the remaining count moves by exactly the requests counted ("+budgetName+")", fmt.Sprintf("X-RateLimit-Remaining %d (was %d, this request counts %d)", want, st.remaining, step), strconv.Itoa(h.Remaining))
			}
		case st.untouched && counted:
			if h.Remaining != h.Limit-1 {
				c.fail(id, "a fresh or reset account has its whole window ("+budgetName+")", fmt.Sprintf("X-RateLimit-Remaining %d after its first request", h.Limit-1), strconv.Itoa(h.Remaining))
			}
		}
	}
	*st = rateState{known: c.exact, limit: h.Limit, remaining: h.Remaining, reset: h.Reset, untouched: st.untouched && !counted}
}

// --- the server's clock ---

// clock checks the Date header against the account's clock: it never runs
// backwards except at a reset, and under a frozen clock it says exactly the
// instant the model holds.
func (c *check) clock() {
	o := c.o
	if o.Date.IsZero() || !c.sandbox {
		return
	}
	cl := &c.a.clock
	if c.a.fresh {
		cl.start = o.Date
	}
	if c.exact && !cl.last.IsZero() && !cl.mayRewind {
		c.judge("CLK-6")
	}
	if c.exact && !cl.last.IsZero() && o.Date.Before(cl.last.Add(-time.Second)) && !cl.mayRewind {
		c.fail("CLK-6", "the account's clock never runs backwards", "a Date at or after "+cl.last.UTC().Format(http.TimeFormat), o.Header.Get("Date"))
	}
	if c.exact && c.m.frozen == 1 && !cl.now.IsZero() {
		c.judge("CLK-1")
	}
	if c.exact && c.m.frozen == 1 && !cl.now.IsZero() && !o.Date.Equal(cl.now.Truncate(time.Second)) {
		c.fail("CLK-1", "a frozen clock stands still until moved", "Date "+cl.now.UTC().Format(http.TimeFormat), o.Header.Get("Date"))
	}
	if c.m.frozen == 1 && cl.now.IsZero() {
		cl.now = o.Date
	}
	cl.last, cl.mayRewind = o.Date, false
}

type clockState struct {
	last  time.Time // the Date of the last answer
	start time.Time // the Date of the account's first answer
	// now is the account's frozen instant; nowExact when known to the
	// millisecond (from a record just stamped or a clock move).
	now       time.Time
	nowExact  bool
	mayRewind bool // a reset may take a frozen clock back to its start
}

// stamped checks a timestamp the server just wrote against its clock.
func (c *check) stamped(field, value string) {
	t, err := wire.ParseTimestamp(value)
	if err != nil || c.o.Date.IsZero() || !c.sandbox {
		return
	}
	c.judge("CLK-7")
	if d := t.Sub(c.o.Date); d < -2*time.Second || d > 2*time.Second {
		c.fail("CLK-7", "a record is stamped with the account's clock", fmt.Sprintf("%s near the answer's Date %s", field, c.o.Header.Get("Date")), value)
	}
	if c.m.frozen == 1 && c.exact {
		c.a.clock.now, c.a.clock.nowExact = t, true
	}
}

// --- JSON as sent ---

// sameJSON compares two documents; in the sandbox profile numbers must keep
// their spelling (19.990 is not 19.99), in the spec profile their value.
func (c *check) sameJSON(want, got any) string {
	if !c.sandbox {
		want, got = numbersByValue(want), numbersByValue(got)
	}
	return cmp.Diff(want, got)
}

func numbersByValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return string(x)
		}
		return r.RatString()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = numbersByValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbersByValue(e)
		}
		return out
	}
	return v
}

func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return wire.Truncate(strings.TrimSpace(b.String()), 300)
}

// mediaTypeIsJSON reads a Content-Type as the contract does: the media type
// application/json, whatever its parameters.
func mediaTypeIsJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// decodeStrictObject decodes a request body the way the contract reads
// one: a single JSON object, numbers kept as written. dup says whether a
// field appears twice in one object.
func decodeStrictObject(b []byte) (obj map[string]any, dup bool, err error) {
	v, err := wire.DecodeJSON(b)
	if err != nil {
		return nil, false, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("not an object")
	}
	return obj, hasDuplicateField(b), nil
}

// hasDuplicateField walks the token stream: a decoded map keeps only the
// last of two equal names, so duplicates are visible only there.
func hasDuplicateField(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj   bool
		names map[string]bool
		key   bool // the next string token of an object is a name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: true, names: map[string]bool{}, key: true})
			case '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.names[t] {
					return true
				}
				top.names[t] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}
