package wasm

import (
	"context"
	"errors"
	"sync"
)

// pool keeps a bounded set of live instances of one plugin variant and hands
// them out one call at a time.
//
// Two rules make it safe to share between tenants:
//   - an instance serves one tenant for its whole life: guest memory keeps
//     whatever a call left in it, so an idle instance of another tenant is
//     closed and a fresh one made rather than reused;
//   - when every instance is busy, callers wait in one queue per tenant and a
//     freed instance goes to the tenants in turn, so a tenant with forty
//     waiting calls cannot starve one with a single call.
//
// A wait ends with the caller's context (its deadline or its cancellation).
// Instances that trapped or were interrupted are closed instead of returned.
type pool struct {
	size int
	make func(ctx context.Context, tenant string) (*instance, error)

	mu     sync.Mutex
	live   int         // instances alive or being made
	idle   []*instance // most recently used last
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

func newPool(size int, mk func(ctx context.Context, tenant string) (*instance, error)) *pool {
	return &pool{size: size, make: mk, queues: map[string][]*waiter{}}
}

// get returns an idle instance of the tenant, a new one while under the bound
// (closing an idle instance of another tenant to make room), or waits its turn.
func (p *pool) get(ctx context.Context, tenant string) (in *instance, reused bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, errPoolClosed
	}
	if in := p.takeIdle(tenant); in != nil {
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
		p.idle = p.idle[1:]
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
				p.release()
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
		p.release()
		return nil, false, err
	}
	return in, false, nil
}

// takeIdle removes and returns the tenant's most recently used idle instance.
func (p *pool) takeIdle(tenant string) *instance {
	for i := len(p.idle) - 1; i >= 0; i-- {
		if in := p.idle[i]; in.tenant == tenant {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
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

// next pops the waiter whose tenant's turn it is; nil when nobody waits.
func (p *pool) next() *waiter {
	if len(p.turn) == 0 {
		return nil
	}
	t := p.turn[0]
	q := p.queues[t]
	w := q[0]
	p.turn = p.turn[1:]
	if len(q) > 1 {
		p.queues[t] = q[1:]
		p.turn = append(p.turn, t) // back of the line
	} else {
		delete(p.queues, t)
	}
	w.done = true
	return w
}

// put returns a healthy instance, or closes a broken one; either way its slot
// goes to the next waiting tenant.
func (p *pool) put(in *instance, healthy bool) {
	p.mu.Lock()
	if p.closed || !healthy {
		p.mu.Unlock()
		in.close()
		p.release()
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
	p.idle = append(p.idle, in)
	p.mu.Unlock()
}

// release frees a slot whose instance is gone.
func (p *pool) release() {
	p.mu.Lock()
	if w := p.next(); w != nil && !p.closed {
		p.mu.Unlock()
		close(w.ready)
		return
	}
	p.live--
	p.mu.Unlock()
}

// close closes the idle instances and sends waiters away; instances in use
// close when put back.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	var waiters []*waiter
	for len(p.turn) > 0 {
		waiters = append(waiters, p.next())
	}
	p.mu.Unlock()
	for _, in := range idle {
		in.close()
	}
	for _, w := range waiters {
		w.shut = true
		close(w.ready)
	}
}
