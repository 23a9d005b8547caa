package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
)

// fileStore is a test capability named "files" with the wire format of the
// real one's read and write (host/files, which needs a store), so that the
// writesneak test plugin runs on the real PDK. It records every write it
// lets through, with the tool it came from.
type fileStore struct {
	mu     sync.Mutex
	files  map[string][]byte
	reads  int
	writes []storeWrite
}

type storeWrite struct {
	name, tool string
	readOnly   bool
}

func (s *fileStore) capability() wasm.Capability {
	mod := wasm.CapabilityPrefix + "files"
	return wasm.Capability{Name: "files", Description: "test store", Functions: []wasm.HostFunction{
		wasm.JSONFunction(mod, "read", false, func(_ context.Context, _ *wasm.Call, raw json.RawMessage) (any, error) {
			var req struct {
				File string `json:"file"`
			}
			if err := json.Unmarshal(raw, &req); err != nil {
				return nil, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reads++
			b, ok := s.files[req.File]
			if !ok {
				return nil, fmt.Errorf("no file %q", req.File)
			}
			return map[string]any{"fileId": req.File, "name": req.File, "mimeType": "text/plain", "size": len(b), "data": b}, nil
		}),
		wasm.JSONFunction(mod, "write", true, func(_ context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
			var req struct {
				Name string `json:"name"`
				Data []byte `json:"data"`
			}
			if err := json.Unmarshal(raw, &req); err != nil {
				return nil, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.files[req.Name] = req.Data
			s.writes = append(s.writes, storeWrite{name: req.Name, tool: c.Tool, readOnly: c.ReadOnly})
			return map[string]any{"fileId": req.Name, "name": req.Name, "size": len(req.Data)}, nil
		}),
	}}
}

// writesneakHost is a host with the test store as its "files" capability
// and writesneak loaded, compiling into cacheDir.
func writesneakHost(tb testing.TB, cacheDir string) (*wasm.Host, *wasm.Plugin, *fileStore) {
	tb.Helper()
	store := &fileStore{files: map[string][]byte{"seed": []byte("seed text")}}
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(wasm.EgressOptions{}), store.capability())...)
	if err != nil {
		tb.Fatal(err)
	}
	h := newHost(tb, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		c = c.WithCapabilities(reg)
		if cacheDir != "" {
			c = c.WithCompilationCacheDir(cacheDir)
		}
		return c
	})
	return h, load(tb, h, "writesneak"), store
}

// A read-only tool's calls of a write function are refused, before, after
// and while the plugin's writing tools run on the same compiled code.
func hostileReadOnlyToolCallsAWriteFunction(t testing.TB) int {
	_, p, store := writesneakHost(t, "")
	refused := func(tool string, args map[string]any) {
		t.Helper()
		r := call(t, p, tool, args)
		if r.OK || r.Error.Code != wasm.CodeCapabilityDenied {
			t.Fatalf("read-only %s: %+v (text %q), want %s", tool, r.Error, r.Text, wasm.CodeCapabilityDenied)
		}
	}
	allowed := func(tool string, args map[string]any) {
		t.Helper()
		if r := call(t, p, tool, args); !r.OK {
			t.Fatalf("%s: %+v", tool, r.Error)
		}
	}
	n := 0
	refused("sneak", map[string]any{"name": "a", "text": "x"}) // first call: nothing compiled yet
	allowed("read", map[string]any{"name": "seed"})
	allowed("write", map[string]any{"name": "b", "text": "y"})
	refused("sneak", map[string]any{"name": "c", "text": "x"}) // after a write on the same code
	refused("sneakAfterRead", map[string]any{"name": "seed", "text": "x"})
	n += 5

	// Both kinds at once: the flag is per call, never per runtime.
	var wg sync.WaitGroup
	const each = 8
	for i := range each {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if r := call(t, p, "sneak", map[string]any{"name": fmt.Sprintf("s%d", i), "text": "x"}); r.OK || r.Error.Code != wasm.CodeCapabilityDenied {
				t.Errorf("concurrent sneak %d: %+v", i, r.Error)
			}
		}()
		go func() {
			defer wg.Done()
			if r := call(t, p, "write", map[string]any{"name": fmt.Sprintf("w%d", i), "text": "y"}); !r.OK {
				t.Errorf("concurrent write %d: %+v", i, r.Error)
			}
		}()
	}
	wg.Wait()
	n++ // the concurrent mix is one case

	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.writes) != 1+each {
		t.Errorf("%d writes reached the store, want %d: %+v", len(store.writes), 1+each, store.writes)
	}
	for _, w := range store.writes {
		if w.tool != "write" || w.readOnly {
			t.Errorf("a write reached the store from tool %q (read-only %v)", w.tool, w.readOnly)
		}
	}
	for _, name := range []string{"a", "c", "seed.copy"} {
		if _, ok := store.files[name]; ok {
			t.Errorf("file %q was written by a read-only tool", name)
		}
	}
	if store.reads != 2 {
		t.Errorf("%d reads, want 2 (read and sneakAfterRead)", store.reads)
	}
	return n
}

// TestWarmCompilesEachPluginOnce: a plugin with read-only and writing tools
// is compiled once, by Warm or by its calls, whichever kind runs first.
func TestWarmCompilesEachPluginOnce(t *testing.T) {
	ctx := context.Background()
	cache := filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")
	t.Run("warm", func(t *testing.T) {
		h, p, _ := writesneakHost(t, cache)
		if err := p.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		if n := h.CompilesForTest(); n != 1 {
			t.Fatalf("Warm compiled the module %d times, want once", n)
		}
		for _, tool := range []string{"read", "write"} {
			if r := call(t, p, tool, map[string]any{"name": "seed", "text": "x"}); !r.OK {
				t.Fatalf("%s: %+v", tool, r.Error)
			}
		}
		if n := h.CompilesForTest(); n != 1 {
			t.Fatalf("compiled %d times after calls of both kinds, want once", n)
		}
	})
	t.Run("calls", func(t *testing.T) {
		h, p, _ := writesneakHost(t, cache)
		for _, tool := range []string{"write", "read", "write"} {
			if r := call(t, p, tool, map[string]any{"name": "seed", "text": "x"}); !r.OK {
				t.Fatalf("%s: %+v", tool, r.Error)
			}
		}
		if n := h.CompilesForTest(); n != 1 {
			t.Fatalf("compiled %d times, want once", n)
		}
	})
}
