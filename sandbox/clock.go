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

// FrozenClock stands still until it is moved. It is safe for concurrent use.
type FrozenClock struct {
	mu  sync.Mutex
	now time.Time
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

// Advance moves the clock forward by d and returns the new time.
func (c *FrozenClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}
