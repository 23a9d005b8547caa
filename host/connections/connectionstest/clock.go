package connectionstest

import (
	"context"
	"sync"
	"time"
)

// Clock is the injected clock of a service under test: Now is what the
// test set, and Sleep, instead of waiting, records the wait and moves the
// clock on by it (a Retry-After honoured without slowing the test). It is
// safe for concurrent use.
type Clock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Sleep records d and moves the clock on by it, at once.
func (c *Clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.t = c.t.Add(d)
	return nil
}

// Slept returns the waits Sleep was asked for, in order.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}
