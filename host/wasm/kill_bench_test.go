package wasm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm"
)

// BenchmarkKillGrace measures how long a guest that does not give up keeps
// running after its deadline: the time from the deadline to the call's
// return, p99 over guests spinning in an endless loop and guests asleep,
// instrumented and in close-on-done mode, and instrumented guests of
// straight-line bulk work (straightLineShapes: 2000 fills of 128 MiB and
// the like, in no loop). Each stop discards the instance, so the next call
// also pays a new instance (outside the measured span).
func BenchmarkKillGrace(b *testing.B) {
	const deadline = 30 * time.Millisecond
	var d []time.Duration
	for _, mode := range []struct {
		name  string
		tweak func(wasm.Config) wasm.Config
	}{{"instrumented", nil}, {"close-on-done", func(c wasm.Config) wasm.Config { return c.WithCloseOnDoneOnly() }}} {
		h := newHost(b, wasm.EgressOptions{}, mode.tweak)
		loop := load(b, h, "loop")
		nb := load(b, h, "notebook")
		type guest struct {
			p          *wasm.Plugin
			tool, args string
		}
		guests := []guest{{loop, "spin", `{}`}, {nb, "lookup", `{"topic":"t","sleepMs":5000}`}}
		if mode.tweak == nil {
			// wazero's own mode has no check in straight-line code: these
			// shapes run instrumented only (see docs/plugins.md).
			for _, sc := range straightLineShapes {
				if sc.name != "memory.fill" && sc.name != "memory.copy" && sc.name != "host calls" {
					continue
				}
				name := strings.NewReplacer(".", "", " ", "").Replace(sc.name)
				p, err := h.Load(context.Background(), wasm.Source{Origin: name, Module: straightLineModule(b, name, sc.build)})
				if err != nil {
					b.Fatal(err)
				}
				guests = append(guests, guest{p, name + "Run", `{}`})
			}
		}
		if err := h.Warm(context.Background()); err != nil {
			b.Fatal(err)
		}
		for _, c := range guests {
			var worst time.Duration
			for i := 0; i < 50; i++ {
				// A fresh instance first, so only the stop is timed.
				t, _ := c.p.Manifest().Tool(c.tool)
				if put, err := c.p.AcquireForBenchmark(context.Background(), t.ReadOnly); err == nil {
					put()
				}
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				t0 := time.Now()
				r := c.p.Call(ctx, c.tool, json.RawMessage(c.args), nil)
				late := time.Since(t0) - deadline
				cancel()
				if r.OK {
					b.Fatalf("%s %s: finished", mode.name, c.tool)
				}
				d = append(d, max(late, 0))
				worst = max(worst, late)
			}
			b.Logf("%s %s %s: at most %v late", mode.name, c.p.Name(), c.tool, worst)
		}
	}
	figure.Report("plugin.kill.grace.ms", float64(figure.Percentile(d, 99).Microseconds())/1000, "ms")
}
