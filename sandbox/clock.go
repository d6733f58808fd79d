package sandbox

import (
	"sync"
	"time"
)

// Clock tells the time. The sandbox reads time only through a Clock, so that a
// frozen clock makes every response reproducible.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real time.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// FrozenClock stands still until it is moved; moving it runs the functions
// whose time has come. It is safe for concurrent use.
type FrozenClock struct {
	mu      sync.Mutex
	now     time.Time
	waiting map[*frozenTimer]struct{}
}

type frozenTimer struct {
	at time.Time
	f  func()
}

// NewFrozenClock returns a clock stopped at t.
func NewFrozenClock(t time.Time) *FrozenClock {
	return &FrozenClock{now: t}
}

// Now returns the time the clock is stopped at.
func (c *FrozenClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time. The
// functions it makes due are started before it returns.
func (c *FrozenClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []func()
	for t := range c.waiting {
		if !t.at.After(now) {
			delete(c.waiting, t)
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
	return now
}

// AfterFunc calls f once Advance has moved the clock d past now; at once if d
// is not positive.
func (c *FrozenClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	at := c.now.Add(d)
	c.mu.Unlock()
	return c.AtFunc(at, f)
}

// AtFunc calls f once the clock reads at or later: at once if it already
// does, so that a time computed before a move is never waited past.
func (c *FrozenClock) AtFunc(at time.Time, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !at.After(c.now) {
		go f()
		return func() bool { return false }
	}
	t := &frozenTimer{at: at, f: f}
	if c.waiting == nil {
		c.waiting = make(map[*frozenTimer]struct{})
	}
	c.waiting[t] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, pending := c.waiting[t]
		delete(c.waiting, t)
		return pending
	}
}

// Waiting is how many functions wait for the clock to move, so that a test
// can tell that nothing is left scheduled.
func (c *FrozenClock) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting)
}

// TimerClock is a Clock that can also call a function once its time has
// passed a point, so that what waits on time (webhook retries) waits on the
// clock a test or a frozen account controls.
type TimerClock interface {
	Clock
	// AfterFunc calls f in its own goroutine once the clock has moved d past
	// its present reading. stop prevents the call if it has not happened
	// yet and reports whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// DeadlineClock is a TimerClock that can also call a function at a time it
// reads, rather than after a wait from whenever it is asked: a frozen clock
// may move between the two.
type DeadlineClock interface {
	TimerClock
	AtFunc(at time.Time, f func()) (stop func() bool)
}

// AfterFunc waits in real time.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
