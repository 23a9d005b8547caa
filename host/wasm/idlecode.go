package wasm

import (
	"context"
	"sync"
	"time"
)

// A plugin's compiled code is closed once the plugin has been idle for the
// idle timeout (Config.WithIdleTimeout) and its instances are closed: its
// native code (mapped outside the Go heap) and wazero's decoded module are
// most of what a host that ran many plugins holds when it is quiet (about
// 240 MB for the built-in extractors after an ingestion). Its next call
// compiles it again, from the compile cache when there is one: wazero
// decodes and validates the module and maps the cached native code, a
// fraction of a second for the largest built-ins (plugin.call.cli.cached.ms
// in docs/figures.md), paid once after each quiet spell.
//
// The code is closed only when no call is on the plugin (inflight, under
// p.life, which every call takes to start), none of its instances is alive
// and no guest of it still runs: an abandoned guest (instance.giveUp) keeps
// running on the native code, which closing would unmap under it.

// codeIdleSlack lets the pools' own expiries (idleTimeout after each
// instance's last call) close the instances first.
const codeIdleSlack = time.Second

// armCodeExpiry schedules the idle check after the last call ended (under
// p.life).
func (p *Plugin) armCodeExpiry() {
	after := p.idleTimeout()
	if after <= 0 || p.codeTimer != nil || p.retired || p.closed {
		return
	}
	p.codeTimer = time.AfterFunc(after+codeIdleSlack, p.expireCode)
}

func (p *Plugin) idleTimeout() time.Duration {
	if p.h == nil {
		return 0
	}
	return p.h.cfg.idleTimeout
}

// expireCode closes the plugin's compiled code if it has been idle long
// enough, or checks again later.
func (p *Plugin) expireCode() {
	p.life.Lock()
	p.codeTimer = nil
	if p.inflight > 0 || p.retired || p.closed {
		// A call is on it (its end arms the check again) or it is going.
		p.life.Unlock()
		return
	}
	after := p.idleTimeout()
	if wait := time.Until(p.lastCall.Add(after)); wait > 0 || p.liveInstances() > 0 || p.guests.Load() > 0 {
		// Used since, an instance still idle (its pool closes it within
		// the timeout), or an abandoned guest still running.
		p.codeTimer = time.AfterFunc(max(wait, after)+codeIdleSlack, p.expireCode)
		p.life.Unlock()
		return
	}
	closed := p.closeCode(context.Background())
	p.life.Unlock()
	if closed {
		p.h.cfg.logger.Info("closed idle plugin code", "plugin", p.Name(), "idleFor", after)
		p.h.idleClosed(1)
	}
}

// liveInstances counts the instances of both variants (under p.life).
func (p *Plugin) liveInstances() int {
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

// closeCode closes the pools, mounts and compiled code and makes the plugin
// compile again at its next use; it reports whether there was code to
// close. A failed compile is kept: its calls keep answering with it. The
// caller holds p.life with no call in flight, so nothing reads what this
// resets.
func (p *Plugin) closeCode(ctx context.Context) bool {
	if p.code.rt == nil {
		return false
	}
	for i := range p.variants {
		v := &p.variants[i]
		if pl := v.pool.Load(); pl != nil {
			pl.close()
			v.pool.Store(nil)
		}
		for _, c := range v.closers {
			c()
		}
		v.closers, v.fs = nil, nil
		v.once, v.err = sync.Once{}, nil
		v.rt, v.compiled, v.instrumented = nil, nil, false
	}
	p.code.closeCompiled(ctx)
	p.code = code{}
	p.prepareOnce, p.prepared, p.prepareErr = sync.Once{}, nil, nil
	return true
}

// closeCompiled releases the compiled module and its runtime. The module is
// closed first: the runtimes share one engine through the compile cache,
// which keeps a module's native code until the module itself is closed.
func (c *code) closeCompiled(ctx context.Context) {
	if c.compiled != nil {
		_ = c.compiled.Close(ctx)
	}
	if c.rt != nil {
		_ = c.rt.Close(ctx)
	}
}
