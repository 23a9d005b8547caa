package wasm

import (
	"context"
	"sync"
)

// pool keeps a bounded set of live instances of one plugin variant and hands
// them out one call at a time. Instances that trapped or were interrupted are
// closed instead of returned.
type pool struct {
	idle  chan *instance
	slots chan struct{} // one token per live instance
	make  func(ctx context.Context) (*instance, error)

	mu     sync.Mutex
	closed bool
}

func newPool(size int, mk func(ctx context.Context) (*instance, error)) *pool {
	return &pool{idle: make(chan *instance, size), slots: make(chan struct{}, size), make: mk}
}

// get returns an idle instance, a new one while under the bound, or waits.
func (p *pool) get(ctx context.Context) (in *instance, reused bool, err error) {
	select {
	case in := <-p.idle:
		return in, true, nil
	default:
	}
	select {
	case in := <-p.idle:
		return in, true, nil
	case p.slots <- struct{}{}:
		in, err := p.make(ctx)
		if err != nil {
			<-p.slots
			return nil, false, err
		}
		return in, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// put returns a healthy instance to the pool, or closes a broken one.
func (p *pool) put(in *instance, healthy bool) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if !healthy || closed {
		in.close()
		<-p.slots
		return
	}
	p.idle <- in // never blocks: idle has room for every slot
}

// close closes the idle instances; instances in use close when put back.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case in := <-p.idle:
			in.close()
			<-p.slots
		default:
			return
		}
	}
}
