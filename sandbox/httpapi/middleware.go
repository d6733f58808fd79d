package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// requestState is filled in as a request passes the middleware, and read by
// logRequests once the response is written.
type requestState struct {
	account *sandbox.Account
}

type requestStateKey struct{}

func stateOf(r *http.Request) *requestState {
	return r.Context().Value(requestStateKey{}).(*requestState)
}

// accountOf returns the account that authenticate attached to the request.
func accountOf(r *http.Request) sandbox.Account {
	return *stateOf(r).account
}

// statusRecorder remembers the status a handler wrote, for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (rec *statusRecorder) WriteHeader(status int) {
	rec.status = status
	rec.ResponseWriter.WriteHeader(status)
}

// logRequests logs every request with the key hint, never the key, and keeps
// the account's recent requests for GET /_sandbox/requests.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		state := &requestState{}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestStateKey{}, state)))
		elapsed := time.Since(started)
		attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", elapsed}
		if state.account != nil {
			attrs = append(attrs, "key", state.account.KeyHint)
			if !strings.HasPrefix(r.URL.Path, controlPrefix) {
				s.requestLog.add(state.account.ID, loggedRequest{
					Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: rec.status,
					At: sandbox.Timestamp(s.clock.Now()), DurationMS: elapsed.Milliseconds(),
				})
			}
		}
		s.logger.InfoContext(r.Context(), "request", attrs...)
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
				s.logger.ErrorContext(r.Context(), "panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeError(w, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps every request body, so no handler can be made to read more.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			writeError(w, sandbox.Errorf(sandbox.ErrPayloadTooLarge, "request body is larger than %d bytes", MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func needsKey(path string) bool {
	return strings.HasPrefix(path, apiPrefix) || path == "/v1" || strings.HasPrefix(path, controlPrefix)
}

// authenticate admits requests to the API and the controls only with a valid
// test key, and makes sure the key's account exists.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !needsKey(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key, err := sandbox.ParseAuthorization(r.Header.Get("Authorization"))
		if err != nil {
			writeError(w, err)
			return
		}
		account := sandbox.AccountForKey(key)
		if err := s.store.EnsureAccount(account); err != nil {
			writeError(w, fmt.Errorf("open account %s: %w", account.KeyHint, err))
			return
		}
		stateOf(r).account = &account
		next.ServeHTTP(w, r)
	})
}

// limitRate counts API requests against the key's limits and reports the
// tightest window on every response; the controls are not counted.
func (s *Server) limitRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stateOf(r).account == nil || strings.HasPrefix(r.URL.Path, controlPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		d := s.limiter.Take(accountOf(r).ID, s.clock.Now())
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(d.Reset.Unix(), 10))
		if !d.Allowed {
			retryAfter := int(math.Ceil(d.RetryAfter.Seconds()))
			h.Set("Retry-After", strconv.Itoa(retryAfter))
			writeError(w, sandbox.Errorf(sandbox.ErrRateLimitExceeded,
				"rate limit of %d requests exceeded; retry in %d seconds", d.Limit, retryAfter))
			return
		}
		next.ServeHTTP(w, r)
	})
}
