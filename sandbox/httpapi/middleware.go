package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/ratelimit"
)

// Bounds of a request line and its headers.
const (
	// MaxURLBytes is the longest request target served; longer ones get
	// 414. It also keeps a query under net/url's 10,000 parameters, past
	// which it parses none of them.
	MaxURLBytes = 8 << 10
	// MaxHeaderBytes fits any real request's headers with room to spare;
	// past it net/http answers 431 before a handler runs. Every server of
	// the sandbox, the binary's and the test servers', sets it.
	MaxHeaderBytes = 64 << 10
)

// requestState is filled in as a request passes the middleware, and read by
// the handlers and by logRequests once the response is written.
type requestState struct {
	// started is when the request reached the sandbox, on the process's
	// clock, for the durations the log and the journal report.
	started time.Time
	account *accounts.Account
	// now is the time on the account's clock that the request is served
	// at: read once, so that its Date, its rate-limit window and its
	// journal entry agree, and moved on only by a fault's delay.
	now   time.Time
	query url.Values
	// journal is set for a request the journal keeps.
	journal *journalEntry

	// What the middleware wraps a request in, allocated with the state
	// instead of one by one.
	recorder        statusRecorder
	journalEntry    journalEntry
	journalBody     bodyTap
	journalRecorder journalRecorder
	match           mux.RouteMatch
}

type requestStateKey struct{}

func stateOf(r *http.Request) *requestState {
	return r.Context().Value(requestStateKey{}).(*requestState)
}

// accountOf returns the account that authenticate attached to the request.
func accountOf(r *http.Request) *accounts.Account {
	return stateOf(r).account
}

// routeID returns the {id} of the request's route: the path's last
// segment, which is where pathMatcher lets a route's variable be, and which
// it checked is one segment and not empty.
func routeID(r *http.Request) string {
	return r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
}

// queryOf returns the query parameters, parsed once by checkRequestLine.
func queryOf(r *http.Request) url.Values {
	return stateOf(r).query
}

// loggedPath is the path as logs and messages repeat it: bounded, and with
// any key in it redacted.
func loggedPath(r *http.Request) string {
	return sandbox.Echo(r.URL.Path)
}

// statusRecorder remembers the status a handler wrote, for the log, and
// gives the writing of the response its own deadline.
type statusRecorder struct {
	http.ResponseWriter
	status       int
	writeTimeout time.Duration
	writing      bool
}

func (rec *statusRecorder) WriteHeader(status int) {
	rec.status = status
	rec.startWriting()
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *statusRecorder) Write(b []byte) (int, error) {
	rec.startWriting()
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (rec *statusRecorder) Unwrap() http.ResponseWriter {
	return rec.ResponseWriter
}

// startWriting sets the write deadline when the response starts, not when
// the request arrived, so that an injected delay does not eat into it and a
// client that never reads is dropped after writeTimeout.
func (rec *statusRecorder) startWriting() {
	if rec.writing || rec.writeTimeout <= 0 {
		return
	}
	rec.writing = true
	// A writer that has no deadline to set (a test's recorder) needs none.
	_ = http.NewResponseController(rec.ResponseWriter).SetWriteDeadline(time.Now().Add(rec.writeTimeout))
}

// logRequests logs every request with the key hint, never the key.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		state := &requestState{started: started}
		rec := &state.recorder
		*rec = statusRecorder{ResponseWriter: w, status: http.StatusOK, writeTimeout: s.writeTimeout}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestStateKey{}, state)))
		ended := time.Now()
		elapsed := ended.Sub(started)
		a := state.account
		// Checked first, so that a sandbox logging nothing builds no line.
		if !s.logger.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		line := requestLine{at: ended, method: r.Method, path: loggedPath(r), status: rec.status, duration: elapsed,
			client: s.clients.clientAddress(r)}
		if a != nil {
			line.key = a.KeyHint
		}
		if h, ok := s.logger.Handler().(*logHandler); ok && h.writeRequest(&line) {
			return
		}
		s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", line.attrs()...)
	})
}

// recoverPanics turns a panic into INTERNAL_ERROR for the client and a log
// line for the operator, instead of a dropped connection.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitClients counts every request, whatever its path or key, against its
// client's budget: keys are free, so a budget per key alone bounds nothing.
func (s *Server) limitClients(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := s.clients.takeRequest(r); !d.Allowed {
			s.refuse(w, r, d, scopeClient, "this address has sent %d requests this minute, the most one client may; retry in %d seconds")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkRequestLine refuses request targets too long to be a real request, and
// queries that net/url would cut short, before anything else reads them.
func (s *Server) checkRequestLine(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.RequestURI) > MaxURLBytes {
			s.writeError(w, r, sandbox.Errorf(sandbox.ErrURITooLong, "the request target is longer than %d bytes", MaxURLBytes))
			return
		}
		// Without a query, the parameters stay nil, which reads as empty,
		// rather than an empty map made for every such request.
		if r.URL.RawQuery != "" {
			query, err := url.ParseQuery(r.URL.RawQuery)
			if err != nil {
				// The error names the parameter, which may be long.
				s.writeError(w, r, sandbox.Errorf(sandbox.ErrInvalidParameter, "the query string cannot be read: %s", sandbox.Echo(err.Error())))
				return
			}
			stateOf(r).query = query
		}
		next.ServeHTTP(w, r)
	})
}

// limitBody caps every request body, so no handler can be made to read more.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			s.writeError(w, r, sandbox.Errorf(sandbox.ErrPayloadTooLarge, "request body is larger than %d bytes", MaxBodyBytes))
			return
		}
		// A request without a body, as most are, has nothing to cap.
		if r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

func needsKey(path string) bool {
	return strings.HasPrefix(path, apiPrefix) || path == "/v1" || strings.HasPrefix(path, controlPrefix)
}

// authenticate admits requests to the API and the controls only with a valid
// test key, and attaches the key's account.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !needsKey(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key, err := ParseAuthorization(headerValue(r.Header, "Authorization"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		a, held := s.accounts.Held(key)
		if !held {
			if d := s.clients.takeNewAccount(r); !d.Allowed {
				s.refuse(w, r, d, scopeClient, "this address has opened %d new accounts this minute, the most one client may; retry in %d seconds")
				return
			}
			a = s.accounts.Get(key)
		}
		state := stateOf(r)
		state.account = a
		s.serveAt(w, state, a.Clock.Now())
		next.ServeHTTP(w, r)
	})
}

// serveAt sets the time on the account's clock that the request is served
// at, and the Date header that says so. The account's clock, not the
// process's: under a frozen clock a client that compares X-RateLimit-Reset
// with Date must see the same time the windows do.
func (s *Server) serveAt(w http.ResponseWriter, state *requestState, now time.Time) {
	state.now = now
	w.Header()["Date"] = s.dates.get(now.Unix(), dateValue)
}

// limiterFor returns the budget a request is counted against, and its scope:
// the API's limits, or the controls' own.
func limiterFor(r *http.Request) (*ratelimit.Limiter, []string) {
	a := accountOf(r)
	if strings.HasPrefix(r.URL.Path, controlPrefix) {
		return a.Controls, scopeControls
	}
	return a.Limiter, scopeKey
}

// rateLimitMessage formats a key's 429 from its limit and the seconds to wait.
const rateLimitMessage = "rate limit of %d requests exceeded; retry in %d seconds"

// limitRate counts authenticated requests against their budget and reports
// its tightest window on every response.
func (s *Server) limitRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state := stateOf(r)
		if state.account == nil {
			next.ServeHTTP(w, r)
			return
		}
		limiter, scope := limiterFor(r)
		d := limiter.Take(state.now)
		if !d.Allowed {
			s.refuse(w, r, d, scope, rateLimitMessage)
			return
		}
		if state.journal != nil {
			state.journal.carriedOut = true
		}
		s.setRateHeaders(w, d, scope)
		next.ServeHTTP(w, r)
	})
}

// The values of X-RateLimit-Scope, which says which budget the rate-limit
// headers and a 429 report, so that a client can tell a shared sandbox's
// per-client budget from its key's. Responses share them: a header's values
// are replaced, never written in place.
var (
	scopeKey      = []string{"key"}
	scopeControls = []string{"controls"}
	scopeClient   = []string{"client"}
)

// setRateHeaders reports decision d of the budget that scope names.
func (s *Server) setRateHeaders(w http.ResponseWriter, d ratelimit.Decision, scope []string) {
	window := s.windows.get(rateWindow{d.Limit, d.Reset.Unix()}, rateWindow.headerValues)
	// Set directly, in canonical form, as Header.Set would store them: these
	// go out on every request.
	h := w.Header()
	h["X-Ratelimit-Limit"] = window.limit
	h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(d.Remaining)}
	h["X-Ratelimit-Reset"] = window.reset
	h["X-Ratelimit-Scope"] = scope
}

// rateWindow is what a rate-limit window's headers say of it beside the
// count that remains: they change once a window, not once a request.
type rateWindow struct {
	limit     int
	resetUnix int64
}

// rateWindowValues are a window's X-RateLimit-Limit and X-RateLimit-Reset
// values.
type rateWindowValues struct{ limit, reset []string }

func (w rateWindow) headerValues() rateWindowValues {
	return rateWindowValues{limit: []string{strconv.Itoa(w.limit)}, reset: []string{strconv.FormatInt(w.resetUnix, 10)}}
}

// refuse answers 429 with the headers of the exhausted budget, which scope
// names; message formats the budget's limit and the seconds to wait.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, d ratelimit.Decision, scope []string, message string) {
	s.setRateHeaders(w, d, scope)
	retryAfter := max(1, int(math.Ceil(d.RetryAfter.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	s.writeError(w, r, sandbox.Errorf(sandbox.ErrRateLimitExceeded, message, d.Limit, retryAfter))
}

// dateValue is the Date header's value for a time, in Unix seconds.
func dateValue(unix int64) []string {
	return []string{time.Unix(unix, 0).UTC().Format(http.TimeFormat)}
}

// lastFormatted keeps the last value format made of a key, for what
// responses and log lines spell far more often than it changes: a Date
// header or a log line's time once a second, a rate-limit window's headers
// once a window. A request on another clock (frozen, moved) or another
// window formats its own and takes the cache over; the value is right
// either way. Responses share a value: a header's values are replaced,
// never written in place.
type lastFormatted[K comparable, V any] struct {
	last atomic.Pointer[formatted[K, V]]
}

type formatted[K comparable, V any] struct {
	key   K
	value V
}

// get returns format(key), made again only when key is not the last one.
func (c *lastFormatted[K, V]) get(key K, format func(K) V) V {
	if f := c.last.Load(); f != nil && f.key == key {
		return f.value
	}
	value := format(key)
	c.last.Store(&formatted[K, V]{key, value})
	return value
}
