package accounts

import (
	"maps"
	"net/http"
	"slices"
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
	// Status is the answer's status, nil when no answer was sent.
	Status *int `json:"status"`
	// Abandoned is true when the client went away before its answer.
	Abandoned bool `json:"abandoned"`
	// Pending is true from the request's arrival until its answer is sent
	// or its connection lost; the entry is then completed in place.
	Pending bool `json:"pending"`
	// Fault is the planned fault that hit the request, if one did.
	Fault      *sandbox.Fault `json:"fault"`
	At         sandbox.Time   `json:"at"`
	DurationMS int64          `json:"durationMs"`

	// Seq numbers an account's requests in the order they arrived, and is
	// the cursor of the journal's pages.
	Seq uint64 `json:"-"`

	// raw is true while the entry is as the request came: not yet cut to
	// the journal's bounds nor redacted, its Headers the request's own.
	raw bool
}

// size is about what the entry holds in memory, for MaxRequestLogBytes.
func (req *LoggedRequest) size() int {
	n := len(req.Method) + len(req.Path) + len(req.Query) + len(req.Body) + 128
	for name, values := range req.Headers {
		n += len(name)
		for _, v := range values {
			n += len(v) + 16
		}
	}
	return n
}

// RequestLog keeps an account's most recent API requests.
type RequestLog struct {
	mu sync.Mutex
	// entries are oldest first.
	entries []LoggedRequest
	bytes   int
	// seq is the Seq of the last entry added.
	seq uint64
}

// maxRawEntryBytes is the largest request, as size counts it, that the
// journal keeps as it came until it is read. Every API request writes the
// journal and few read it, so cutting and redacting waits for a read; a
// request larger than this is cut at once, so that a raw entry never holds
// more than a cut one may.
const maxRawEntryBytes = 4 << 10

// Add logs a request as it arrives and returns its Seq, by which Complete
// finds it again. What Recent returns is cut to the journal's bounds, and
// every API key in it redacted.
func (l *RequestLog) Add(req LoggedRequest) uint64 {
	req.stored()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	req.Seq = l.seq
	l.entries = append(l.entries, req)
	l.bytes += req.size()
	l.drop()
	return req.Seq
}

// stored readies an entry to be kept: raw while it is small, else cut and
// redacted at once, so that a raw entry never holds more than a cut one may.
func (req *LoggedRequest) stored() {
	if req.size() <= maxRawEntryBytes {
		req.raw = true
	} else {
		req.finish()
	}
}

// drop forgets the oldest entries beyond the journal's bounds; l.mu is held.
func (l *RequestLog) drop() {
	drop := 0
	for len(l.entries)-drop > RequestLogSize || (l.bytes > MaxRequestLogBytes && len(l.entries)-drop > 1) {
		l.bytes -= l.entries[drop].size()
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
	defer l.mu.Unlock()
	if len(l.entries) == 0 || seq < l.entries[0].Seq || seq > l.entries[len(l.entries)-1].Seq {
		return
	}
	req := &l.entries[seq-l.entries[0].Seq]
	l.bytes -= req.size()
	complete(req)
	// What complete added is neither cut nor redacted yet, whatever the
	// rest of the entry is; finish does again what it has done.
	req.stored()
	l.bytes += req.size()
	l.drop()
}

// finish cuts a raw entry to the journal's bounds and redacts every API key
// in it. Its Headers are then a map of its own, no longer the request's.
func (req *LoggedRequest) finish() {
	var cutPath, cutQuery bool
	req.Path, cutPath = Prefix(sandbox.RedactKeys(req.Path), MaxLoggedText)
	req.Query, cutQuery = Prefix(sandbox.RedactQueryKeys(req.Query), MaxLoggedText)
	req.Truncated = req.Truncated || cutPath || cutQuery
	var cutBody bool
	req.Body, cutBody = Prefix(sandbox.RedactKeys(req.Body), MaxLoggedBody)
	req.BodyTruncated = req.BodyTruncated || cutBody
	var cutHeaders bool
	req.Headers, cutHeaders = loggedHeaders(req.Headers)
	req.HeadersTruncated = req.HeadersTruncated || cutHeaders
	req.raw = false
}

// Recent returns the logged requests with the method and path (a pattern as
// sandbox.MatchPath takes) asked for, or all of them, newest first.
func (l *RequestLog) Recent(method, path string) []LoggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := make([]LoggedRequest, 0, len(l.entries))
	for i := len(l.entries) - 1; i >= 0; i-- {
		req := &l.entries[i]
		if req.raw && !req.Pending {
			before := req.size()
			req.finish()
			l.bytes += req.size() - before
		}
		if (method == "" || req.Method == method) && sandbox.MatchPath(path, req.Path) {
			shown := *req
			if shown.raw {
				// Still being served: the entry stays raw for Complete,
				// and only what is shown is cut and redacted.
				shown.finish()
			}
			recent = append(recent, shown)
		}
	}
	return recent
}

// loggedHeaders keeps at most MaxLoggedHeaders fields, each value cut to
// MaxLoggedText, with every key redacted, Authorization's included. Past
// MaxLoggedHeaders it keeps the first in name order, so that what is kept
// does not depend on map order.
func loggedHeaders(h http.Header) (http.Header, bool) {
	names, cut := maps.Keys(h), len(h) > MaxLoggedHeaders
	if cut {
		names = slices.Values(slices.Sorted(maps.Keys(h))[:MaxLoggedHeaders])
	}
	fields := min(len(h), MaxLoggedHeaders)
	logged := make(http.Header, fields)
	// One array for the values of all fields: most have one.
	kept := make([]string, 0, fields)
	for name := range names {
		values := h[name]
		if len(values) == 0 {
			continue
		}
		if len(values) > 4 {
			values, cut = values[:4], true
		}
		first := len(kept)
		for _, v := range values {
			v, cutValue := Prefix(sandbox.RedactKeys(v), MaxLoggedText)
			cut = cut || cutValue
			kept = append(kept, v)
		}
		logged[name] = kept[first:len(kept):len(kept)]
	}
	return logged, cut
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
