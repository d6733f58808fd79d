// Package ratelimit counts requests per API key in fixed windows aligned to
// the UTC minute, hour and day, as the Test-Campaign Service does.
package ratelimit

import (
	"sync"
	"time"
)

// Limits are the most requests a key may make in each window.
type Limits struct {
	Minute, Hour, Day int
}

// DefaultLimits are the published limits of the service.
var DefaultLimits = Limits{Minute: 1000, Hour: 10000, Day: 100000}

// Decision is the outcome of one request, with the figures of the window that
// has the fewest requests left (the shortest one on a tie).
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is when the reported window ends.
	Reset time.Time
	// RetryAfter is, for a refused request, how long until every exhausted
	// window has ended and a request can succeed.
	RetryAfter time.Duration
}

type window struct {
	length time.Duration
	limit  int
}

// counter is one key's usage of one window, identified by the window's start.
type counter struct {
	start time.Time
	used  int
}

// Limiter holds the counts of every key. It is safe for concurrent use.
type Limiter struct {
	windows [3]window
	mu      sync.Mutex
	counts  map[string]*[3]counter
	// sweptDay is the day whose start last dropped stale keys.
	sweptDay time.Time
}

// New returns a limiter enforcing limits.
func New(limits Limits) *Limiter {
	return &Limiter{
		windows: [3]window{{time.Minute, limits.Minute}, {time.Hour, limits.Hour}, {24 * time.Hour, limits.Day}},
		counts:  map[string]*[3]counter{},
	}
}

// Take counts one request of key at now, unless a window is exhausted: a
// refused request uses nothing, so a client backing off as told recovers.
func (l *Limiter) Take(key string, now time.Time) Decision {
	now = now.UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	if day := now.Truncate(24 * time.Hour); !day.Equal(l.sweptDay) {
		l.dropKeysIdleBefore(day)
		l.sweptDay = day
	}
	counts := l.counts[key]
	if counts == nil {
		counts = &[3]counter{}
		l.counts[key] = counts
	}
	allowed := true
	var retryAt time.Time
	for i, w := range l.windows {
		// Truncate on UTC times aligns minutes, hours and days to UTC
		// because the zero time is a UTC midnight.
		start := now.Truncate(w.length)
		if !counts[i].start.Equal(start) {
			counts[i] = counter{start: start}
		}
		if counts[i].used >= w.limit {
			allowed = false
			if end := start.Add(w.length); end.After(retryAt) {
				retryAt = end
			}
		}
	}
	d := Decision{Allowed: allowed}
	if allowed {
		for i := range counts {
			counts[i].used++
		}
	} else {
		d.RetryAfter = retryAt.Sub(now)
	}
	best := -1
	for i, w := range l.windows {
		if left := w.limit - counts[i].used; best < 0 || left < d.Remaining {
			best, d.Limit, d.Remaining, d.Reset = i, w.limit, left, counts[i].start.Add(w.length)
		}
	}
	return d
}

// Forget drops key's counts, as if it had made no request.
func (l *Limiter) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.counts, key)
}

// dropKeysIdleBefore forgets keys not seen since day began, so that a sandbox
// used with a fresh key per test keeps its memory flat across days.
func (l *Limiter) dropKeysIdleBefore(day time.Time) {
	for key, counts := range l.counts {
		if counts[2].start.Before(day) {
			delete(l.counts, key)
		}
	}
}
