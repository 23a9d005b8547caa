package wasm

import (
	"context"
	"time"
)

// AcquireForBenchmark takes an instance from a variant's pool and returns the
// function that puts it back: the pool's cost alone, for BenchmarkPoolAcquire.
func (p *Plugin) AcquireForBenchmark(ctx context.Context, readOnly bool) (func(), error) {
	v := p.variant(readOnly)
	if err := v.compile(ctx); err != nil {
		return nil, err
	}
	in, _, err := v.pool.Load().get(ctx, "")
	if err != nil {
		return nil, err
	}
	return func() { v.pool.Load().put(in, true) }, nil
}

// WithCloseOnDoneOnly makes the host run every plugin in wazero's
// close-on-context-done mode, the mode of a plugin its operator allows to
// run uninterruptible (Grant.Uninterruptible).
func (c Config) WithCloseOnDoneOnly() Config { c.closeOnDoneOnly = true; return c }

// BusyForTest reports whether a call holds one of the plugin's instances.
func (p *Plugin) BusyForTest() bool {
	for i := range p.variants {
		if pl := p.variants[i].pool.Load(); pl != nil {
			pl.mu.Lock()
			busy := pl.live > len(pl.idle)
			pl.mu.Unlock()
			if busy {
				return true
			}
		}
	}
	return false
}

// AbandonedForTest counts the instances the plugin abandoned because their
// guest did not stop within the kill grace.
func (p *Plugin) AbandonedForTest() int64 { return p.abandoned.Load() }

// LiveForTest counts the plugin's instances alive or being made.
func (p *Plugin) LiveForTest() int {
	n := 0
	for i := range p.variants {
		if pl := p.variants[i].pool.Load(); pl != nil {
			pl.mu.Lock()
			n += pl.live
			pl.mu.Unlock()
		}
	}
	return n
}

// WaitingForTest counts the calls waiting for an instance.
func (p *Plugin) WaitingForTest() int {
	n := 0
	for i := range p.variants {
		if pl := p.variants[i].pool.Load(); pl != nil {
			pl.mu.Lock()
			for _, q := range pl.queues {
				n += len(q)
			}
			pl.mu.Unlock()
		}
	}
	return n
}

// CompareActions is the check of an actions plugin's manifest against its code.
var CompareActions = compareActions

// CompilesForTest counts the modules the host handed to wazero to compile.
func (h *Host) CompilesForTest() int64 { return h.compiles.Load() }

// WithCacheClockForTest sets the clock the compile cache marks and judges
// use by.
func (c Config) WithCacheClockForTest(now func() time.Time) Config { c.now = now; return c }

// ExpireIdleForTest runs the plugin's pools' idle expiry as if the clock
// read now, and returns how many instances it closed.
func (p *Plugin) ExpireIdleForTest(now time.Time) int {
	n := 0
	for i := range p.variants {
		if pl := p.variants[i].pool.Load(); pl != nil {
			n += pl.expire(now)
		}
	}
	return n
}

// IdleHostBytesForTest sums the host-side buffers (kernel arena, output
// frame) the plugin's idle instances keep.
func (p *Plugin) IdleHostBytesForTest() int {
	n := 0
	for i := range p.variants {
		if pl := p.variants[i].pool.Load(); pl != nil {
			pl.mu.Lock()
			for _, in := range pl.idle {
				n += cap(in.k.mem) + cap(in.stdout.payload) + len(in.k.input)
			}
			pl.mu.Unlock()
		}
	}
	return n
}

// IdleMemoryMappedForTest counts the idle instances and those of them whose
// guest memory lives outside the Go heap (guestmemory.go).
func (p *Plugin) IdleMemoryMappedForTest() (idle, mapped int) {
	for i := range p.variants {
		if pl := p.variants[i].pool.Load(); pl != nil {
			pl.mu.Lock()
			for _, in := range pl.idle {
				idle++
				if in.mem.mapped() {
					mapped++
				}
			}
			pl.mu.Unlock()
		}
	}
	return idle, mapped
}

// CodeLoadedForTest reports whether the plugin's compiled code is loaded
// (idlecode.go closes it after an idle spell).
func (p *Plugin) CodeLoadedForTest() bool {
	p.life.Lock()
	defer p.life.Unlock()
	return p.code.rt != nil
}

// ModuleKeptForTest reports whether the plugin holds its module's bytes.
func (p *Plugin) ModuleKeptForTest() bool { return p.module != nil }
