package wasm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// uninstrumentable are modules the rewrite does not decode: each would run
// in wazero's close-on-context-done mode, where straight-line bulk work is
// not stopped, so the host refuses them, naming why, unless the operator
// allows the plugin to run uninterruptible. runs tells whether wazero
// (without its experimental features) runs the module once allowed.
var uninstrumentable = []struct {
	name, reason string
	runs         bool
	build        func(m *asm.Module) []byte
}{
	{"SIMD", "SIMD", true, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		return append(append([]byte{0xFD, 0x0C}, make([]byte, 16)...), asm.Drop()...) // v128.const 0; drop
	}},
	{"threads", "threads", false, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		return []byte{0xFE, 0x03, 0x00} // atomic.fence
	}},
	{"exceptions", "exception handling", false, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		return []byte{0x08, 0x00} // throw 0
	}},
	{"multi-memory", "multi-memory", false, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		m.Memory(1, 1)
		return nil
	}},
}

func hostileUninstrumentable(t testing.TB) int {
	for _, tc := range uninstrumentable {
		for _, yield := range []bool{true, false} {
			module := straightLineModule
			if !yield {
				module = straightLineModuleWithoutYield
			}
			mod := module(t, "hand", tc.build)
			h := newHost(t, wasm.EgressOptions{}, nil)
			_, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod})
			if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "-allow-uninterruptible hand") {
				t.Fatalf("%s (sched_yield imported: %v): Load = %v, want a refusal naming %q and the operator's allowance", tc.name, yield, err, tc.reason)
			}
		}
		// The operator's allowance, for this plugin only.
		mod := straightLineModule(t, "hand", tc.build)
		h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithUninterruptible("other") })
		if _, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod}); !errors.Is(err, wasm.ErrRefused) {
			t.Fatalf("%s: allowed for another plugin: Load = %v, want refused", tc.name, err)
		}
		h = newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithUninterruptible("hand") })
		p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod})
		if err != nil {
			t.Fatalf("%s: allowed: Load = %v", tc.name, err)
		}
		if tc.runs {
			// The guest runs to its end, writing no result frame: an
			// invalid output, not a refusal.
			if r := p.Call(context.Background(), "run", nil, nil); r.OK || r.Error.Code != wasm.CodeInvalidOutput {
				t.Fatalf("%s: allowed: run = %+v, want it run (to an invalid output)", tc.name, r.Error)
			}
		}
	}
	return len(uninstrumentable)
}

// TestUninterruptibleGrantFromFile: the grants file's uninterruptible key
// is the operator's allowance too.
func TestUninterruptibleGrantFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.yaml")
	if err := os.WriteFile(path, []byte("plugins:\n  hand:\n    uninterruptible: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := wasm.LoadGrantsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		c, err := f.Apply(c)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	mod := wasmtest.HandModuleWith(t, "hand", func(m *asm.Module) ([]byte, []byte) {
		m.Memory(1, 1)
		return append(append(append([]byte{0xFD, 0x0C}, make([]byte, 16)...), asm.Drop()...), asm.I32Const(0)...), nil
	})
	if _, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: mod}); err != nil {
		t.Fatalf("Load = %v, want it allowed by the grants file", err)
	}
}

// TestCheckModuleNamesWhy: plugin inspect's check of a module's code gives
// the refusal Load would, and none once the operator allows the plugin.
func TestCheckModuleNamesWhy(t *testing.T) {
	for _, tc := range uninstrumentable {
		mod := straightLineModuleWithoutYield(t, "hand", tc.build)
		if err := wasm.NewConfig().CheckModule("hand", mod); !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: CheckModule = %v, want a refusal naming %q", tc.name, err, tc.reason)
		}
		if err := wasm.NewConfig().WithUninterruptible("hand").CheckModule("hand", mod); err != nil {
			t.Errorf("%s: allowed: CheckModule = %v", tc.name, err)
		}
	}
	fill := straightLineModuleWithoutYield(t, "hand", straightLineShapes[0].build)
	if err := wasm.NewConfig().CheckModule("hand", fill); err != nil {
		t.Errorf("a module without sched_yield: CheckModule = %v, want nil (the rewrite adds it)", err)
	}
}
