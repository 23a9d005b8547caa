package wasm_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// waitFor polls cond until it holds or the bound passes.
func waitFor(tb testing.TB, bound time.Duration, what string, cond func() bool) {
	tb.Helper()
	for t0 := time.Now(); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Since(t0) > bound {
			tb.Fatalf("%s: not within %v", what, bound)
		}
	}
}

// TestIdleCodeClosed: a plugin idle for the idle timeout loses its
// instances and then its compiled code, and its next call compiles it
// again and answers as before; one used within the timeout keeps it.
func TestIdleCodeClosed(t *testing.T) {
	released := make(chan struct{}, 8)
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		return c.WithIdleTimeout(100 * time.Millisecond).WithIdleRelease(func() { released <- struct{}{} })
	})
	p := load(t, h, "echo")
	if r := call(t, p, "echo", map[string]any{"text": "a"}); !r.OK || r.Text != "a" {
		t.Fatalf("first call: %+v", r)
	}
	if !p.CodeLoadedForTest() {
		t.Fatal("no code loaded after a call")
	}
	waitFor(t, 30*time.Second, "idle code closed", func() bool { return !p.CodeLoadedForTest() })
	if n := p.LiveForTest(); n != 0 {
		t.Fatalf("%d instances live once the code is closed", n)
	}
	select {
	case <-released:
	case <-time.After(time.Minute):
		t.Fatal("the idle release did not run after the code was closed")
	}
	if r := call(t, p, "echo", map[string]any{"text": "b"}); !r.OK || r.Text != "b" || r.Stats.Reused {
		t.Fatalf("the call after the code was closed: %+v", r)
	}
	if !p.CodeLoadedForTest() {
		t.Fatal("the call after the code was closed left no code loaded")
	}
}

// TestIdleCodeKeptWhileUsed: calls closer together than the idle timeout
// keep the code, and a long timeout keeps it through a quiet spell.
func TestIdleCodeKeptWhileUsed(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithIdleTimeout(time.Hour) })
	p := load(t, h, "echo")
	for i := range 3 {
		if r := call(t, p, "echo", map[string]any{"text": "x"}); !r.OK || (i > 0 && !r.Stats.Reused) {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if !p.CodeLoadedForTest() {
		t.Fatal("the code was closed within the idle timeout")
	}
}

// TestIdleCodeKeptUnderAbandonedGuest: the code of a plugin whose
// abandoned guest still runs is not closed (its native code would be
// unmapped under the guest); it is once the guest has ended.
func TestIdleCodeKeptUnderAbandonedGuest(t *testing.T) {
	release := make(chan struct{})
	var entered atomic.Int32
	hang := wasm.Capability{Name: "hang", Description: "blocks until the test releases it",
		Functions: []wasm.HostFunction{{Module: wasm.CapabilityPrefix + "hang", Name: "wait",
			Func: func(context.Context, *wasm.Call, []uint64) {
				if entered.Add(1) == 1 {
					<-release
				}
			}}}}
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(wasm.EgressOptions{}), hang)...)
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		return c.WithCapabilities(reg).WithKillGrace(50 * time.Millisecond).WithIdleTimeout(50 * time.Millisecond)
	})
	mod := wasmtest.HandModuleWith(t, "hand", func(m *asm.Module) ([]byte, []byte) {
		wait := m.ImportFunc(wasm.CapabilityPrefix+"hang", "wait", m.Type(nil, nil))
		m.Memory(1, 1)
		// After the host function, the guest writes to its memory: it
		// must still be mapped though its module was closed meanwhile.
		body := append(asm.Call(wait), asm.I32Const(8)...)
		body = append(append(body, asm.I32Const(1)...), asm.I32Store(0)...)
		return append(body, asm.I32Const(0)...), nil
	})
	man, err := manifest.Read(mod)
	if err != nil {
		t.Fatal(err)
	}
	man.Capabilities = []string{"hang"}
	if mod, err = manifest.Embed(mod, man); err != nil {
		t.Fatal(err)
	}
	p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if r := p.Call(ctx, "run", nil, nil); r.OK || r.Error.Code != wasm.CodeTimeout || p.AbandonedForTest() != 1 {
		t.Fatalf("%+v (%d abandoned), want a timeout and an abandoned guest", r, p.AbandonedForTest())
	}
	time.Sleep(1500 * time.Millisecond) // many idle timeouts
	if !p.CodeLoadedForTest() {
		t.Fatal("the code was closed under a guest that still runs")
	}
	close(release)
	waitFor(t, 30*time.Second, "idle code closed once the guest ended", func() bool { return !p.CodeLoadedForTest() })
}
