// Package ratelimit counts one key's requests in fixed windows aligned to the
// UTC minute, hour and day, as the Test-Campaign Service does. Each account
// holds its own Limiter, so keys never share a lock and a reset or an
// eviction drops the counts with the account.
package ratelimit

import (
	"cmp"
	"sync"
	"time"
)

// Limits are the most requests a key may make in each window.
type Limits struct {
	Minute, Hour, Day int
}

// DefaultLimits are the published limits of the service.
var DefaultLimits = Limits{Minute: 1000, Hour: 10000, Day: 100000}

// DefaultControlLimits are the sandbox controls' own budget: generous, but
// enough to stop a script that floods them (each control can emit webhook
// events).
var DefaultControlLimits = PerMinute(600)

// PerMinute is a budget set by the minute alone: the hour and the day allow
// 60 and 1440 times as much, so that only the minute ever binds.
func PerMinute(n int) Limits {
	return Limits{Minute: n, Hour: n * 60, Day: n * 24 * 60}
}

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

// Limiter holds one key's counts. It is safe for concurrent use.
type Limiter struct {
	windows [3]window
	mu      sync.Mutex
	counts  [3]counter
}

// New returns a limiter enforcing limits.
func New(limits Limits) *Limiter {
	return &Limiter{windows: [3]window{{time.Minute, limits.Minute}, {time.Hour, limits.Hour}, {24 * time.Hour, limits.Day}}}
}

// Take counts one request at now, unless a window is exhausted: a refused
// request uses nothing, so a client backing off as told recovers.
func (l *Limiter) Take(now time.Time) Decision {
	return l.decide(now, true)
}

// Peek reports what Take would, without counting a request: for responses
// that the limits must describe but not be spent on, such as injected faults.
func (l *Limiter) Peek(now time.Time) Decision {
	return l.decide(now, false)
}

func (l *Limiter) decide(now time.Time, take bool) Decision {
	now = now.UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := &l.counts
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
	if !allowed {
		d.RetryAfter = retryAt.Sub(now)
	} else if take {
		for i := range counts {
			counts[i].used++
		}
	}
	best := -1
	for i, w := range l.windows {
		if left := w.limit - counts[i].used; best < 0 || left < d.Remaining {
			best, d.Limit, d.Remaining, d.Reset = i, w.limit, left, counts[i].start.Add(w.length)
		}
	}
	return d
}

// Or returns l with each zero limit taken from def.
func (l Limits) Or(def Limits) Limits {
	return Limits{Minute: cmp.Or(l.Minute, def.Minute), Hour: cmp.Or(l.Hour, def.Hour), Day: cmp.Or(l.Day, def.Day)}
}
