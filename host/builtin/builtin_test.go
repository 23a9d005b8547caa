package builtin_test

import (
	"testing"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm/interrupt"
)

// TestBuiltinsAreInstrumentable: a module the host cannot instrument is
// refused unless the operator allows it uninterruptible, and no operator
// is asked that for a built-in: each must instrument.
func TestBuiltinsAreInstrumentable(t *testing.T) {
	srcs, err := builtin.Sources()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) == 0 {
		t.Skip("this build carries no built-in plugins (make build)")
	}
	for _, s := range srcs {
		if _, err := interrupt.Instrument(s.Module, interrupt.Options{GlobalExport: interrupt.DefaultGlobalExport, AllowStart: true}); err != nil {
			t.Errorf("%s: %v", s.Origin, err)
		}
	}
}
