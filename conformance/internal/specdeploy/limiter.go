package specdeploy

import (
	"math"
	"time"
)

// quota is what the rate-limit headers of one answer say.
type quota struct {
	limit     int
	remaining int
	reset     time.Time
	windowAt  time.Time // start of the window the headers describe
	allowed   bool
}

// limiter counts one key's requests. It is used under the deployment's lock.
type limiter struct {
	opts   Options
	limit  int
	window time.Duration

	start time.Time // of the current fixed window
	used  int

	tokens float64 // token bucket
	filled time.Time
}

func newLimiter(opts Options) *limiter {
	l := &limiter{opts: opts, limit: 1000, window: time.Minute}
	switch {
	case opts.Break == BreakLimitOverMaximum:
		// Over the hour's maximum too, so that a reset at the end of an
		// hour, which an hourly window may have, does not excuse it.
		l.limit = 20000
	case opts.LowerLimit:
		l.limit = 300
	case opts.HourlyWindowHeaders:
		l.limit, l.window = 10000, time.Hour
	}
	l.tokens = float64(l.limit)
	return l
}

// take counts a request at now.
func (l *limiter) take(now time.Time) quota {
	if l.opts.TokenBucket {
		return l.takeToken(now)
	}
	if l.start.IsZero() || !now.Before(l.start.Add(l.window)) {
		l.start = now.Truncate(l.window)
		if l.opts.WindowFromFirstRequest {
			l.start = now
		}
		l.used = 0
	}
	q := quota{limit: l.limit, reset: l.start.Add(l.window), windowAt: l.start}
	if l.used >= l.limit && l.opts.Break != BreakNever429 {
		return q
	}
	l.used++
	q.allowed = true
	q.remaining = max(l.limit-l.used, 0)
	return q
}

func (l *limiter) takeToken(now time.Time) quota {
	rate := float64(l.limit) / l.window.Seconds()
	if !l.filled.IsZero() {
		l.tokens = math.Min(float64(l.limit), l.tokens+now.Sub(l.filled).Seconds()*rate)
	}
	l.filled = now
	q := quota{limit: l.limit, windowAt: now}
	if l.tokens >= 1 {
		l.tokens--
		q.allowed = true
	}
	q.remaining = int(l.tokens)
	// The bucket is full again when the missing tokens have come back.
	q.reset = now.Add(time.Duration((float64(l.limit) - l.tokens) / rate * float64(time.Second)))
	return q
}
