package wasm_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// pruneHost is a host on the compile cache dir with these limits and clock.
func pruneHost(t *testing.T, dir string, limits wasm.CacheLimits, clock *testClock, logs *logCapture) *wasm.Host {
	t.Helper()
	return cacheHost(t, dir, logs, func(c wasm.Config) wasm.Config {
		return c.WithCompilationCacheLimits(limits).WithCacheClockForTest(clock.Now)
	})
}

// start loads module on h and compiles it (a start of the plugin).
func start(t *testing.T, h *wasm.Host, name string, module []byte) {
	t.Helper()
	ctx := context.Background()
	p, err := h.Load(ctx, wasm.Source{Origin: name, Module: module, Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Warm(ctx); err != nil {
		t.Fatal(err)
	}
}

// pruned returns the cache's messages about files it deleted for age or size.
func (l *logCapture) pruned() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if strings.HasPrefix(r.Message, "compile cache: deleted") && r.Level == slog.LevelInfo {
			out = append(out, r.Message)
		}
	}
	return out
}

// instrumentedOf reports whether files hold the instrumented form of the
// module whose sha256 is sha.
func instrumentedOf(files map[string][]byte, sha string) bool {
	for rel := range files {
		if strings.HasPrefix(rel, "instrumented/"+sha) {
			return true
		}
	}
	return false
}

// TestCompileCachePrune: the compile cache forgets what no start used
// for MaxUnused and keeps within MaxBytes by deleting the least recently
// used files, at open and while a host runs; what it deletes is compiled
// again at the next start, and nothing it deletes is reported as tampering.
func TestCompileCachePrune(t *testing.T) {
	ctx := context.Background()
	echo, compute := testModule(t, "echo"), testModule(t, "compute")
	echoSHA, computeSHA := digestOf(echo), digestOf(compute)
	const day = 24 * time.Hour
	month := wasm.CacheLimits{MaxBytes: 1 << 40, MaxUnused: 30 * day}
	type step struct {
		after  time.Duration // the clock moves this far first
		limits wasm.CacheLimits
		starts []string // plugins started on a host opened now ("" : open only)
		want   []string // plugins whose files the directory holds after the step
		pruned bool     // the step logs a deletion
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"unused for MaxUnused: deleted at open, compiled again", []step{
			{0, month, []string{"echo"}, []string{"echo"}, false},
			{29 * day, month, nil, []string{"echo"}, false},
			{2 * day, month, nil, nil, true},
			{0, month, []string{"echo"}, []string{"echo"}, false},
		}},
		{"a start renews the files", []step{
			{0, month, []string{"echo"}, []string{"echo"}, false},
			{20 * day, month, []string{"echo"}, []string{"echo"}, false},
			{20 * day, month, nil, []string{"echo"}, false},
			{11 * day, month, nil, nil, true},
		}},
		{"only the unused plugin is forgotten", []step{
			{0, month, []string{"echo", "compute"}, []string{"echo", "compute"}, false},
			{20 * day, month, []string{"compute"}, []string{"echo", "compute"}, false},
			{11 * day, month, nil, []string{"compute"}, true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			clock := &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			mods := map[string][]byte{"echo": echo, "compute": compute}
			shas := map[string]string{"echo": echoSHA, "compute": computeSHA}
			for i, s := range c.steps {
				clock.advance(s.after)
				logs := &logCapture{}
				h := pruneHost(t, dir, s.limits, clock, logs)
				for _, name := range s.starts {
					start(t, h, name, mods[name])
				}
				h.Close(ctx)
				files := cacheFiles(t, dir)
				for name, sha := range shas {
					want := false
					for _, w := range s.want {
						want = want || w == name
					}
					if got := instrumentedOf(files, sha); got != want {
						t.Errorf("step %d: %s cached: %v, want %v (files %v)", i, name, got, want, keys(files))
					}
				}
				if got := len(logs.pruned()) > 0; got != s.pruned {
					t.Errorf("step %d: deletion logged %v, want %v: %q", i, got, s.pruned, logs.pruned())
				}
				if w := logs.cacheWarnings(); len(w) != 0 {
					t.Errorf("step %d: warnings: %q", i, w)
				}
			}
		})
	}

	// Size: one plugin's files fit, two do not.
	t.Run("past MaxBytes the least recently used go, at open and while running", func(t *testing.T) {
		sizeOf := func(m []byte) int64 {
			probe := filepath.Join(t.TempDir(), "cache")
			h := pruneHost(t, probe, wasm.CacheLimits{}, &testClock{now: time.Now()}, &logCapture{})
			start(t, h, "probe", m)
			h.Close(ctx)
			var n int64
			for _, b := range cacheFiles(t, probe) {
				n += int64(len(b))
			}
			return n
		}
		echoBytes, computeBytes := sizeOf(echo), sizeOf(compute)
		limits := wasm.CacheLimits{MaxBytes: max(echoBytes, computeBytes) + min(echoBytes, computeBytes)/2, MaxUnused: 30 * day}

		dir := filepath.Join(t.TempDir(), "cache")
		clock := &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		logs := &logCapture{}
		h := pruneHost(t, dir, limits, clock, logs)
		start(t, h, "echo", echo)
		clock.advance(2 * time.Hour)
		// A running host: echo was started over an hour ago, so compiling
		// compute deletes it.
		start(t, h, "compute", compute)
		h.Close(ctx)
		files := cacheFiles(t, dir)
		if instrumentedOf(files, echoSHA) || !instrumentedOf(files, computeSHA) {
			t.Errorf("after compute's start: echo cached %v (want false), compute %v (want true)", instrumentedOf(files, echoSHA), instrumentedOf(files, computeSHA))
		}
		if len(logs.pruned()) == 0 || len(logs.cacheWarnings()) != 0 {
			t.Errorf("deletions logged %q, warnings %q", logs.pruned(), logs.cacheWarnings())
		}

		// Both started within the hour: a running host keeps both, over
		// its size; the next open deletes the older.
		// (A mark is renewed once it is an hour old: compute's is, here.)
		logs = &logCapture{}
		clock.advance(2 * time.Hour)
		h = pruneHost(t, dir, limits, clock, logs)
		start(t, h, "echo", echo)
		clock.advance(10 * time.Minute)
		start(t, h, "compute", compute)
		h.Close(ctx)
		files = cacheFiles(t, dir)
		if !instrumentedOf(files, echoSHA) || !instrumentedOf(files, computeSHA) {
			t.Errorf("files started within the hour deleted by a running host: %v", keys(files))
		}
		clock.advance(time.Minute)
		pruneHost(t, dir, limits, clock, &logCapture{}).Close(ctx)
		files = cacheFiles(t, dir)
		if instrumentedOf(files, echoSHA) || !instrumentedOf(files, computeSHA) {
			t.Errorf("at open: echo (older) cached %v, compute (newer) %v; want false, true", instrumentedOf(files, echoSHA), instrumentedOf(files, computeSHA))
		}
		var total int64
		for _, b := range files {
			total += int64(len(b))
		}
		if total > limits.MaxBytes {
			t.Errorf("%d bytes cached after open, over MaxBytes %d", total, limits.MaxBytes)
		}
	})
}

// TestCompiledBefore: a plugin counts as compiled before (serve then
// leaves it to its first use) only while the cache holds both its
// instrumented module and native code of it; either gone, it is not.
func TestCompiledBefore(t *testing.T) {
	ctx := context.Background()
	echo := testModule(t, "echo")
	compiledBefore := func(dir string) bool {
		h := cacheHost(t, dir, &logCapture{})
		defer h.Close(ctx)
		p, err := h.Load(ctx, wasm.Source{Origin: "echo", Module: echo, Builtin: true})
		if err != nil {
			t.Fatal(err)
		}
		return p.CompiledBefore()
	}
	dir := filepath.Join(t.TempDir(), "cache")
	if compiledBefore(dir) {
		t.Fatal("compiled before in an empty cache")
	}
	fillCache(t, dir, echo)
	if !compiledBefore(dir) {
		t.Fatal("not compiled before after a start")
	}
	for _, c := range []struct {
		remove string // the files removed: names that start so
		want   bool
	}{{"", true}, {"wazero-", false}, {"instrumented/", false}} {
		name := "nothing removed"
		if c.remove != "" {
			name = "without " + c.remove
		}
		t.Run(name, func(t *testing.T) {
			copyDir := filepath.Join(t.TempDir(), "cache")
			copyCache(t, dir, copyDir)
			for rel := range cacheFiles(t, copyDir) {
				if c.remove != "" && strings.HasPrefix(rel, c.remove) {
					if err := os.Remove(filepath.Join(copyDir, rel)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := compiledBefore(copyDir); got != c.want {
				t.Errorf("compiled before: %v, want %v", got, c.want)
			}
		})
	}
}
