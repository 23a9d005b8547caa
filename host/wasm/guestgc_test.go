package wasm_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
)

// hostileHostEnvironment: a guest listing its environment sees the two
// variables of Go's collector and nothing of the host process's, not even a
// variable set just before the instance starts.
func hostileHostEnvironment(t testing.TB) int {
	t.Setenv("AGENTHOST_TEST_SECRET", "s3cret")
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "snoop")
	r := call(t, p, "environ", map[string]any{})
	if !r.OK {
		t.Fatalf("environ: %+v", r)
	}
	got := strings.Split(r.Text, "\n")
	if strings.Contains(r.Text, "s3cret") || len(got) != 2 || !strings.HasPrefix(got[0], "GOGC=") || !strings.HasPrefix(got[1], "GOMEMLIMIT=") {
		t.Fatalf("the guest's environment is %q, want GOGC and GOMEMLIMIT alone", got)
	}
	if len(os.Environ()) < 2 {
		t.Fatal("the host process has no environment to leak: the case proves nothing")
	}
	return 1
}

// TestGuestGCSettings: Go guests get GOGC (the configured one, 400 by
// default) and a soft memory limit of three quarters of the lower of their
// memory limit and the idle-memory bound.
func TestGuestGCSettings(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name     string
		tweak    func(wasm.Config) wasm.Config
		gogc     int
		limitMiB uint64
	}{
		// snoop declares no memory limit: the default of 128 MiB.
		{"defaults", nil, wasm.DefaultGuestGOGC, 96},
		{"Go's own GOGC", func(c wasm.Config) wasm.Config { return c.WithGuestGOGC(-1) }, 100, 96},
		{"an operator's GOGC", func(c wasm.Config) wasm.Config { return c.WithGuestGOGC(50) }, 50, 96},
		{"a lower idle bound", func(c wasm.Config) wasm.Config { return c.WithMaxIdleMemory(64 * mib) }, wasm.DefaultGuestGOGC, 48},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, newHost(t, wasm.EgressOptions{}, tc.tweak), "snoop")
			r := call(t, p, "environ", map[string]any{})
			want := fmt.Sprintf("GOGC=%d\nGOMEMLIMIT=%d", tc.gogc, tc.limitMiB*mib)
			if !r.OK || r.Text != want {
				t.Fatalf("environ = %+v, want %q", r, want)
			}
		})
	}
}
