package accounts

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/testcampaign/kit/sandbox"
)

// Bounds of the request journal.
const (
	// RequestLogSize is how many recent requests an account's journal keeps.
	RequestLogSize = 100
	// MaxLoggedText is how much of a path, query or header value is kept:
	// enough to recognise a request, never a megabyte a line.
	MaxLoggedText = 256
	// MaxLoggedBody is how much of a request body is kept.
	MaxLoggedBody = 2 << 10
	// MaxLoggedHeaders is how many header fields of a request are kept.
	MaxLoggedHeaders = 32
	// MaxRequestLogBytes bounds what one account's journal holds in all;
	// past it the oldest entries go first, so that a hundred large
	// requests cost no more than this.
	MaxRequestLogBytes = 64 << 10
)

// What the client of a journaled request was sent of its answer, as far as
// the sandbox wrote it to the connection.
const (
	// ReceivedNothing: no byte of an answer.
	ReceivedNothing = "nothing"
	// ReceivedHeaders: the status line and headers, none of the body.
	ReceivedHeaders = "headers"
	// ReceivedPartial: the headers and part of the body.
	ReceivedPartial = "partial"
	// ReceivedAll: the whole answer.
	ReceivedAll = "all"
)

// LoggedRequest is one API request as GET /_sandbox/requests shows it.
type LoggedRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query"`
	// Truncated is true when Path or Query was cut to MaxLoggedText.
	Truncated bool `json:"truncated"`
	// Headers are the request's header fields, the key redacted.
	Headers http.Header `json:"headers"`
	// HeadersTruncated is true when a header was dropped or cut.
	HeadersTruncated bool `json:"headersTruncated"`
	// Body is as much of the body as the sandbox read, up to MaxLoggedBody.
	Body string `json:"body"`
	// BodyBytes is how many bytes of the body the sandbox read in all.
	BodyBytes     int64 `json:"bodyBytes"`
	BodyTruncated bool  `json:"bodyTruncated"`
	// Status is the status of the answer the sandbox made, whether or not
	// the client received it (Received says how much it did); for a
	// request a fault carried out and then dropped, the API's status. Nil
	// when no answer was made.
	Status *int `json:"status"`
	// APIStatus is the status of the API's own answer when a status or
	// malformed fault of phase after answered in its place; nil otherwise,
	// when Status is the API's whenever it carried the request out.
	APIStatus *int `json:"apiStatus,omitempty"`
	// CarriedOut is true when the API itself handled the request, spending
	// its budget: a write is applied when its status, or APIStatus when
	// set, is a success. False when the rate limit or a fault answered in
	// its place, or when the client gave up while a fault held the request
	// back.
	CarriedOut bool `json:"carriedOut"`
	// Received is what the client was sent of the answer: one of
	// ReceivedNothing, ReceivedHeaders, ReceivedPartial, ReceivedAll.
	Received string `json:"received"`
	// Abandoned is true when the client went away before its answer.
	Abandoned bool `json:"abandoned"`
	// Pending is true from the request's arrival until its answer is sent
	// or its connection lost; the entry is then completed in place.
	Pending bool `json:"pending"`
	// Fault is the planned fault that hit the request, if one did.
	Fault *sandbox.Fault `json:"fault"`
	// DeliveryFaults are the webhook faults that hit deliveries of the
	// events the request made, one for each delivery hit.
	DeliveryFaults []sandbox.Fault `json:"deliveryFaults,omitempty"`
	At             sandbox.Time    `json:"at"`
	DurationMS     int64           `json:"durationMs"`

	// Seq numbers an account's requests in the order they arrived, and is
	// the cursor of the journal's pages.
	Seq uint64 `json:"-"`

	// fields are the header fields as name, value pairs: the journal keeps
	// no map, which would cost more than its fields, and Recent builds
	// Headers from them.
	fields []string
	// raw is true while the entry is as the request came: not yet cut to
	// the journal's bounds nor redacted.
	raw bool
	// bytes is what the log counts the entry as, size's measure when it
	// was stored or finished: kept, because the log adds, completes and
	// drops an entry every request, and measuring walks its header fields.
	bytes int
}

// What an entry costs beside the bytes of its strings: the LoggedRequest
// itself and its pointer in the log's array, which may be twice as long as
// the log; and each header string's own header and the rounding of its
// allocation.
const (
	entryOverhead = 192
	fieldOverhead = 24
)

// size is what the entry holds in memory, for MaxRequestLogBytes: every
// string it keeps is its own (finish copies what it cuts), so their lengths
// count whole. A fault's copy counts whole too, body and headers: once the
// plan has dropped the fault, the entry is what keeps them.
func (req *LoggedRequest) size() int {
	n := len(req.Method) + len(req.Path) + len(req.Query) + len(req.Body) + entryOverhead
	if req.Fault != nil {
		n += req.Fault.Bytes()
	}
	for _, f := range req.DeliveryFaults {
		n += f.Bytes()
	}
	for _, f := range req.fields {
		n += len(f) + fieldOverhead
	}
	return n
}

// RequestLog keeps an account's most recent API requests.
type RequestLog struct {
	mu sync.Mutex
	// entries are oldest first, each an allocation of its own, so that
	// what the array keeps beyond them is a pointer apiece.
	entries []*LoggedRequest
	bytes   int
	// seq is the Seq of the last entry added.
	seq uint64
	// charged is what the log has been charged to the memory budget so
	// far, in steps of chargeStep; charge, if set, asks for more.
	charged int
	charge  func(n int64)
}

// chargeStep is how much of the memory budget a journal asks for at a time,
// so that a request takes the registry's lock for it some sixty times in an
// account's life, not every time.
const chargeStep = 1 << 10

// uncharged returns how much more the log must be charged for what it
// holds now, and counts it as charged; l.mu is held.
func (l *RequestLog) uncharged() int64 {
	if l.charge == nil || l.bytes <= l.charged {
		return 0
	}
	more := (l.bytes - l.charged + chargeStep - 1) / chargeStep * chargeStep
	l.charged += more
	return int64(more)
}

// maxRawEntryBytes is the largest request, as size counts it, that the
// journal keeps as it came until it is read. Every API request writes the
// journal and few read it, so cutting and redacting waits for a read; a
// request larger than this is cut at once, so that a raw entry never holds
// more than a cut one may.
const maxRawEntryBytes = 4 << 10

// Add logs a request as it arrives, and returns its Seq, by which Complete
// finds it again. It reads req.Headers but keeps no part of the map. What
// Recent returns is cut to the journal's bounds, and every API key in it
// redacted.
func (l *RequestLog) Add(req LoggedRequest) uint64 {
	req.fields, req.Headers = headerFields(req.Headers), nil
	req.raw = true
	req.stored()
	l.mu.Lock()
	l.seq++
	req.Seq = l.seq
	l.entries = append(l.entries, &req)
	l.bytes += req.bytes
	l.drop()
	more := l.uncharged()
	l.mu.Unlock()
	if more > 0 {
		l.charge(more)
	}
	return req.Seq
}

// stored readies an entry to be kept: raw while it is small, else cut and
// redacted at once, so that a raw entry never holds more than a cut one may.
// An entry cut already is cut again, for what Complete added to it.
func (req *LoggedRequest) stored() {
	if req.raw {
		if req.bytes = req.size(); req.bytes <= maxRawEntryBytes {
			return
		}
	}
	req.finish()
}

// headerFields flattens h into name, value pairs, each name's together. With
// more names than MaxLoggedHeaders they are in name order, so that which
// are kept does not depend on map order; with fewer, all are kept, and
// their order, which no reader sees, is not worth sorting every request.
func headerFields(h map[string][]string) []string {
	if len(h) == 0 {
		return nil
	}
	n := 0
	for _, values := range h {
		n += 2 * len(values)
	}
	fields := make([]string, 0, n)
	add := func(name string, values []string) {
		for _, v := range values {
			fields = append(fields, name, v)
		}
	}
	if len(h) > MaxLoggedHeaders {
		for _, name := range slices.Sorted(maps.Keys(h)) {
			add(name, h[name])
		}
		return fields
	}
	for name, values := range h {
		add(name, values)
	}
	return fields
}

// drop forgets the oldest entries beyond the journal's bounds; l.mu is held.
func (l *RequestLog) drop() {
	drop := 0
	for len(l.entries)-drop > RequestLogSize || (l.bytes > MaxRequestLogBytes && len(l.entries)-drop > 1) {
		l.bytes -= l.entries[drop].bytes
		drop++
	}
	// Sliced off the front, not shifted down: append moves the survivors
	// only when it outgrows the array, once per RequestLogSize requests or
	// so, where shifting moved all of them on every request.
	clear(l.entries[:drop])
	l.entries = l.entries[drop:]
}

// Complete changes the entry of a request in place, if the journal still
// holds it: complete fills in what was learnt while it was served.
func (l *RequestLog) Complete(seq uint64, complete func(*LoggedRequest)) {
	l.mu.Lock()
	if len(l.entries) == 0 || seq < l.entries[0].Seq || seq > l.entries[len(l.entries)-1].Seq {
		l.mu.Unlock()
		return
	}
	req := l.entries[seq-l.entries[0].Seq]
	l.bytes -= req.bytes
	complete(req)
	// What complete added is neither cut nor redacted yet, whatever the
	// rest of the entry is; finish does again what it has done.
	req.stored()
	l.bytes += req.bytes
	l.drop()
	more := l.uncharged()
	l.mu.Unlock()
	if more > 0 {
		l.charge(more)
	}
}

// finish cuts a raw entry to the journal's bounds and redacts every API key
// in it. What it keeps is copied, so that a cut value no longer holds the
// whole of what it was cut from.
func (req *LoggedRequest) finish() {
	// The method, path and query may be substrings of the whole request
	// line, which is kilobytes when the query is.
	req.Method = strings.Clone(req.Method)
	var cutPath, cutQuery bool
	req.Path, cutPath = Prefix(sandbox.RedactKeys(req.Path), MaxLoggedText)
	req.Query, cutQuery = Prefix(sandbox.RedactKeys(req.Query), MaxLoggedText)
	req.Path, req.Query = strings.Clone(req.Path), strings.Clone(req.Query)
	req.Truncated = req.Truncated || cutPath || cutQuery
	var cutBody bool
	req.Body, cutBody = Prefix(sandbox.RedactKeys(req.Body), MaxLoggedBody)
	req.BodyTruncated = req.BodyTruncated || cutBody
	var cutHeaders bool
	req.fields, cutHeaders = loggedFields(req.fields)
	req.HeadersTruncated = req.HeadersTruncated || cutHeaders
	req.raw = false
	req.bytes = req.size()
}

// Recent returns the logged requests with the method and path (a pattern as
// sandbox.MatchPath takes) asked for, or all of them, newest first.
func (l *RequestLog) Recent(method, path string) []LoggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := make([]LoggedRequest, 0, len(l.entries))
	for i := len(l.entries) - 1; i >= 0; i-- {
		req := l.entries[i]
		if req.raw && !req.Pending {
			before := req.bytes
			req.finish()
			l.bytes += req.bytes - before
		}
		if (method == "" || req.Method == method) && sandbox.MatchPath(path, req.Path) {
			shown := *req
			if shown.raw {
				// Still being served: the entry stays raw for Complete,
				// and only what is shown is cut and redacted.
				shown.finish()
			}
			shown.Headers = headerOf(shown.fields)
			recent = append(recent, shown)
		}
	}
	return recent
}

// loggedFields keeps the fields of at most MaxLoggedHeaders names, the
// first in name order, and at most four values of each, every name and
// value cut to MaxLoggedText and redacted, Authorization's included. It
// reports whether it dropped or cut anything.
func loggedFields(fields []string) ([]string, bool) {
	keep := make([]bool, len(fields)/2)
	kept, names, values := 0, 0, 0
	for i := range keep {
		if i == 0 || fields[2*i] != fields[2*i-2] {
			names, values = names+1, 0
		}
		values++
		if keep[i] = names <= MaxLoggedHeaders && values <= 4; keep[i] {
			kept++
		}
	}
	logged := make([]string, 0, 2*kept)
	cut := kept < len(keep)
	for i, k := range keep {
		if !k {
			continue
		}
		name, cutName := Prefix(redactName(fields[2*i]), MaxLoggedText)
		value, cutValue := Prefix(sandbox.RedactKeys(fields[2*i+1]), MaxLoggedText)
		cut = cut || cutName || cutValue
		logged = append(logged, strings.Clone(name), strings.Clone(value))
	}
	return logged, cut
}

// redactName redacts a key used as a header field's name, which net/http
// has given capitals (Svc_test_…): such a name is shown in lower case.
func redactName(name string) string {
	lower := strings.ToLower(name)
	if redacted := sandbox.RedactKeys(lower); redacted != lower {
		return redacted
	}
	return sandbox.RedactKeys(name)
}

// headerOf builds the Headers a reader sees from name, value pairs.
func headerOf(fields []string) http.Header {
	h := make(http.Header, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		h[fields[i]] = append(h[fields[i]], fields[i+1])
	}
	return h
}

// Prefix returns at most max bytes of s, cut at a rune boundary, and
// whether it cut anything.
func Prefix(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
