package filetransfer

import (
	"sync"
	"time"
)

// poolKey is one user's connection as it was signed in with: a changed
// secret (another login) never reuses a session of the old one.
type poolKey struct {
	tenant, user, conn string
	login              [32]byte
}

type pooled struct {
	s     session
	timer *time.Timer
}

// pool keeps signed-in sessions briefly (idle), a few per connection, so
// that a browse and the downloads after it sign in once. Sessions close
// when idle too long, when their connection is revoked (forget) and at
// shutdown (closeAll).
type pool struct {
	idle    time.Duration
	perConn int

	mu     sync.Mutex
	byKey  map[poolKey][]*pooled
	closed bool
}

func newPool(idle time.Duration) *pool {
	return &pool{idle: idle, perConn: 2, byKey: map[poolKey][]*pooled{}}
}

// take returns an idle session of k, or nil.
func (p *pool) take(k poolKey) session {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.byKey[k]
	for len(list) > 0 {
		e := list[len(list)-1]
		list = list[:len(list)-1]
		if e.timer.Stop() {
			p.set(k, list)
			return e.s
		}
	}
	p.set(k, list)
	return nil
}

func (p *pool) set(k poolKey, list []*pooled) {
	if len(list) == 0 {
		delete(p.byKey, k)
		return
	}
	p.byKey[k] = list
}

// put keeps s for reuse, or closes it when the pool is full or closed.
func (p *pool) put(k poolKey, s session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.byKey[k]) >= p.perConn {
		go s.close()
		return
	}
	e := &pooled{s: s}
	e.timer = time.AfterFunc(p.idle, func() {
		p.mu.Lock()
		list := p.byKey[k]
		for i, x := range list {
			if x == e {
				p.set(k, append(list[:i:i], list[i+1:]...))
				break
			}
		}
		p.mu.Unlock()
		_ = s.close()
	})
	p.byKey[k] = append(p.byKey[k], e)
}

// forget closes the idle sessions of connection id (it was revoked).
func (p *pool) forget(id string) {
	p.mu.Lock()
	var gone []*pooled
	for k, list := range p.byKey {
		if k.conn == id {
			gone = append(gone, list...)
			delete(p.byKey, k)
		}
	}
	p.mu.Unlock()
	closeAll(gone)
}

// closeAll closes every idle session; sessions in use close when put back.
func (p *pool) closeAll() {
	p.mu.Lock()
	p.closed = true
	var gone []*pooled
	for _, list := range p.byKey {
		gone = append(gone, list...)
	}
	p.byKey = map[poolKey][]*pooled{}
	p.mu.Unlock()
	closeAll(gone)
}

func closeAll(list []*pooled) {
	for _, e := range list {
		if e.timer.Stop() {
			_ = e.s.close()
		}
	}
}

// size counts the idle sessions (tests).
func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.byKey {
		n += len(l)
	}
	return n
}
