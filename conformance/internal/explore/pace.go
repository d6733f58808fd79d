package explore

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// defaultPace is how many requests a second the explorer sends at most
// until a deployment says otherwise: under half of a shared sandbox's
// default per-client budget (60000 a minute), so that the suite and
// another run from the same address keep the rest.
const defaultPace = 400

// maxClientWaits is how many times one request waits out a per-client
// budget's 429 before the explorer gives it up.
const maxClientWaits = 3

// pacer spaces the explorer's requests so that it stays under the budget
// of its client address; it is the explorer's own traffic, so exceeding
// that budget would be its fault, never the deployment's.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

func newPacer(perSecond int) *pacer {
	return &pacer{interval: time.Second / time.Duration(perSecond)}
}

// wait blocks until the next request may go, or ctx ends.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	at := now
	if p.next.After(now) {
		at = p.next
	}
	p.next = at.Add(p.interval)
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// throttled reads a 429 of the client's budget (X-RateLimit-Scope: client):
// the pace drops to half of what that budget allows, and the explorer
// waits until the budget's window ends. ok is false for any other answer.
func (p *pacer) throttled(status int, header http.Header) (retryAfter time.Duration, ok bool) {
	if status != http.StatusTooManyRequests || header.Get("X-RateLimit-Scope") != "client" {
		return 0, false
	}
	secs, err := strconv.Atoi(header.Get("Retry-After"))
	if err != nil || secs < 1 {
		secs = 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	slower := 2 * p.interval
	if limit, err := strconv.Atoi(header.Get("X-RateLimit-Limit")); err == nil && limit > 0 {
		slower = max(slower, 2*time.Minute/time.Duration(limit))
	}
	p.interval = slower
	if resume := time.Now().Add(time.Duration(secs) * time.Second); resume.After(p.next) {
		p.next = resume
	}
	return time.Duration(secs) * time.Second, true
}
