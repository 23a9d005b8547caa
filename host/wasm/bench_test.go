package wasm_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm"
)

// Benchmarks ignore b.N: each measures with its own loop and prints FIGURE lines
// (`make bench`). Latencies are medians over many calls.

func echoArgs(size int) json.RawMessage {
	// {"text":"xxxx…"} of exactly size bytes.
	pad := size - len(`{"text":""}`)
	return json.RawMessage(`{"text":"` + strings.Repeat("x", max(pad, 0)) + `"}`)
}

func firstTool(p *wasm.Plugin) string { return p.Manifest().Tools[0].Name }

func BenchmarkPluginCall(b *testing.B) {
	h := newHost(b, wasm.EgressOptions{}, nil)
	p := load(b, h, "echo")
	tool := firstTool(p)
	ctx := context.Background()
	for _, sz := range []struct {
		name  string
		bytes int
		n     int
	}{{"64B", 64, 20000}, {"1KiB", 1024, 20000}, {"1MiB", 1 << 20, 300}} {
		args := echoArgs(sz.bytes)
		if r := p.Call(ctx, tool, args, nil); !r.OK {
			b.Fatalf("echo %s: %+v", sz.name, r.Error)
		}
		d := make([]time.Duration, sz.n)
		for i := range d {
			t0 := time.Now()
			r := p.Call(ctx, tool, args, nil)
			d[i] = time.Since(t0)
			if !r.OK {
				b.Fatalf("echo %s: %+v", sz.name, r.Error)
			}
		}
		figure.Report("plugin.call."+sz.name+".p50", figure.Micros(figure.Percentile(d, 50)), "us")
	}

	// Throughput on every core: one goroutine per pool slot.
	workers := 2 * runtime.GOMAXPROCS(0)
	args := echoArgs(64)
	const per = 10000
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if r := p.Call(ctx, tool, args, nil); !r.OK {
					b.Errorf("echo: %+v", r.Error)
					return
				}
			}
		}()
	}
	wg.Wait()
	figure.Report("plugin.calls_per_s", float64(workers*per)/time.Since(t0).Seconds(), "calls/s")
}

func BenchmarkPluginLoad(b *testing.B) {
	ctx := context.Background()
	module := testModule(b, "echo")
	tool := ""
	// Cold: an empty on-disk compile cache, one plugin, load to first result.
	var cold []float64
	for i := 0; i < 5; i++ {
		dir := b.TempDir()
		h := newHost(b, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithCompilationCacheDir(dir) })
		t0 := time.Now()
		p, err := h.Load(ctx, wasm.Source{Origin: "echo", Module: module})
		if err != nil {
			b.Fatal(err)
		}
		tool = firstTool(p)
		if r := p.Call(ctx, tool, echoArgs(64), nil); !r.OK {
			b.Fatal(r.Error)
		}
		cold = append(cold, figure.Millis(time.Since(t0)))
		h.Close(ctx)
	}
	figure.Report("plugin.load.cold", figure.Median(cold), "ms")

	// Warm: every built-in plugin, compile cache on disk already filled.
	srcs, err := builtin.Sources()
	if err != nil {
		b.Fatal(err)
	}
	if len(srcs) == 0 {
		b.Fatal("no built-in plugins embedded: run `make plugins` first")
	}
	// What serve loads: the opt-in fixtures are not among them.
	srcs = slices.DeleteFunc(srcs, func(s wasm.Source) bool { return builtin.OptIn(builtin.Name(s)) })
	// AGENTHOST_BENCH_WASM_CACHE keeps the compile cache between runs, so
	// that builds to compare skip filling it (they must share wazero's
	// version and the instrumentation's).
	dir := os.Getenv("AGENTHOST_BENCH_WASM_CACHE")
	if dir == "" {
		dir = b.TempDir()
	}
	// The built-ins ask for the host's capabilities too, registered here
	// unconnected as `plugin build` registers them: loading and warming
	// never calls them.
	reg, err := wasm.NewRegistry(builtin.NewCapabilities().List(wasm.EgressOptions{})...)
	if err != nil {
		b.Fatal(err)
	}
	warmAll := func() (wall, cpu time.Duration) {
		h := newHost(b, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
			return c.WithCompilationCacheDir(dir).WithCapabilities(reg)
		})
		defer h.Close(ctx)
		t0, c0 := time.Now(), processCPU(b)
		for _, s := range srcs {
			if _, err := h.Load(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
		if err := h.Warm(ctx); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0), processCPU(b) - c0
	}
	warmAll() // fills the cache
	var warm, cpu []float64
	for i := 0; i < 5; i++ {
		w, c := warmAll()
		warm, cpu = append(warm, figure.Millis(w)), append(cpu, figure.Millis(c))
	}
	figure.Report("plugin.load.warm_all", figure.Median(warm), "ms")
	// CPU time of the same loads: on a shared machine it drifts far less
	// than wall time, so before/after comparisons use it.
	figure.Report("plugin.load.warm_all.cpu", figure.Median(cpu), "ms")
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkPoolAcquire(b *testing.B) {
	h := newHost(b, wasm.EgressOptions{}, nil)
	p := load(b, h, "echo")
	ctx := context.Background()
	if r := p.Call(ctx, firstTool(p), echoArgs(64), nil); !r.OK {
		b.Fatal(r.Error)
	}
	const n = 50000
	d := make([]time.Duration, n)
	for i := range d {
		t0 := time.Now()
		release, err := p.AcquireForBenchmark(ctx, true)
		d[i] = time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
	figure.Report("plugin.pool.acquire.p50", figure.Micros(figure.Percentile(d, 50)), "us")
}

// BenchmarkCapabilityPayload reports capability.payload.1MB.ms and
// capability.payload.16MB.ms: a plugin (blockcopy) writes a payload of that
// size through a capability (files.write, the bytes in base64 in the JSON
// request) and reads it back (files.read, in the answer), as a connector
// moves a download; the capability keeps it in memory, so what is measured
// is the transport: the guest's JSON and the kernel copies both ways.
// Medians of 7 and 5 calls.
func BenchmarkCapabilityPayload(b *testing.B) {
	p, _ := blockCopyHost(b)
	ctx := context.Background()
	for _, sz := range []struct {
		name  string
		bytes int
		n     int
	}{{"1MB", 1 << 20, 7}, {"16MB", 16 << 20, 5}} {
		args, _ := json.Marshal(map[string]int{"size": sz.bytes})
		var ms []float64
		for i := 0; i <= sz.n; i++ {
			t0 := time.Now()
			r := p.Call(ctx, "roundTrip", args, nil)
			if !r.OK {
				b.Fatalf("%s: %+v", sz.name, r.Error)
			}
			if i > 0 { // the first call warms the instance
				ms = append(ms, figure.Millis(time.Since(t0)))
			}
		}
		figure.Report("capability.payload."+sz.name+".ms", figure.Median(ms), "ms")
	}
}
