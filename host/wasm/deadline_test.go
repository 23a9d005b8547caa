package wasm_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// A guest needs no loop and no call to do minutes of work: straight-line
// code of bulk-memory and table instructions, growth and host calls does it
// in a few kilobytes. Each shape below would run for minutes uninterrupted
// (2000 fills of 128 MiB and the like); its tool runs read-only.
var straightLineShapes = []struct {
	name  string
	build func(m *asm.Module) []byte
}{
	{"memory.fill", func(m *asm.Module) []byte {
		m.Memory(2048, 2048)
		return asm.Repeat(2000, asm.I32Const(0), asm.I32Const(0), asm.I32Const(128<<20), asm.MemoryFill())
	}},
	{"memory.copy", func(m *asm.Module) []byte {
		m.Memory(2048, 2048)
		return asm.Repeat(2000, asm.I32Const(0), asm.I32Const(64<<20), asm.I32Const(64<<20), asm.MemoryCopy())
	}},
	{"memory.grow", func(m *asm.Module) []byte {
		// Grows a page at a time and fills all of it each time.
		m.Memory(1, 2048)
		return asm.Repeat(2047, asm.I32Const(1), asm.MemoryGrow(), asm.Drop(),
			asm.I32Const(0), asm.I32Const(7), asm.MemorySize(), asm.I32Const(16), asm.Ops(0x74), asm.MemoryFill()) // i32.shl
	}},
	{"table.fill", func(m *asm.Module) []byte {
		m.Memory(1, 1)
		m.Table(asm.FuncRef, 1<<20, 1<<20)
		return asm.Repeat(20000, asm.I32Const(0), asm.RefNull(asm.FuncRef), asm.I32Const(1<<20), asm.TableFill(0))
	}},
	{"table.copy", func(m *asm.Module) []byte {
		m.Memory(1, 1)
		m.Table(asm.FuncRef, 1<<22, 1<<22)
		return asm.Repeat(20000, asm.I32Const(0), asm.I32Const(1<<21), asm.I32Const(1<<21), asm.TableCopy(0, 0))
	}},
	{"host calls", func(m *asm.Module) []byte {
		// WASI's random_get fills 128 MiB per call, in the host.
		random := m.ImportFunc("wasi_snapshot_preview1", "random_get", m.Type([]asm.ValType{asm.I32, asm.I32}, []asm.ValType{asm.I32}))
		m.Memory(2048, 2048)
		return asm.Repeat(2000, asm.I32Const(0), asm.I32Const(128<<20), asm.Call(random), asm.Drop())
	}},
}

// straightLineModule is a shape as a hand-written plugin named name.
func straightLineModule(tb testing.TB, name string, build func(m *asm.Module) []byte) []byte {
	return wasmtest.HandModuleWith(tb, name, func(m *asm.Module) ([]byte, []byte) {
		return append(build(m), asm.I32Const(0)...), nil
	})
}

// straightLineModuleWithoutYield is a shape whose module does not import
// sched_yield: once, that alone sent it to wazero's close-on-context-done
// mode, where none of the shapes stops before its work is done.
func straightLineModuleWithoutYield(tb testing.TB, name string, build func(m *asm.Module) []byte) []byte {
	return wasmtest.HandModuleWithoutYield(tb, name, func(m *asm.Module) ([]byte, []byte) {
		return append(build(m), asm.I32Const(0)...), nil
	})
}

type shapeModule func(tb testing.TB, name string, build func(m *asm.Module) []byte) []byte

func hostileStraightLineWork(t testing.TB) int { return straightLineStops(t, straightLineModule) }

func hostileStraightLineWorkAndTheCollector(t testing.TB) int {
	return straightLineLetsTheCollectorRun(t, straightLineModule)
}

// A module cannot opt out of the checks by not importing sched_yield: the
// rewrite adds the import, and every shape stops as it does with one.
func hostileStraightLineWorkWithoutYield(t testing.TB) int {
	return straightLineStops(t, straightLineModuleWithoutYield)
}

func hostileStraightLineWorkWithoutYieldAndTheCollector(t testing.TB) int {
	return straightLineLetsTheCollectorRun(t, straightLineModuleWithoutYield)
}

// straightLineWait bounds how long a test waits for a stopped call: far
// beyond the kill grace, far below the minutes each shape runs unstopped.
const straightLineWait = time.Minute

// Every shape stops at its deadline through its own checks: the call ends
// with a timeout, and the host did not have to abandon the instance.
func straightLineStops(t testing.TB, module shapeModule) int {
	for _, sc := range straightLineShapes {
		h := newHost(t, wasm.EgressOptions{}, nil)
		p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: module(t, "hand", sc.build)})
		if err != nil {
			t.Fatalf("%s: Load: %v", sc.name, err)
		}
		if err := h.Warm(context.Background()); err != nil { // compiles it
			t.Fatalf("%s: Warm: %v", sc.name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan wasm.Result, 1)
		go func() { done <- p.Call(ctx, "run", nil, nil) }()
		select {
		case r := <-done:
			if r.OK || r.Error.Code != wasm.CodeTimeout {
				t.Errorf("%s: %+v, want a timeout", sc.name, r)
			}
		case <-time.After(straightLineWait):
			t.Fatalf("%s: still running %v after its deadline", sc.name, straightLineWait)
		}
		cancel()
		if n := p.AbandonedForTest(); n != 0 {
			t.Errorf("%s: the host abandoned %d instances: the guest did not stop by itself", sc.name, n)
		}
	}
	return len(straightLineShapes)
}

// The host's garbage collector does not wait for a guest: a collection
// started while every shape runs ends while it still runs (each call has a
// deadline of a minute and is cancelled after the collection).
func straightLineLetsTheCollectorRun(t testing.TB, module shapeModule) int {
	for _, sc := range straightLineShapes {
		h := newHost(t, wasm.EgressOptions{}, nil)
		mod := module(t, "hand", sc.build)
		p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod})
		if err != nil {
			t.Fatalf("%s: Load: %v", sc.name, err)
		}
		if err := h.Warm(context.Background()); err != nil {
			t.Fatalf("%s: Warm: %v", sc.name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), straightLineWait)
		done := make(chan wasm.Result, 1)
		go func() { done <- p.Call(ctx, "run", nil, nil) }()
		waitBusy(t, p)
		// Only lets the guest reach its straight-line code; the outcome
		// does not depend on how long this takes.
		time.Sleep(50 * time.Millisecond)
		runtime.GC()
		select {
		case r := <-done:
			// Its one result is taken: waiting for another would hang.
			cancel()
			t.Errorf("%s: the call ended (%+v) before a collection started during it", sc.name, r.Error)
			continue
		default:
		}
		cancel()
		if r := <-done; r.OK || r.Error.Code != wasm.CodeCanceled {
			t.Errorf("%s: %+v, want canceled", sc.name, r)
		}
		if n := p.AbandonedForTest(); n != 0 {
			t.Errorf("%s: the host abandoned %d instances", sc.name, n)
		}
	}
	return len(straightLineShapes)
}

// A start section of straight-line bulk work is bounded like a call: a
// module with a start function is instrumented too, and its checks' yields
// trap once the instantiation's time is up.
func hostileStraightLineStart(t testing.TB) int {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithInitTimeout(200 * time.Millisecond) })
	mod := wasmtest.HandModuleWith(t, "hand", func(m *asm.Module) ([]byte, []byte) {
		m.Memory(2048, 2048)
		return asm.I32Const(0), asm.Repeat(2000, asm.I32Const(0), asm.I32Const(0), asm.I32Const(128<<20), asm.MemoryFill())
	})
	p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Warm(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "start") {
			t.Fatalf("Warm: %v, want the start function's failure", err)
		}
	case <-time.After(straightLineWait):
		t.Fatalf("the start function still runs %v after its deadline", straightLineWait)
	}
	if r := p.Call(context.Background(), "run", nil, nil); r.OK || r.Error.Code != wasm.CodeUnavailable {
		t.Fatalf("run: %+v", r)
	}
	return 1
}

// TestAbandonedGuestReturnsTheCall: a guest that does not stop within the
// grace (here, inside a host function that ignores the stop) is abandoned:
// its call returns with a timeout while the guest still runs, its instance
// is never used again and frees its slot, and the next call gets a fresh
// one. (A guest that held off the Go scheduler would hold off the timer
// that abandons it too: that is why work between checks is bounded.)
func TestAbandonedGuestReturnsTheCall(t *testing.T) {
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
		return c.WithCapabilities(reg).WithKillGrace(100 * time.Millisecond)
	})
	mod := wasmtest.HandModuleWith(t, "hand", func(m *asm.Module) ([]byte, []byte) {
		wait := m.ImportFunc(wasm.CapabilityPrefix+"hang", "wait", m.Type(nil, nil))
		m.Memory(1, 1)
		return append(asm.Call(wait), asm.I32Const(0)...), nil
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
	if err := h.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan wasm.Result, 1)
	go func() { done <- p.Call(ctx, "run", nil, nil) }()
	var r wasm.Result
	select {
	case r = <-done:
	case <-time.After(straightLineWait):
		close(release)
		t.Fatalf("the call returned only once the guest did: %+v", <-done)
	}
	if r.OK || r.Error.Code != wasm.CodeTimeout {
		t.Fatalf("%+v, want a timeout", r)
	}
	if n := p.AbandonedForTest(); n != 1 {
		t.Fatalf("%d instances abandoned, want 1", n)
	}
	if p.BusyForTest() {
		t.Fatal("the abandoned instance still holds a slot")
	}
	// The next call runs (on a fresh instance) as far as the host function.
	if r := p.Call(context.Background(), "run", nil, nil); !r.OK && r.Error.Code == wasm.CodeTimeout || entered.Load() != 2 {
		t.Fatalf("the next call: %+v (the host function entered %d times)", r.Error, entered.Load())
	}
	close(release) // the abandoned guest returns into its closed module
}
