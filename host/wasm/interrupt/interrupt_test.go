package interrupt_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/interrupt"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

var (
	guestOnce sync.Once
	guestWasm []byte
	guestErr  error
)

// guest builds testdata/guest with the standard Go toolchain, once per run.
func guest(tb testing.TB) []byte {
	tb.Helper()
	guestOnce.Do(func() {
		dir, err := os.MkdirTemp("", "interrupt-guest")
		if err != nil {
			guestErr = err
			return
		}
		out := filepath.Join(dir, "guest.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./testdata/guest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			guestErr = errors.New(string(b))
			return
		}
		guestWasm, guestErr = os.ReadFile(out)
	})
	if guestErr != nil {
		tb.Fatalf("building guest: %v", guestErr)
	}
	return guestWasm
}

// runWASI instantiates module, nameless, in a fresh runtime with WASI that
// is closed when the test ends.
func runWASI(tb testing.TB, module []byte) api.Module {
	tb.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	tb.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, module, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		tb.Fatalf("instantiate: %v", err)
	}
	return mod
}

// instantiate compiles module in a runtime WITHOUT close-on-context-done and
// initialises the Go runtime.
func instantiate(tb testing.TB, module []byte, closeOnDone bool) api.Module {
	tb.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(closeOnDone))
	tb.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateModule(ctx, mustCompile(tb, rt, module), wazero.NewModuleConfig().WithStartFunctions().WithName(""))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := mod.ExportedFunction("_initialize").Call(ctx); err != nil {
		tb.Fatal(err)
	}
	return mod
}

func mustCompile(tb testing.TB, rt wazero.Runtime, module []byte) wazero.CompiledModule {
	tb.Helper()
	cm, err := rt.CompileModule(context.Background(), module)
	if err != nil {
		tb.Fatalf("compile: %v", err)
	}
	return cm
}

func instrumented(tb testing.TB) []byte {
	tb.Helper()
	out, err := interrupt.Instrument(guest(tb), interrupt.Options{})
	if err != nil {
		tb.Fatalf("Instrument: %v", err)
	}
	return out
}

func TestTriggerStopsEndlessLoop(t *testing.T) {
	mod := instantiate(t, instrumented(t), false)
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("spin").Call(context.Background())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("spin returned before Trigger: %v", err)
	default:
	}
	if err := interrupt.Trigger(mod, ""); err != nil {
		t.Fatal(err)
	}
	// spin never ends by itself, so any bound tells "stopped" from "ignored
	// the trigger"; how fast it stops is BenchmarkKill's figure, not a test's.
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("spin returned without error after Trigger")
		}
		if !interrupt.Triggered(mod, "") {
			t.Fatal("Triggered = false after Trigger")
		}
	case <-time.After(time.Minute):
		t.Fatal("guest still running a minute after Trigger")
	}
}

func TestTriggerStopsRecursion(t *testing.T) {
	mod := instantiate(t, instrumented(t), false)
	if err := interrupt.Trigger(mod, ""); err != nil {
		t.Fatal(err)
	}
	// The flag is set before the call: the entry check of recurse traps at once.
	if _, err := mod.ExportedFunction("recurse").Call(context.Background(), 10); err == nil {
		t.Fatal("recurse ran although the flag was set")
	}
}

func TestInstrumentedResultsUnchanged(t *testing.T) {
	plain := instantiate(t, guest(t), false)
	inst := instantiate(t, instrumented(t), false)
	for _, n := range []uint64{0, 1, 1000, 20000} {
		a, err := plain.ExportedFunction("compute").Call(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := inst.ExportedFunction("compute").Call(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		if a[0] != b[0] {
			t.Fatalf("compute(%d): plain %x, instrumented %x", n, a[0], b[0])
		}
	}
	r, err := inst.ExportedFunction("recurse").Call(context.Background(), 1000)
	if err != nil || r[0] != 1000 {
		t.Fatalf("recurse(1000) = %v, %v", r, err)
	}
	if interrupt.Triggered(inst, "") {
		t.Fatal("flag set without Trigger")
	}
}

func TestInstrumentRefusesBadInput(t *testing.T) {
	mod := guest(t)
	cases := map[string][]byte{
		"empty":       nil,
		"not wasm":    []byte("hello world, not a module"),
		"truncated":   mod[:len(mod)/2],
		"header only": mod[:8],
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := interrupt.Instrument(in, interrupt.Options{})
			if name == "header only" {
				// Valid, with no sched_yield: the rewrite adds it (it used to
				// leave such a module to close-on-context-done, which does
				// not stop straight-line bulk work).
				if err != nil || out == nil {
					t.Fatalf("Instrument(header only) = %v, want the module with sched_yield added", err)
				}
				return
			}
			if !errors.Is(err, wasmbin.ErrMalformed) {
				t.Fatalf("Instrument(%s) = %v, want ErrMalformed", name, err)
			}
		})
	}
}

func TestInstrumentRefusesSIMD(t *testing.T) {
	// (module (import "wasi_snapshot_preview1" "sched_yield" (func (result i32)))
	//         (func (result v128) v128.const i32x4 0 0 0 0))
	mod := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 9, 2, 0x60, 0, 1, 0x7B, 0x60, 0, 1, 0x7F, // types: () -> v128, () -> i32
		2, 38, 1, 22}
	mod = append(mod, "wasi_snapshot_preview1"...)
	mod = append(mod, 11)
	mod = append(mod, "sched_yield"...)
	mod = append(mod, 0, 1, // import func of type 1
		3, 2, 1, 0, // func 1 : type 0
		10, 22, 1, 20, 0, 0xFD, 0x0C, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B)
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	mustCompile(t, rt, mod) // the test module itself is valid
	if _, err := interrupt.Instrument(mod, interrupt.Options{}); !errors.Is(err, interrupt.ErrUnsupported) || !strings.Contains(err.Error(), "0xFD") {
		t.Fatalf("Instrument(SIMD) = %v, want ErrUnsupported naming 0xFD", err)
	}
}

// TestTriggerWhileGarbageCollecting reproduces what deadlocked a plain flag
// check: a spinning guest holds up the collector's stop-the-world, which holds
// up the goroutine that would set the flag. The periodic yield must let both
// proceed.
func TestTriggerWhileGarbageCollecting(t *testing.T) {
	mod := instantiate(t, instrumented(t), false)
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("spin").Call(context.Background())
		done <- err
	}()
	stopGC := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopGC:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer close(stopGC)
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	time.AfterFunc(0, func() { interrupt.Trigger(mod, "") })
	select {
	case err := <-done:
		if err == nil || !interrupt.Triggered(mod, "") {
			t.Fatalf("spin ended with %v, flag %v", err, interrupt.Triggered(mod, ""))
		}
		t.Logf("stopped %v after Trigger under GC pressure", time.Since(t0))
	case <-time.After(5 * time.Second):
		t.Fatal("guest still running 5s after Trigger: the collector and the guest deadlocked")
	}
}
