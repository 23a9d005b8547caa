package wasm_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
)

// TestSourceReload: a plugin loaded with a Reload (a built-in) keeps no copy of its
// module and reads it back when it must instrument it (no compile cache
// here); bytes read back that are not the module loaded are refused, and
// the call says why.
func TestSourceReload(t *testing.T) {
	mod := testModule(t, "echo")
	for _, tc := range []struct {
		name   string
		reload func() []byte
		ok     bool
	}{
		{"the same bytes", func() []byte { return append([]byte(nil), mod...) }, true},
		{"other bytes", func() []byte { return append(append([]byte(nil), mod...), 0) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithCompilationCacheDir("") })
			var reads atomic.Int32
			p, err := h.Load(context.Background(), wasm.Source{Origin: "echo", Module: mod, Builtin: true,
				Reload: func() ([]byte, error) { reads.Add(1); return tc.reload(), nil }})
			if err != nil {
				t.Fatal(err)
			}
			if p.ModuleKeptForTest() {
				t.Fatal("the module is kept though it can be read back")
			}
			r := call(t, p, "echo", map[string]any{"text": "a"})
			if reads.Load() != 1 {
				t.Fatalf("read back %d times for the first compile, want 1", reads.Load())
			}
			switch {
			case tc.ok && (!r.OK || r.Text != "a"):
				t.Fatalf("call: %+v", r)
			case !tc.ok && (r.OK || !strings.Contains(r.Error.Message, "read again")):
				t.Fatalf("call on other bytes: %+v, want a refusal naming them", r)
			}
		})
	}
}
