package accounts

import (
	"sync"
	"unicode/utf8"

	"github.com/testcampaign/kit/sandbox"
)

// Bounds of the request log.
const (
	// RequestLogSize is how many recent requests an account's log keeps.
	RequestLogSize = 100
	// MaxLoggedText is how much of a path or query string is kept: enough
	// to recognise a request, never a megabyte a line.
	MaxLoggedText = 256
)

// LoggedRequest is one API request as GET /_sandbox/requests shows it.
type LoggedRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query"`
	// Truncated is true when Path or Query was cut to MaxLoggedText.
	Truncated  bool         `json:"truncated"`
	Status     int          `json:"status"`
	At         sandbox.Time `json:"at"`
	DurationMS int64        `json:"durationMs"`
}

// RequestLog keeps an account's most recent API requests.
type RequestLog struct {
	mu      sync.Mutex
	entries []LoggedRequest
	// next is where the next entry goes once the ring is full.
	next int
}

// Add logs a request, cutting its path and query to MaxLoggedText.
func (l *RequestLog) Add(req LoggedRequest) {
	var cutPath, cutQuery bool
	req.Path, cutPath = Prefix(req.Path, MaxLoggedText)
	req.Query, cutQuery = Prefix(req.Query, MaxLoggedText)
	req.Truncated = cutPath || cutQuery
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) < RequestLogSize {
		l.entries = append(l.entries, req)
		return
	}
	l.entries[l.next] = req
	l.next = (l.next + 1) % RequestLogSize
}

// Recent returns the logged requests, newest first.
func (l *RequestLog) Recent() []LoggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := make([]LoggedRequest, 0, len(l.entries))
	for i := range l.entries {
		recent = append(recent, l.entries[(l.next+len(l.entries)-1-i)%len(l.entries)])
	}
	return recent
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
