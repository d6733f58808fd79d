package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// ErrThrottled marks a request the deployment kept refusing with 429s the
// run did not ask for: the run cannot judge what it could not send.
var ErrThrottled = errors.New("throttled")

// The budgets a 429 can come from, as X-RateLimit-Scope names them (RATE-14).
// A deployment that does not send the header is taken to mean the key's.
const (
	ScopeKey      = "key"
	ScopeControls = "controls"
	ScopeClient   = "client"
)

// maxThrottleWait bounds how long one request waits out 429s the run did
// not plan: a minute window and its slack. A Retry-After beyond it (an
// hour or a day window spent) ends the request at once.
const maxThrottleWait = 2 * time.Minute

// minThrottleWait is the least wait between two tries, whatever
// Retry-After says, so that a deployment answering "Retry-After: 0" is not
// hammered.
const minThrottleWait = time.Second

// ThrottledError says which budget kept refusing a request and for how long
// the run waited on it.
type ThrottledError struct {
	Scope      string // key, controls or client
	Limit      int    // the budget's X-RateLimit-Limit, 0 when not given
	Request    string // method and path
	RetryAfter time.Duration
	Waited     time.Duration
}

func (e *ThrottledError) Error() string {
	budget := budgetName(e.Scope)
	if e.Limit > 0 {
		budget += fmt.Sprintf(" (%d a window)", e.Limit)
	}
	return fmt.Sprintf("%s: %s kept answering 429 to %s after %s of waiting (last Retry-After: %s)",
		ErrThrottled, budget, e.Request, e.Waited.Round(time.Second), e.RetryAfter.Round(time.Second))
}

func (e *ThrottledError) Unwrap() error { return ErrThrottled }

// budgetName says in words which budget a scope names.
func budgetName(scope string) string {
	switch scope {
	case ScopeClient:
		return "the deployment's budget for this client address (X-RateLimit-Scope: client)"
	case ScopeControls:
		return "the key's budget for the sandbox controls (X-RateLimit-Scope: controls)"
	}
	return "the key's rate limit (X-RateLimit-Scope: key)"
}

// ScopeOf is the budget a response's rate-limit headers report.
func ScopeOf(h http.Header) string {
	switch s := h.Get("X-RateLimit-Scope"); s {
	case ScopeClient, ScopeControls:
		return s
	}
	return ScopeKey
}

// unplanned tells whether a 429 is the environment's, not something the
// run asked for: a planned fault's answer (X-Sandbox-Fault) never is; a
// client address's budget always is, since no scenario spends it on
// purpose; the key's budgets are when the key is the operator's, shared
// with its other clients, outside a scenario that spends the window on
// purpose. A fresh account's own window is its scenario's business, and a
// self-paced sender (the explorer) gets every 429 back as it came.
func (t *Target) unplanned(resp *http.Response, token string, r Request) bool {
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Sandbox-Fault") != "" || r.SelfPaced {
		return false
	}
	switch ScopeOf(resp.Header) {
	case ScopeClient:
		return true
	case ScopeControls:
		return token == t.Key
	}
	return token == t.Key && (r.Sink == nil || !r.Sink.Unbudgeted)
}

// retryAfter is how long a 429 asks the client to wait: Retry-After in
// seconds or as an HTTP date, else until X-RateLimit-Reset, else a second.
func retryAfter(h http.Header) time.Duration {
	date, dateErr := http.ParseTime(h.Get("Date"))
	if v := h.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return max(time.Duration(n)*time.Second, minThrottleWait)
		}
		if at, err := http.ParseTime(v); err == nil && dateErr == nil {
			return max(at.Sub(date), minThrottleWait)
		}
	}
	if left, ok := rules.WindowLeft(&wire.Exchange{Header: h}); ok {
		return max(left, minThrottleWait)
	}
	return minThrottleWait
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
