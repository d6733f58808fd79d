// Package clientverdict judges a client by what its key's account saw: the
// requests it sent, the answers it was given, the faults planned for it and
// the deliveries its webhook receiver answered, against the client rules of
// docs/contract.md (CLI). It never takes part in serving a request: the HTTP
// layer tells a Trace of each exchange once it is over, and Judge reads the
// trace afterwards.
package clientverdict

import (
	"bytes"
	"cmp"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// Bounds of a trace.
const (
	// MaxExchanges is how many of an account's most recent requests its
	// trace keeps: a test suite's worth, where the journal keeps a page.
	MaxExchanges = 10_000
	// maxPath is how much of a path an exchange keeps to name its request
	// in a verdict: enough to recognise a route and an id.
	maxPath = 96
)

// exchangeBytes is what one exchange costs the memory budget: the struct,
// its slot in the ring, and a path as long as it may keep.
const exchangeBytes = 160 + maxPath

// chargeEvery is how many exchanges a trace is charged for at a time, so
// that a request takes the budget's lock for it once in a while, not every
// time.
const chargeEvery = 64

// Observation is one /v1 request as the HTTP layer saw it, once it is over.
type Observation struct {
	// Request is the request's number in the account's journal: 1 for the
	// account's first request, in the order they arrived.
	Request uint64
	Method  string
	Path    string
	Query   string
	// Authorization and ContentType are the request's headers.
	Authorization string
	ContentType   string
	// Body is the start of the body the journal keeps; BodyBytes how many
	// bytes were read in all.
	Body      []byte
	BodyBytes int64
	// ContentLength is the request's, -1 when unknown: a body the sandbox
	// refused before reading it was still sent.
	ContentLength int64
	// At and Answered are the request's arrival and the end of its answer
	// on the account's clock; Arrived and Ended on the process's clock,
	// which runs when the account's is frozen.
	At, Answered   time.Time
	Arrived, Ended time.Time
	// Status is the answer's status, 0 when none was sent.
	Status int
	// Abandoned is true when the client went away before its answer.
	Abandoned bool
	// Fault is the planned fault that hit the request, nil if none did.
	Fault *sandbox.Fault
	// Header is the answer's header.
	Header http.Header
}

// exchange is what a trace keeps of an observation: what the rules are
// judged on, and enough to name the request in a verdict.
type exchange struct {
	request uint64
	method  string
	path    string
	// same identifies the request's method, path, query and body; route
	// its method and path.
	same, route    uint64
	at, answered   int64 // account's clock, Unix nanoseconds
	arrived, ended int64 // process's clock, Unix nanoseconds
	status         int
	faultID        string
	network        string
	// retryAfter is the wait the answer's Retry-After asked for, -1 when it
	// had none; resetWait the wait until X-RateLimit-Reset of an answer
	// with X-RateLimit-Remaining 0 of the key's windows, -1 otherwise.
	retryAfter, resetWait time.Duration
	abandoned             bool
	// authProblem, mediaProblem and keyIn say what is wrong with the
	// request itself, empty when nothing is.
	authProblem, mediaProblem, keyIn string
	hasBody                          bool
}

// lost reports whether the client never had the whole answer.
func (e *exchange) lost() bool {
	return e.status == 0 || e.network == sandbox.NetworkTruncate || e.network == sandbox.NetworkMalformed
}

// failed reports whether the exchange is one a client may retry.
func (e *exchange) failed() bool {
	return e.lost() || e.status == http.StatusRequestTimeout || e.status == http.StatusTooManyRequests || e.status >= 500
}

// Trace keeps an account's most recent exchanges for the verdict. It is safe
// for concurrent use; the zero Trace keeps exchanges and charges nothing.
type Trace struct {
	mu sync.Mutex
	// ring holds the exchanges in the order they ended; next is where the
	// next one goes once the ring is full.
	ring []exchange
	next int
	// seen counts every exchange observed, kept or not.
	seen    uint64
	charged int
	charge  func(n int64)
	// paths are the distinct paths kept, each once, so that a thousand
	// requests to one route hold one copy of it.
	paths map[string]string
}

// maxPaths bounds how many distinct paths a trace shares; past it each
// exchange keeps its own copy.
const maxPaths = 1024

// keep returns a copy of path the trace may hold: the request's own may be
// part of its whole request line. t.mu is held.
func (t *Trace) keep(path string) string {
	if kept, ok := t.paths[path]; ok {
		return kept
	}
	kept := strings.Clone(path)
	if t.paths == nil {
		t.paths = map[string]string{}
	}
	if len(t.paths) < maxPaths {
		t.paths[kept] = kept
	}
	return kept
}

// NewTrace returns a trace that asks charge for the memory it takes, in
// bytes, as it grows; charge may be nil.
func NewTrace(charge func(n int64)) *Trace {
	return &Trace{charge: charge}
}

// Observe keeps an exchange, forgetting the oldest past MaxExchanges.
func (t *Trace) Observe(o Observation) {
	e := summarise(o)
	t.mu.Lock()
	e.path = t.keep(e.path)
	t.seen++
	more := 0
	if len(t.ring) < MaxExchanges {
		t.ring = append(t.ring, e)
		if len(t.ring) > t.charged {
			more = min(chargeEvery, MaxExchanges-t.charged)
			t.charged += more
		}
	} else {
		t.ring[t.next] = e
		t.next = (t.next + 1) % MaxExchanges
	}
	t.mu.Unlock()
	if more > 0 && t.charge != nil {
		t.charge(int64(more * exchangeBytes))
	}
}

// snapshot returns the exchanges kept, in the order their requests arrived,
// and how many the trace has forgotten.
func (t *Trace) snapshot() ([]exchange, uint64) {
	t.mu.Lock()
	kept := make([]exchange, 0, len(t.ring))
	kept = append(kept, t.ring[t.next:]...)
	kept = append(kept, t.ring[:t.next]...)
	forgotten := t.seen - uint64(len(t.ring))
	t.mu.Unlock()
	// They ended in another order than they arrived when they overlapped.
	slices.SortFunc(kept, func(a, b exchange) int { return cmp.Compare(a.request, b.request) })
	return kept, forgotten
}

// summarise keeps of an observation what the rules need.
func summarise(o Observation) exchange {
	e := exchange{
		request: o.Request,
		method:  methodName(o.Method),
		same:    mix(mix(mixBytes(fingerprint(o.Method, o.Path, o.Query), o.Body), uint64(o.BodyBytes)), uint64(o.ContentLength)),
		route:   fingerprint(o.Method, o.Path),
		at:      o.At.UnixNano(), answered: o.Answered.UnixNano(),
		arrived: o.Arrived.UnixNano(), ended: o.Ended.UnixNano(),
		status:     o.Status,
		abandoned:  o.Abandoned,
		retryAfter: -1, resetWait: -1,
		hasBody: o.BodyBytes > 0 || o.ContentLength > 0,
	}
	e.path, _ = cut(sandbox.RedactKeys(o.Path), maxPath)
	if o.Fault != nil {
		e.faultID, e.network = o.Fault.ID, o.Fault.Network
	}
	if e.status != 0 && o.Header != nil {
		e.retryAfter = retryAfter(o.Header.Get("Retry-After"), o.Answered)
		if o.Header.Get("X-RateLimit-Remaining") == "0" && o.Header.Get("X-RateLimit-Scope") != "client" {
			if reset, err := strconv.ParseInt(o.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				e.resetWait = max(0, time.Unix(reset, 0).Sub(o.Answered))
			}
		}
	}
	e.authProblem = authProblem(o.Authorization)
	if e.hasBody {
		e.mediaProblem = mediaProblem(o.ContentType)
	}
	e.keyIn = keyIn(o.Path, o.Query, o.Body)
	return e
}

// methodName returns the method as a constant string where it is a usual
// one, so that an exchange does not hold on to the request line.
func methodName(m string) string {
	for _, known := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodOptions} {
		if m == known {
			return known
		}
	}
	short, _ := cut(m, 16)
	return strings.Clone(short)
}

// FNV-1a's constants.
const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

// mix adds a number to a fingerprint.
func mix(h, n uint64) uint64 {
	for range 8 {
		h = (h ^ (n & 0xff)) * fnvPrime
		n >>= 8
	}
	return h
}

// mixBytes adds bytes to a fingerprint, ended by a zero byte.
func mixBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h * fnvPrime
}

// fingerprint is the 64-bit FNV-1a hash of the parts, each ended by a zero
// byte, computed in place: every request pays for it.
func fingerprint(parts ...string) uint64 {
	h := uint64(fnvOffset)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h = (h ^ uint64(p[i])) * fnvPrime
		}
		h *= fnvPrime
	}
	return h
}

// retryAfter reads a Retry-After header as the wait it asks for, counted
// from the answer: seconds, or an HTTP-date on the account's clock. It
// returns -1 for no header, or one that is neither.
func retryAfter(v string, answered time.Time) time.Duration {
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, 1<<32)) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(answered))
	}
	return -1
}

// authProblem says what is wrong with an Authorization header that the
// sandbox accepted, or returns "".
func authProblem(v string) string {
	key, ok := strings.CutPrefix(v, "Bearer ")
	switch {
	case !ok:
		scheme, _, _ := strings.Cut(v, " ")
		scheme, _ = cut(scheme, 16)
		return "its scheme is written " + strconv.Quote(scheme) + ", not \"Bearer\""
	case key != strings.TrimSpace(key) || strings.Contains(key, " "):
		return "it has more than one space around the key"
	}
	return ""
}

// mediaProblem says what is wrong with the Content-Type of a request with a
// body, or returns "".
func mediaProblem(v string) string {
	if v == "" {
		return "it has a body and no Content-Type"
	}
	if v == "application/json" || strings.HasPrefix(v, "application/json;") {
		return ""
	}
	media, _, err := mime.ParseMediaType(v)
	if err != nil || media != "application/json" {
		shown, _ := cut(v, 48)
		return "it has a body sent as " + strconv.Quote(shown) + ", not application/json"
	}
	return ""
}

// keyIn names where in the request an API key appears, or returns "".
func keyIn(path, query string, body []byte) string {
	for _, part := range []struct{ name, text string }{{"path", path}, {"query", query}} {
		if sandbox.RedactKeys(part.text) != part.text {
			return part.name
		}
	}
	// Only a body that might hold a key, in some spelling, is made a
	// string to look: most hold none.
	if bytes.Contains(body, []byte("svc_")) || bytes.ContainsAny(body, `%\`) {
		if text := string(body); sandbox.RedactKeys(text) != text {
			return "body"
		}
	}
	return ""
}

// cut returns at most n bytes of s, at a rune boundary, and whether it cut.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n], true
}
