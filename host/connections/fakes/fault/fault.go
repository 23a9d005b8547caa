// Package fault counts the faults a fake provider was told to answer its
// next requests with (garbage pages, failed uploads, echoed credentials):
// one piece for every fake's "the next n requests" knobs.
package fault

import "sync"

// Countdown is how many of the next requests get a fault. The zero value
// has none; it is safe for concurrent use.
type Countdown struct {
	mu sync.Mutex
	n  int
}

// Add makes n more of the next requests get the fault.
func (c *Countdown) Add(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += n
}

// Take reports whether this request gets the fault, counting it as used.
func (c *Countdown) Take() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n <= 0 {
		return false
	}
	c.n--
	return true
}
