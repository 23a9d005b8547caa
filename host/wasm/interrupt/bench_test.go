package interrupt_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm/interrupt"
)

// BenchmarkInterruptOverhead measures what stoppability costs a compute-heavy
// Go guest (a sha256 chain): instrumented versus plain, and wazero's
// close-on-context-done mode versus plain, interleaved, medians of 7 runs.
func BenchmarkInterruptOverhead(b *testing.B) {
	plain := instantiate(b, guest(b), false)
	inst := instantiate(b, instrumented(b), false)
	cod := instantiate(b, guest(b), true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // close-on-context-done only acts on a cancellable context
	const rounds = 200000
	measure := func(name string, call func() error) float64 {
		t0 := time.Now()
		if err := call(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return float64(time.Since(t0))
	}
	var rInst, rCOD []float64
	for i := 0; i < 7; i++ {
		p := measure("plain", func() error { _, err := plain.ExportedFunction("compute").Call(ctx, rounds); return err })
		n := measure("instrumented", func() error { _, err := inst.ExportedFunction("compute").Call(ctx, rounds); return err })
		c := measure("close-on-done", func() error { _, err := cod.ExportedFunction("compute").Call(ctx, rounds); return err })
		rInst = append(rInst, n/p)
		rCOD = append(rCOD, c/p)
	}
	figure.Report("plugin.interrupt.overhead", figure.Median(rInst), "ratio")
	figure.Report("plugin.interrupt.closeondone", figure.Median(rCOD), "ratio")
}

// BenchmarkInstrument measures the rewrite itself (decoding and validating
// every instruction of a Go-built module): what a plugin's first start pays
// when no instrumented copy is cached. Median of 31 rewrites.
func BenchmarkInstrument(b *testing.B) {
	mod := guest(b)
	var ds []time.Duration
	for i := 0; i < 31; i++ {
		t0 := time.Now()
		if _, err := interrupt.Instrument(mod, interrupt.Options{}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	d := figure.Percentile(ds, 50)
	figure.Report("plugin.interrupt.instrument", float64(len(mod))/1e6/d.Seconds(), "MB/s")
}
