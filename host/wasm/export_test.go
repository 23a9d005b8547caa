package wasm

import "context"

// AcquireForBenchmark takes an instance from a variant's pool and returns the
// function that puts it back: the pool's cost alone, for BenchmarkPoolAcquire.
func (p *Plugin) AcquireForBenchmark(ctx context.Context, readOnly bool) (func(), error) {
	v := p.variant(readOnly)
	if err := v.compile(ctx); err != nil {
		return nil, err
	}
	in, _, err := v.pool.get(ctx, "")
	if err != nil {
		return nil, err
	}
	return func() { v.pool.put(in, true) }, nil
}

// WithCloseOnDoneOnly makes the host run every plugin in wazero's
// close-on-context-done mode, the fallback for modules it cannot instrument.
func (c Config) WithCloseOnDoneOnly() Config { c.closeOnDoneOnly = true; return c }
