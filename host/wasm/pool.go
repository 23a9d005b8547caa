package wasm

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// pool keeps a bounded set of live instances of one plugin variant and hands
// them out one call at a time.
//
// Three rules make it safe to share between tenants:
//   - an instance serves one tenant for its whole life: guest memory keeps
//     whatever a call left in it, so an idle instance of another tenant is
//     closed and a fresh one made rather than reused;
//   - when every instance is busy, callers wait in one queue per tenant and a
//     freed instance goes to the tenant holding the fewest (the tenants in
//     turn among equals), so a tenant with forty waiting calls cannot starve
//     one with a single call;
//   - a few slots beyond the bound (reserve) are kept for tenants holding no
//     instance at all: a tenant whose calls occupy every instance cannot make
//     another tenant's first call wait for one of them to end. A freed slot
//     above the bound goes only to such a tenant, or is given up.
//
// A wait ends with the caller's context (its deadline or its cancellation).
// Instances that trapped or were interrupted are closed instead of returned,
// and an instance idle for the pool's idle timeout is closed: a quiet host
// holds no guest memory (see Config.WithIdleTimeout).
type pool struct {
	size    int
	reserve int // slots above size, for tenants holding none
	make    func(ctx context.Context, tenant string) (*instance, error)
	expiry  poolExpiry
	timer   *time.Timer // armed while instances are idle (under mu)

	mu     sync.Mutex
	live   int            // instances alive or being made
	busy   map[string]int // slots held by callers, per tenant
	idle   []*instance    // most recently used last
	queues map[string][]*waiter
	turn   []string // tenants with waiters, in the order they are served
	closed bool
}

// waiter is one caller waiting for a slot. When ready is closed it holds a
// slot (with in set when an instance of its tenant was handed over, nil when
// it is to make one), unless shut says the pool closed.
type waiter struct {
	tenant string
	ready  chan struct{}
	in     *instance
	shut   bool
	done   bool // taken off the queue (set under the pool's lock)
}

// errPoolClosed is returned to callers waiting when the plugin is closed.
var errPoolClosed = errors.New("the plugin is being closed")

// poolReserve is how many slots above a pool's bound are kept for tenants
// holding no instance: one per four of the bound, at least one. Each costs
// an instance's memory at most while another tenant holds every other one.
func poolReserve(size int) int { return max(1, size/4) }

// poolExpiry is when a pool closes its idle instances.
type poolExpiry struct {
	// after: an instance idle this long is closed (0: idle instances are kept).
	after time.Duration
	now   func() time.Time
	// closed, when not nil, is told how many instances an expiry closed,
	// their guest memory and how many instances stay alive (outside the
	// pool's lock).
	closed func(n int, memory uint64, live int)
}

func newPool(size int, mk func(ctx context.Context, tenant string) (*instance, error), ex poolExpiry) *pool {
	if ex.now == nil {
		ex.now = time.Now
	}
	return &pool{size: size, reserve: poolReserve(size), make: mk, expiry: ex, busy: map[string]int{}, queues: map[string][]*waiter{}}
}

// get returns an idle instance of the tenant, a new one while under the bound
// (closing an idle instance of another tenant to make room) or in the
// reserve when the tenant holds none, or waits its turn.
func (p *pool) get(ctx context.Context, tenant string) (in *instance, reused bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, errPoolClosed
	}
	if in := p.takeIdle(tenant); in != nil {
		p.busy[tenant]++
		p.mu.Unlock()
		return in, true, nil
	}
	var discard *instance
	switch {
	case p.live < p.size:
		p.live++
	case len(p.idle) > 0:
		// The slot of another tenant's idle instance (the least recently used).
		discard = p.idle[0]
		p.idle = slices.Delete(p.idle, 0, 1)
	case p.busy[tenant] == 0 && p.live < p.size+p.reserve:
		p.live++
	default:
		w := &waiter{tenant: tenant, ready: make(chan struct{})}
		if len(p.queues[tenant]) == 0 {
			p.turn = append(p.turn, tenant)
		}
		p.queues[tenant] = append(p.queues[tenant], w)
		p.mu.Unlock()
		select {
		case <-w.ready:
		case <-ctx.Done():
			p.mu.Lock()
			if !w.done {
				p.dequeue(w)
				p.mu.Unlock()
				return nil, false, ctx.Err()
			}
			p.mu.Unlock()
			// Granted as the wait ended: give the slot on.
			<-w.ready
			switch {
			case w.shut:
			case w.in != nil:
				p.put(w.in, true)
			default:
				p.release(tenant)
			}
			return nil, false, ctx.Err()
		}
		if w.shut {
			return nil, false, errPoolClosed
		}
		if w.in != nil {
			return w.in, true, nil
		}
		return p.fresh(ctx, tenant, nil)
	}
	p.busy[tenant]++
	p.mu.Unlock()
	return p.fresh(ctx, tenant, discard)
}

// fresh makes an instance in a slot the caller holds.
func (p *pool) fresh(ctx context.Context, tenant string, discard *instance) (*instance, bool, error) {
	if discard != nil {
		discard.close()
	}
	in, err := p.make(ctx, tenant)
	if err != nil {
		p.release(tenant)
		return nil, false, err
	}
	return in, false, nil
}

// takeIdle removes (slices.Delete: no stale copy left in the backing
// array, which would keep the instance's memory reachable once closed) and returns the tenant's most recently used idle instance.
func (p *pool) takeIdle(tenant string) *instance {
	for i := len(p.idle) - 1; i >= 0; i-- {
		if in := p.idle[i]; in.tenant == tenant {
			p.idle = slices.Delete(p.idle, i, i+1)
			return in
		}
	}
	return nil
}

// dequeue removes a waiter that gave up.
func (p *pool) dequeue(w *waiter) {
	q := p.queues[w.tenant]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		p.queues[w.tenant] = q
		return
	}
	delete(p.queues, w.tenant)
	for i, t := range p.turn {
		if t == w.tenant {
			p.turn = append(p.turn[:i], p.turn[i+1:]...)
			break
		}
	}
}

// next pops the waiter to be served, nil when nobody waits: of the tenant
// holding the fewest slots, the first in turn among equals; for a slot above
// the bound only one of a tenant holding none. The slot becomes the waiter's.
func (p *pool) next() *waiter {
	best := -1
	for i, t := range p.turn {
		if best < 0 || p.busy[t] < p.busy[p.turn[best]] {
			best = i
		}
	}
	if best < 0 || (p.live > p.size && p.busy[p.turn[best]] > 0) {
		return nil
	}
	t := p.turn[best]
	q := p.queues[t]
	w := q[0]
	p.turn = append(p.turn[:best:best], p.turn[best+1:]...)
	if len(q) > 1 {
		p.queues[t] = q[1:]
		p.turn = append(p.turn, t) // back of the line
	} else {
		delete(p.queues, t)
	}
	w.done = true
	p.busy[t]++
	return w
}

// unbusy gives back one of tenant's slots (under the lock).
func (p *pool) unbusy(tenant string) {
	if p.busy[tenant]--; p.busy[tenant] <= 0 {
		delete(p.busy, tenant)
	}
}

// put returns a healthy instance, or closes a broken one; either way its slot
// goes to the next waiting tenant, or is given up when it is above the bound
// and no tenant holding none waits.
func (p *pool) put(in *instance, healthy bool) {
	p.mu.Lock()
	p.unbusy(in.tenant)
	if p.closed || !healthy {
		p.mu.Unlock()
		in.close()
		p.release("")
		return
	}
	if w := p.next(); w != nil {
		p.mu.Unlock()
		if w.tenant == in.tenant {
			w.in = in
		} else {
			in.close() // the waiter makes its own in the slot
		}
		close(w.ready)
		return
	}
	if p.live > p.size {
		p.live--
		p.mu.Unlock()
		in.close()
		return
	}
	in.shed()
	in.idleSince = p.expiry.now()
	p.idle = append(p.idle, in)
	p.arm()
	p.mu.Unlock()
}

// arm starts the expiry timer for the least recently used idle instance,
// unless it runs already or nothing is idle (under the lock).
func (p *pool) arm() {
	if p.expiry.after <= 0 || p.timer != nil || len(p.idle) == 0 || p.closed {
		return
	}
	wait := p.idle[0].idleSince.Add(p.expiry.after).Sub(p.expiry.now())
	p.timer = time.AfterFunc(max(wait, 0), func() { p.expire(p.expiry.now()) })
}

// expire closes the instances idle for the expiry's duration at now and
// arms the timer for the next one; it returns how many it closed. A freed
// slot goes to a waiting tenant, if any (none waits while instances are
// idle, but a put and an expiry may cross).
func (p *pool) expire(now time.Time) int {
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	n := 0
	for n < len(p.idle) && p.expiry.after > 0 && now.Sub(p.idle[n].idleSince) >= p.expiry.after {
		n++
	}
	old := slices.Clone(p.idle[:n])
	// slices.Delete clears the slots it frees: a closed instance left in
	// the idle list's backing array would keep its guest memory reachable.
	p.idle = slices.Delete(p.idle, 0, n)
	var granted []*waiter
	for range old {
		if w := p.next(); w != nil {
			granted = append(granted, w)
			continue
		}
		p.live--
	}
	p.arm()
	live := p.live
	p.mu.Unlock()
	var memory uint64
	for _, in := range old {
		memory += in.memoryBytes()
		in.close()
	}
	for _, w := range granted {
		close(w.ready) // the waiter makes its own in the slot
	}
	if len(old) > 0 && p.expiry.closed != nil {
		p.expiry.closed(len(old), memory, live)
	}
	return len(old)
}

// release frees a slot whose instance is gone; tenant, when not empty, is
// the holder whose slot it was (put gave back its holder's already).
func (p *pool) release(tenant string) {
	p.mu.Lock()
	if tenant != "" {
		p.unbusy(tenant)
	}
	if !p.closed {
		if w := p.next(); w != nil {
			p.mu.Unlock()
			close(w.ready)
			return
		}
	}
	p.live--
	p.mu.Unlock()
}

// close closes the idle instances and sends waiters away; instances in use
// close when put back.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	var waiters []*waiter
	for _, t := range p.turn {
		waiters = append(waiters, p.queues[t]...)
	}
	for _, w := range waiters {
		w.done = true
	}
	p.turn, p.queues = nil, map[string][]*waiter{}
	p.mu.Unlock()
	for _, in := range idle {
		in.close()
	}
	for _, w := range waiters {
		w.shut = true
		close(w.ready)
	}
}
