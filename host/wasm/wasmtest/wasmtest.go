// Package wasmtest gives tests of any package the test plugins of
// host/wasm/testdata/plugins, built with the real toolchain (`agenthost
// plugin build`) on first use or when their sources or the PDK changed, and
// a host with them loaded.
package wasmtest

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/wasm"
)

// buildMu serialises builds within a test binary; builds of several test
// binaries write through a rename, so a reader never sees half a module.
var buildMu sync.Mutex

// root is the module's root directory, found from this file's path so
// tests of any package can call Module.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Module returns the built module of test plugin name, or of the built-in
// plugin of that name (plugins/NAME) when no test plugin has it.
func Module(tb testing.TB, name string) []byte {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	r := root()
	src := filepath.Join(r, "host", "wasm", "testdata", "plugins", name)
	if _, err := os.Stat(src); err != nil {
		src = filepath.Join(r, "plugins", name)
	}
	out := filepath.Join(r, "host", "wasm", "testdata", "build", name+".wasm")
	// A plugin is built from its folder, the PDK (with its copy of go-json)
	// and the module's dependencies (go.mod, go.sum).
	if stale(out, src, filepath.Join(r, "pdk"), filepath.Join(r, "go.mod"), filepath.Join(r, "go.sum")) {
		// Built-in plugins take minutes under the race detector's CPU load;
		// one build serves every package's tests.
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			tb.Fatal(err)
		}
		tmp := out + ".tmp" + strings.ReplaceAll(tb.Name(), "/", "_")
		args := []string{"run", "./cmd/agenthost", "plugin", "build", src, "-o", tmp}
		if flags, err := os.ReadFile(filepath.Join(src, "buildflags")); err == nil {
			args = append(args, strings.Fields(string(flags))...)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = r
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			tb.Fatalf("building test plugin %s: %v\n%s", name, err, stderr.String())
		}
		if err := os.Rename(tmp, out); err != nil {
			tb.Fatal(err)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// stale reports whether out is missing or older than any file under the
// paths (folders or files).
func stale(out string, paths ...string) bool {
	st, err := os.Stat(out)
	if err != nil {
		return true
	}
	newer := false
	for _, dir := range paths {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				// os.Stat follows a symbolic link to the source it names
				// (msprobe's main.go is connprobe's).
				if info, err := os.Stat(path); err == nil && info.ModTime().After(st.ModTime()) {
					newer = true
				}
			}
			return nil
		})
	}
	return newer
}

// Options says how NewHost builds a host; the zero value is a host with
// the standard capabilities on default egress options, its logs discarded
// and its plugins compiled at their first call.
type Options struct {
	// Egress configures the standard capabilities' network access (the
	// hosts a test server is allowed on, a resolver for their names).
	Egress wasm.EgressOptions
	// Capabilities are offered beside the standard ones (the host's files,
	// connections or knowledge capabilities of a test).
	Capabilities []wasm.Capability
	// Logs, when not nil, receives the host's logs as text at debug level,
	// plugins' debug logs included (a test searching them for a secret);
	// nil discards them.
	Logs io.Writer
	// Warm compiles the plugins before NewHost returns rather than at their
	// first call.
	Warm bool
	// MaxIdleMemory, when not 0, is the guest memory past which an
	// instance is closed after its call (wasm.Config.WithMaxIdleMemory).
	MaxIdleMemory uint64
}

// NewHost returns a host built as o says with the named test plugins loaded
// (as built-ins, in order); it is closed when the test ends. Plugin gives a
// loaded plugin's handle.
func NewHost(tb testing.TB, o Options, names ...string) *wasm.Host {
	tb.Helper()
	cfg := wasm.NewConfig().WithLogger(slog.New(slog.DiscardHandler))
	if o.Logs != nil {
		cfg = cfg.WithLogger(slog.New(slog.NewTextHandler(o.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))).WithPluginLogLevel(slog.LevelDebug)
	}
	if o.MaxIdleMemory != 0 {
		cfg = cfg.WithMaxIdleMemory(o.MaxIdleMemory)
	}
	return newHost(tb, cfg, o, names...)
}

// newHost is NewHost on cfg, the host's configuration but for its
// capabilities and compilation cache.
func newHost(tb testing.TB, cfg wasm.Config, o Options, names ...string) *wasm.Host {
	tb.Helper()
	ctx := context.Background()
	reg, err := wasm.NewRegistry(WithModel(append(wasm.StandardCapabilities(o.Egress), o.Capabilities...))...)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := wasm.New(ctx, cfg.WithCapabilities(reg).WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	for _, n := range names {
		if _, err := h.Load(ctx, wasm.Source{Origin: "test:" + n, Module: Module(tb, n), Builtin: true}); err != nil {
			tb.Fatal(err)
		}
	}
	if o.Warm {
		// Generous: the first compilation of a large plugin on a busy machine.
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		if err := h.Warm(wctx); err != nil {
			tb.Fatal(err)
		}
	}
	return h
}

// Plugin returns h's loaded plugin name; the test ends when there is none.
func Plugin(tb testing.TB, h *wasm.Host, name string) *wasm.Plugin {
	tb.Helper()
	p, ok := h.Plugin(name)
	if !ok {
		tb.Fatalf("no plugin %q loaded", name)
	}
	return p
}

// Host returns a host with the standard capabilities and the named test
// plugins loaded (as built-ins) and warmed; it is closed when the test ends.
func Host(tb testing.TB, names ...string) *wasm.Host {
	tb.Helper()
	return HostWith(tb, nil, names...)
}

// HostWith is Host with the capabilities caps offered beside the standard
// ones (the host's files, model or knowledge capabilities of a test).
func HostWith(tb testing.TB, caps []wasm.Capability, names ...string) *wasm.Host {
	tb.Helper()
	// The default logger: host warnings show in a failing test's output.
	return newHost(tb, wasm.NewConfig(), Options{Capabilities: caps, Warm: true}, names...)
}

// WithModel adds the model capability, with no model configured (its calls
// answer no_model, as a host without models does), unless caps has one: the
// pdf plugin declares it for OCR, and a host without it would refuse the
// plugin.
func WithModel(caps []wasm.Capability) []wasm.Capability {
	for _, c := range caps {
		if c.Name == "model" {
			return caps
		}
	}
	return append(caps, (&llm.Capabilities{}).ModelCapability())
}
