package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// The test plugins live in testdata/plugins/NAME and are built with the real
// toolchain by package wasmtest (or `make testplugins`).

func testModule(tb testing.TB, name string) []byte { return wasmtest.Module(tb, name) }

// newHost returns a host with the standard capabilities; tweak adjusts its config.
func newHost(tb testing.TB, egress wasm.EgressOptions, tweak func(wasm.Config) wasm.Config) *wasm.Host {
	tb.Helper()
	reg, err := wasm.NewRegistry(wasm.StandardCapabilities(egress)...)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := wasm.NewConfig().
		WithCapabilities(reg).
		WithLogger(slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))).
		WithGrantDeclared(true).
		WithAllowUnsigned(true).
		// One verified compile cache for the package's tests (as the
		// machine-wide cache serves the CLI and the server), so each test
		// does not compile the same plugins again.
		WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache"))
	if tweak != nil {
		cfg = tweak(cfg)
	}
	h, err := wasm.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func load(tb testing.TB, h *wasm.Host, name string) *wasm.Plugin {
	tb.Helper()
	p, err := h.Load(context.Background(), wasm.Source{Origin: name, Module: testModule(tb, name)})
	if err != nil {
		tb.Fatalf("loading %s: %v", name, err)
	}
	return p
}

func call(tb testing.TB, p *wasm.Plugin, tool string, args any) wasm.Result {
	tb.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	return p.Call(context.Background(), tool, raw, nil)
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// stopBound is how late a stopped guest may end in tests: far below the
// sleeps and endless loops they stop, far above any scheduling delay of a
// busy machine. The real latency is a benchmark figure (plugin.kill.grace.ms).
const stopBound = 2 * time.Second

func within(tb testing.TB, d, limit time.Duration, what string) {
	tb.Helper()
	if d > limit {
		tb.Errorf("%s took %v, want at most %v", what, d, limit)
	}
}

// fakeDNS resolves test names to loopback; tests never leave 127.0.0.0/8.
type fakeDNS map[string]string

func (f fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := f[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func portOf(r *http.Request) string {
	_, p, _ := net.SplitHostPort(r.Host)
	return p
}
