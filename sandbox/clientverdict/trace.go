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
	"context"
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
	// maxMethod is how much of an unusual method an exchange keeps.
	maxMethod = 16
)

// exchangeBytes is what one slot of a trace's ring holds: an exchange.
// The ring is charged for the slots it has room for, and each exchange for
// any text it owns beside it, a path or method of its own once the trace
// shares no more; every other text an exchange names is a constant, or
// shared and charged when first kept.
const exchangeBytes = int64(unsafe.Sizeof(exchange{}))

// chargeEvery is the fewest slots a trace's ring grows by, so that a
// request takes the budget's lock for it once in a while, not every time.
const chargeEvery = 64

// sharedTextBytes is what a text shared by a trace costs beside its bytes:
// its string header twice, as the map's key and value, and the map's
// bookkeeping of the entry.
const sharedTextBytes = 48

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
	// Conn names the connection the request came on, its client's address
	// and port; empty where one connection carries requests side by side
	// (HTTP/2), so that it tells nothing of their order.
	Conn string
	// ConnOpened is when that connection was opened, and ConnRequest the
	// request's number among those of an account the connection carried,
	// from 1; the zero time and 0 when the server did not note them (see
	// ConnContext and NoteRequest).
	ConnOpened  time.Time
	ConnRequest uint64
	// At and Answered are the request's arrival and the end of its answer
	// on the account's clock; Arrived and Ended on the process's clock,
	// which runs when the account's is frozen.
	At, Answered   time.Time
	Arrived, Ended time.Time
	// Status is the status of the answer the sandbox made, 0 when none was
	// made; Received says how much of it the client was sent, as the
	// journal's entry does ("all", "headers", "partial" or "nothing"), ""
	// for all of it.
	Status   int
	Received string
	// CarriedOut is true when the API itself handled the request, as the
	// journal's entry says.
	CarriedOut bool
	// Abandoned is true when the client went away before its answer.
	Abandoned bool
	// Fault is the planned fault that hit the request, nil if none did.
	Fault *sandbox.Fault
	// Header is the answer's header.
	Header http.Header
}

// What the client was sent of an answer, as an exchange keeps it.
const (
	receivedAll uint8 = iota
	receivedNothing
	receivedHeaders
	receivedPartial
)

// receivedCodes reads the journal's words for what was received (those of
// package accounts, which keeps the trace and so cannot be imported here).
var receivedCodes = map[string]uint8{"": receivedAll, "all": receivedAll, "nothing": receivedNothing, "headers": receivedHeaders, "partial": receivedPartial}

// What is wrong with a request's Authorization header.
const (
	authRight uint8 = iota
	authScheme
	authSpaces
)

// What is wrong with a request's Content-Type.
const (
	mediaRight uint8 = iota
	mediaMissing
	mediaOther
)

// Where in a request its own key appears.
const (
	keyNowhere uint8 = iota
	keyInPath
	keyInQuery
	keyInBody
)

var keyPlaces = [...]string{keyInPath: "path", keyInQuery: "query", keyInBody: "body"}

// exchange is what a trace keeps of an observation: what the rules are
// judged on, and enough to name the request in a verdict. It holds no text
// of its own but its path and method, and those only once the trace shares
// no more: the rest is numbers, so that what a trace holds is what it is
// charged.
type exchange struct {
	request uint64
	// same identifies the request's method, path, query and body; route
	// its method and path; conn its connection, 0 when unknown.
	same, route, conn uint64
	at, answered      int64 // account's clock, Unix nanoseconds
	arrived, ended    int64 // process's clock, Unix nanoseconds
	// opened is when the request's connection was opened, on the
	// process's clock, 0 when unknown; connFirst is true when the request
	// was the first of an account the connection carried.
	opened int64
	// retryAfter is the wait the answer's Retry-After asked for, -1 when it
	// had none; resetWait the wait until X-RateLimit-Reset of an answer
	// with X-RateLimit-Remaining 0 of the key's windows, -1 otherwise.
	retryAfter, resetWait time.Duration
	method, path          string
	// status is the status the client was given, 0 when it was given none;
	// made the status the API made when it carried the request out, 0
	// when it did not or a fault of PhaseAfter answered in its place.
	status, made int16
	// fault is the number of the planned fault that hit the request, 0 for
	// none: flt_000007 is 7.
	fault              uint32
	network            uint8 // 1 + its index in sandbox.NetworkFaults, 0 for none
	received           uint8
	auth, media, keyIn uint8
	// after: the fault was of PhaseAfter.
	abandoned, hasBody, after, carriedOut, connFirst bool
	// owned is how many bytes of text the exchange holds of its own.
	owned uint8
}

// networkIs reports whether the fault that hit the exchange was the network
// failure given.
func (e *exchange) networkIs(name string) bool {
	return e.network > 0 && sandbox.NetworkFaults[e.network-1] == name
}

// lost reports whether the client never had the whole answer, as JSON: its
// connection ended before it, it came cut short or not JSON, or the client
// gave up waiting; or a gateway's 504 said that it was lost on the way.
func (e *exchange) lost() bool {
	return e.status == 0 || e.received != receivedAll || e.networkIs(sandbox.NetworkMalformed) || e.status == http.StatusGatewayTimeout
}

// failed reports whether the exchange is one a client may retry.
func (e *exchange) failed() bool {
	return e.lost() || e.status == http.StatusRequestTimeout || e.status == http.StatusTooManyRequests || e.status >= 500
}

// connEnded reports whether the exchange's connection ended with it, so
// that the client's next request needed another one.
func (e *exchange) connEnded() bool {
	return e.abandoned || e.networkIs(sandbox.NetworkReset) || e.networkIs(sandbox.NetworkClose) || e.networkIs(sandbox.NetworkTruncate)
}

// droppedBeforeAnswer reports whether the connection closed before any byte
// of an answer, the client still waiting: what an HTTP library may take for
// a kept-alive connection the server closed, and send again by itself.
func (e *exchange) droppedBeforeAnswer() bool {
	return !e.abandoned && e.received == receivedNothing && (e.networkIs(sandbox.NetworkReset) || e.networkIs(sandbox.NetworkClose))
}

// idempotent reports whether the request's method is idempotent (RFC 9110
// §9.2.2): one an HTTP library may send again by itself.
func (e *exchange) idempotent() bool {
	switch e.method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// wroteRecord reports whether the API carried the request out and made a
// success of it: for a POST, a record made. A fault that answered in the
// API's place once it had carried the request out hid its status, and the
// write is taken as made.
func (e *exchange) wroteRecord() bool {
	return e.carriedOut && (e.made == 0 || e.made >= 200 && e.made < 300)
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
	seen uint64
	// slots is how many slots of the ring the trace has been charged for;
	// owned is the text the exchanges kept own, and ownedCharged the most
	// of it the trace has been charged for.
	slots               int
	owned, ownedCharged int64
	charge              func(n int64)
	// shared are the distinct paths and unusual methods kept, each once, so
	// that a thousand requests to one route hold one copy of it.
	shared map[string]string
}

// maxShared bounds how many distinct texts a trace shares; past it each
// exchange keeps its own copy.
const maxShared = 1024

// keep returns a copy of text the trace may hold, and the bytes it costs:
// charged, for a text the trace shares from now on, or owned, for one the
// exchange keeps for itself. The request's own text may be part of its
// whole request line, which the trace must not hold. t.mu is held.
func (t *Trace) keep(text string) (kept string, charged, owned int64) {
	if kept, ok := t.shared[text]; ok {
		return kept, 0, 0
	}
	kept = strings.Clone(text)
	if t.shared == nil {
		t.shared = map[string]string{}
	}
	if len(t.shared) < maxShared {
		t.shared[kept] = kept
		return kept, int64(len(kept)) + sharedTextBytes, 0
	}
	// An allocation is rounded up; to 16 bytes is near enough for these.
	return kept, 0, int64(len(kept)+15) &^ 15
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
	var more, owned int64
	e.path, more, owned = t.keep(e.path)
	if !isConstant(e.method) {
		method, charged, ownedMethod := t.keep(e.method)
		e.method, more, owned = method, more+charged, owned+ownedMethod
	}
	e.owned = uint8(owned)
	t.seen++
	if len(t.ring) < MaxExchanges {
		if len(t.ring) == cap(t.ring) {
			// Doubled, as append would, but never past MaxExchanges.
			grown := make([]exchange, len(t.ring), min(max(2*len(t.ring), chargeEvery), MaxExchanges))
			copy(grown, t.ring)
			t.ring = grown
		}
		t.ring = append(t.ring, e)
		if room := cap(t.ring); room > t.slots {
			more += int64(room-t.slots) * exchangeBytes
			t.slots = room
		}
	} else {
		t.owned -= int64(t.ring[t.next].owned)
		t.ring[t.next] = e
		t.next = (t.next + 1) % MaxExchanges
	}
	t.owned += owned
	if t.owned > t.ownedCharged {
		more += t.owned - t.ownedCharged
		t.ownedCharged = t.owned
	}
	t.mu.Unlock()
	if more > 0 && t.charge != nil {
		t.charge(more)
	}
}

// snapshot appends the exchanges kept to buf, in the order their requests
// arrived, and returns them with how many the trace has forgotten.
func (t *Trace) snapshot(buf []exchange) ([]exchange, uint64) {
	t.mu.Lock()
	kept := append(buf[:0], t.ring[t.next:]...)
	kept = append(kept, t.ring[:t.next]...)
	forgotten := t.seen - uint64(len(t.ring))
	t.mu.Unlock()
	// They ended in another order than they arrived when they overlapped;
	// most traces are in order already, and a check costs less than a
	// sort's moves of exchanges.
	byRequest := func(a, b exchange) int { return cmp.Compare(a.request, b.request) }
	if !slices.IsSortedFunc(kept, byRequest) {
		slices.SortFunc(kept, byRequest)
	}
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
		received:   receivedCodes[o.Received],
		abandoned:  o.Abandoned,
		retryAfter: -1, resetWait: -1,
		hasBody: o.BodyBytes > 0 || o.ContentLength > 0,
	}
	if o.Conn != "" {
		e.conn = fingerprint(o.Conn)
		if o.ConnRequest > 0 {
			e.opened = o.ConnOpened.UnixNano()
			e.connFirst = o.ConnRequest == 1
		}
	}
	e.carriedOut = o.CarriedOut
	if o.CarriedOut && (o.Fault == nil || o.Fault.Status == 0) {
		e.made = int16(o.Status)
	}
	// The client was given a status when it was sent at least the
	// headers, and did not give up first.
	if !o.Abandoned && e.received != receivedNothing {
		e.status = int16(o.Status)
	}
	e.path, _ = cut(sandbox.RedactKeys(o.Path), maxPath)
	if o.Fault != nil {
		n, err := strconv.ParseUint(strings.TrimPrefix(o.Fault.ID, faultIDPrefix), 10, 32)
		if err == nil {
			e.fault = uint32(n)
		}
		e.network = uint8(slices.Index(sandbox.NetworkFaults, o.Fault.Network) + 1)
		e.after = o.Fault.Phase == sandbox.PhaseAfter
	}
	if e.status != 0 && o.Header != nil {
		e.retryAfter = retryAfter(o.Header.Get("Retry-After"), o.Answered)
		if o.Header.Get("X-RateLimit-Remaining") == "0" && o.Header.Get("X-RateLimit-Scope") != "client" {
			if reset, err := strconv.ParseInt(o.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				e.resetWait = max(0, time.Unix(reset, 0).Sub(o.Answered))
			}
		}
	}
	e.auth = authProblem(o.Authorization)
	if e.hasBody {
		e.media = mediaProblem(o.ContentType)
	}
	key, _ := strings.CutPrefix(o.Authorization, "Bearer ")
	e.keyIn = keyIn(strings.TrimSpace(key), o.Path, o.Query, o.Body)
	return e
}

// faultIDPrefix starts every planned fault's ID: flt_000007.
const faultIDPrefix = "flt_"

// faultID is the ID of the planned fault numbered n.
func faultID(n uint32) string {
	return fmt.Sprintf("%s%06d", faultIDPrefix, n)
}

var usualMethods = []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodTrace}

// methodName returns the method as a constant string where it is a usual
// one, so that an exchange does not hold on to the request line.
func methodName(m string) string {
	for _, known := range usualMethods {
		if m == known {
			return known
		}
	}
	short, _ := cut(m, maxMethod)
	return short
}

// isConstant reports whether a method name is one of the usual ones, which
// methodName gives as a constant.
func isConstant(m string) bool {
	return slices.Contains(usualMethods, m)
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
// sandbox accepted.
func authProblem(v string) uint8 {
	key, ok := strings.CutPrefix(v, "Bearer ")
	switch {
	case !ok:
		return authScheme
	case key != strings.TrimSpace(key) || strings.Contains(key, " "):
		return authSpaces
	}
	return authRight
}

// mediaProblem says what is wrong with the Content-Type of a request with a
// body.
func mediaProblem(v string) uint8 {
	if v == "" {
		return mediaMissing
	}
	if v == "application/json" || strings.HasPrefix(v, "application/json;") {
		return mediaRight
	}
	if media, _, err := mime.ParseMediaType(v); err != nil || media != "application/json" {
		return mediaOther
	}
	return mediaRight
}

// keyIn says where in the request the key it authenticates with appears,
// in any spelling: a text that only looks like a key, such as a campaign
// named svc_test_example, is no key of the client's.
func keyIn(key, path, query string, body []byte) uint8 {
	if key == "" {
		return keyNowhere
	}
	switch {
	case sandbox.HasKey(path, key):
		return keyInPath
	case sandbox.HasKey(query, key):
		return keyInQuery
	}
	// Only a body that might hold a key, in some spelling, is made a
	// string to look: most hold none.
	if bytes.Contains(body, []byte("svc_")) || bytes.ContainsAny(body, `%\`) {
		if sandbox.HasKey(string(body), key) {
			return keyInBody
		}
	}
	return keyNowhere
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

// connKey is the context key under which ConnContext puts what the
// verdict learns of a connection.
type connKey struct{}

// connNote is what the verdict learns of a connection: when it was opened,
// and how many requests of an account it has carried.
type connNote struct {
	opened   time.Time
	requests atomic.Uint64
}

// ConnContext is an http.Server's ConnContext hook that notes when each
// connection was opened, so that the verdict can tell a request a client
// sent once it had an answer, on a connection it opened for it then, from
// one a worker sent alongside, on a connection it had opened already. A
// server without it is judged on arrival times alone.
func ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connNote{opened: time.Now()})
}

// NoteRequest counts a request of an account on the connection of the
// context given, and returns when that connection was opened and how many
// such requests it has carried, this one included: the zero time and 0
// when the server notes no connections (see ConnContext).
func NoteRequest(ctx context.Context) (opened time.Time, requests uint64) {
	note, ok := ctx.Value(connKey{}).(*connNote)
	if !ok {
		return time.Time{}, 0
	}
	return note.opened, note.requests.Add(1)
}
