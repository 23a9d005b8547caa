package wasm_test

// The hostile suite of issue #10: each scenario names the class of attack
// and asserts the contained outcome (an error code, a refused load, a
// bounded host memory, another tenant's data untouched). A scenario returns
// how many cases it ran; TestHostileSuite runs them all, and
// BenchmarkHostileSuite reports the count (plugin.escape.tests).

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// hostileScenarios are the runtime's hostile scenarios, by class.
var hostileScenarios = []struct {
	name string
	run  func(testing.TB) int
}{
	{"mounts come only from the operator", hostileMountsComeOnlyFromTheOperator},
	{"mount grants that expose the host are refused", hostileMountGrantsThatExposeTheHost},
	{"a read-only tool cannot write a granted mount", hostileReadOnlyToolAndAGrantedMount},
	{"a read-only tool cannot call a write function", hostileReadOnlyToolCallsAWriteFunction},
	{"a granted mount is a jail (no links out)", hostileMountIsAJail},
	{"limits above the ceilings are refused", hostileLimitsAboveTheCeilings},
	{"announced sizes do not allocate", hostileAnnouncedSizes},
	{"a Go init that never ends is bounded", hostileGoInitThatNeverEnds},
	{"a start section that never returns is bounded", hostileStartSectionThatNeverReturns},
	{"code reaching for the interrupt globals is refused", hostileInterruptGlobals},
	{"straight-line and bulk work stops at the deadline", hostileStraightLineWork},
	{"straight-line and bulk work does not hold up the collector", hostileStraightLineWorkAndTheCollector},
	{"a start section of straight-line bulk work is bounded", hostileStraightLineStart},
	{"straight-line and bulk work without sched_yield stops at the deadline", hostileStraightLineWorkWithoutYield},
	{"straight-line and bulk work without sched_yield does not hold up the collector", hostileStraightLineWorkWithoutYieldAndTheCollector},
	{"a module the host cannot instrument is refused unless the operator allows it", hostileUninstrumentable},
	{"no state crosses tenants", hostileTenantState},
	{"waiting is bounded, cancellable and fair", hostileWaiting},
	{"the host's environment does not reach a guest", hostileHostEnvironment},
}

func TestHostileSuite(t *testing.T) {
	for _, sc := range hostileScenarios {
		t.Run(sc.name, func(t *testing.T) { sc.run(t) })
	}
}

// BenchmarkHostileSuite runs every hostile scenario once and reports how
// many cases ran, for the record.
func BenchmarkHostileSuite(b *testing.B) {
	n := 0
	for _, sc := range hostileScenarios {
		n += sc.run(b)
	}
	figure.Report("plugin.escape.tests", float64(n), "scenarios")
}

// withManifest returns a test plugin's module with its manifest changed.
func withManifest(tb testing.TB, name string, edit func(*manifest.Manifest)) []byte {
	tb.Helper()
	mod := testModule(tb, name)
	m, err := manifest.Read(mod)
	if err != nil {
		tb.Fatal(err)
	}
	edit(m)
	out, err := manifest.Embed(mod, m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func callAs(tb testing.TB, p *wasm.Plugin, tenant, tool string, args any) wasm.Result {
	tb.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	return p.Call(context.Background(), tool, raw, &wasm.CallOptions{Tenant: tenant})
}

// A manifest's allowedPaths are requests: snoop asks for "/" and
// "/proc/self" and gets neither; only an operator's mount is mounted.
func hostileMountsComeOnlyFromTheOperator(t testing.TB) int {
	shared := t.TempDir()
	if err := os.WriteFile(filepath.Join(shared, "note.txt"), []byte("granted"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		return c.WithMount("snoop", wasm.Mount{HostPath: shared, GuestPath: "/shared"})
	})
	p := load(t, h, "snoop")
	for _, path := range []string{"/host/etc/hostname", "/host", "/self/environ", "/self/cmdline", "/etc/passwd", "/"} {
		r := call(t, p, "readPath", map[string]any{"path": path})
		if r.OK && r.Text != "shared" {
			t.Errorf("readPath %s: got %q, want an error (nothing but /shared is mounted)", path, r.Text)
		}
	}
	if r := call(t, p, "readPath", map[string]any{"path": "/shared/note.txt"}); !r.OK || r.Text != "granted" {
		t.Fatalf("the granted mount: %+v", r)
	}
	if r := call(t, p, "writePath", map[string]any{"path": "/shared/new.txt", "text": "x"}); !r.OK {
		t.Fatalf("writing into a writable grant: %+v", r)
	}
	got := p.Mounts()
	if len(got) != 1 || got[0].GuestPath != "/shared" {
		t.Fatalf("Mounts() = %+v", got)
	}
	return 8
}

func hostileMountGrantsThatExposeTheHost(t testing.TB) int {
	data := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(filepath.Join(data, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "innocent")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	cases := []struct{ name, host string }{
		{"the data directory", data},
		{"inside the data directory", filepath.Join(data, "blobs")},
		{"a parent of the data directory", filepath.Dir(data)},
		{"a link to the data directory", link},
		{"the compile cache", cache},
		{"the root", "/"},
		{"the process's own view", "/proc/self"},
		{"/proc", "/proc"},
		{"/etc", "/etc"},
		{"a relative path", "relative/dir"},
		{"a missing directory", filepath.Join(data, "..", "missing-"+t.Name())},
		{"a file", file},
	}
	os.MkdirAll(cache, 0o755)
	for _, tc := range cases {
		{
			h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
				return c.WithCompilationCacheDir(cache).WithProtectedPaths(data).
					WithMount("snoop", wasm.Mount{HostPath: tc.host, GuestPath: "/x"})
			})
			_, err := h.Load(context.Background(), wasm.Source{Origin: "snoop", Module: testModule(t, "snoop")})
			if !errors.Is(err, wasm.ErrMountRefused) {
				t.Fatalf("Load with a mount of %s: err = %v, want ErrMountRefused", tc.host, err)
			}
		}
	}
	return len(cases)
}

// A read-only tool sees even a writable grant read-only.
func hostileReadOnlyToolAndAGrantedMount(t testing.TB) int {
	dir := t.TempDir()
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		return c.WithMount("snoop", wasm.Mount{HostPath: dir, GuestPath: "/d", ReadOnly: true})
	})
	p := load(t, h, "snoop")
	if r := call(t, p, "writePath", map[string]any{"path": "/d/x", "text": "x"}); r.OK {
		t.Fatalf("wrote into a read-only grant: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("the file exists on the host")
	}
	return 1
}

// A guest with a writable mount cannot make a link that leads out of it,
// and links left in the directory that lead out are refused, for writing
// and read-only tools alike; links inside it work.
func hostileMountIsAJail(t testing.TB) int {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "f.txt"), []byte("inside"), 0o644)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644)
	for name, target := range map[string]string{"out": outside, "outfile": filepath.Join(outside, "secret"),
		"rel": "../" + filepath.Base(outside) + "/secret", "in": "sub", "dangling": filepath.Join(outside, "new")} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, ro := range []bool{false, true} {
		h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
			return c.WithMount("snoop", wasm.Mount{HostPath: dir, GuestPath: "/d", ReadOnly: ro})
		})
		p := load(t, h, "snoop")
		for _, c := range []struct {
			tool string
			args map[string]any
			ok   bool
		}{
			{"link", map[string]any{"path": "../../../../../../../etc/hostname", "text": "/d/x"}, false},
			{"link", map[string]any{"path": "/etc/hostname", "text": "/d/y"}, false},
			{"readPath", map[string]any{"path": "/d/outfile"}, false},
			{"readPath", map[string]any{"path": "/d/rel"}, false},
			{"readPath", map[string]any{"path": "/d/out/secret"}, false},
			{"writePath", map[string]any{"path": "/d/out/planted", "text": "x"}, false},
			{"writePath", map[string]any{"path": "/d/dangling", "text": "x"}, false},
			{"readPath", map[string]any{"path": "/d/in/f.txt"}, true},
			{"readPath", map[string]any{"path": "/d/sub/f.txt"}, true},
		} {
			r := call(t, p, c.tool, c.args)
			if r.OK != c.ok || (r.OK && r.Text != "inside") && c.tool == "readPath" {
				t.Errorf("read-only %v: %s %v: %+v (text %q), want ok=%v", ro, c.tool, c.args, r.Error, r.Text, c.ok)
			}
			n++
		}
	}
	for _, f := range []string{"planted", "new"} {
		if _, err := os.Stat(filepath.Join(outside, f)); err == nil {
			t.Fatalf("the guest wrote %s outside its mount", f)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("the guest made a link")
	}
	return n
}

func hostileLimitsAboveTheCeilings(t testing.TB) int {
	cases := []struct {
		name  string
		edit  func(*manifest.Limits)
		field string
	}{
		{"memory", func(l *manifest.Limits) { l.MemoryMiB = 4096 }, "memoryMiB"},
		{"timeout", func(l *manifest.Limits) { l.TimeoutMs = int(time.Hour.Milliseconds()) }, "timeoutMs"},
		{"output", func(l *manifest.Limits) { l.MaxOutputBytes = 1 << 40 }, "maxOutputBytes"},
		{"http", func(l *manifest.Limits) { l.MaxHTTPResponseBytes = 1 << 40 }, "maxHttpResponseBytes"},
	}
	for _, tc := range cases {
		{
			mod := withManifest(t, "echo", func(m *manifest.Manifest) { tc.edit(&m.Limits) })
			h := newHost(t, wasm.EgressOptions{}, nil)
			_, err := h.Load(context.Background(), wasm.Source{Origin: "echo", Module: mod})
			if !errors.Is(err, wasm.ErrOverCeiling) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Load: err = %v, want ErrOverCeiling naming %s", err, tc.field)
			}
			// The operator may raise the ceiling for this plugin.
			h2 := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
				return c.WithPluginGrant("echo", wasm.Grant{Ceilings: wasm.Ceilings{MemoryMiB: 4096, Timeout: time.Hour, MaxOutputBytes: 1 << 41, MaxHTTPResponseBytes: 1 << 41}})
			})
			if _, err := h2.Load(context.Background(), wasm.Source{Origin: "echo", Module: mod}); err != nil {
				t.Fatalf("Load with a raised ceiling: %v", err)
			}
		}
	}
	return 2 * len(cases)
}

// heapGrowth runs f and returns how much the host's heap grew, at most.
func heapGrowth(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	f()
	close(done)
	<-sampled // peak is the sampler's until it has stopped
	runtime.ReadMemStats(&after)
	peak = max(peak, after.HeapAlloc)
	if peak < before.HeapAlloc {
		return 0
	}
	return peak - before.HeapAlloc
}

// Sizes a guest announces reach no allocation before they are checked: a
// frame header of 1 TiB, or one just under a high output limit, and an
// Extism alloc of 1 TiB cost the host next to nothing.
func hostileAnnouncedSizes(t testing.TB) int {
	mod := withManifest(t, "snoop", func(m *manifest.Manifest) { m.Limits.MaxOutputBytes = wasm.DefaultCeilings.MaxOutputBytes })
	h := newHost(t, wasm.EgressOptions{}, nil)
	p, err := h.Load(context.Background(), wasm.Source{Origin: "snoop", Module: mod})
	if err != nil {
		t.Fatal(err)
	}
	call(t, p, "remember", map[string]any{"text": "warm"}) // the instance's own start-up is not counted
	cases := []struct {
		name, tool string
		size       int64
		code       string
	}{
		{"frame of 1 TiB", "frameLie", 1 << 40, wasm.CodeOutputTooLarge},
		{"frame just under the output limit", "frameLie", wasm.DefaultCeilings.MaxOutputBytes - 1, wasm.CodeTrap},
		{"alloc of 1 TiB", "kernelAlloc", 1 << 40, wasm.CodeOutOfMemory},
	}
	// The heap is the whole process's: other tests' work shows in one
	// measurement, never in all three, while an allocation of the announced
	// size (128 MiB or more) would show in every one.
	const attempts, limit = 3, 64 << 20
	for _, tc := range cases {
		least := uint64(math.MaxUint64)
		for range attempts {
			var r wasm.Result
			grew := heapGrowth(func() { r = call(t, p, tc.tool, map[string]any{"size": tc.size}) })
			if r.OK || r.Error.Code != tc.code {
				t.Fatalf("%s: %s: %+v, want %s", tc.name, tc.tool, r, tc.code)
			}
			least = min(least, grew)
		}
		if least > limit {
			t.Fatalf("%s: the host's heap grew by at least %d MiB in each of %d calls", tc.name, least>>20, attempts)
		}
	}
	return len(cases)
}

func hostileGoInitThatNeverEnds(t testing.TB) int {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithInitTimeout(300 * time.Millisecond) })
	loop := load(t, h, "initloop")
	echo := load(t, h, "echo")
	err := h.Warm(context.Background())
	if err == nil || !strings.Contains(err.Error(), "initloop") {
		t.Fatalf("Warm: %v, want initloop's failure", err)
	}
	if r := call(t, loop, "never", map[string]any{}); r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, "initialise") {
		t.Fatalf("initloop: %+v", r)
	}
	// The host goes on with the others.
	if r := call(t, echo, "echo", map[string]any{"text": "still here"}); !r.OK {
		t.Fatalf("echo after initloop: %+v", r)
	}
	return 1
}

// Nothing one tenant's call leaves in an instance or a variable reaches
// another tenant's call.
func hostileTenantState(t testing.TB) int {
	for _, size := range []int{1, 4} {
		{
			h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithPoolSize(size) })
			p := load(t, h, "snoop")
			if r := callAs(t, p, "tenant-a", "remember", map[string]any{"text": "secret of A"}); !r.OK {
				t.Fatal(r.Error)
			}
			if r := callAs(t, p, "tenant-b", "remember", map[string]any{"text": "B"}); !r.OK || r.Text != "" {
				t.Fatalf("tenant B saw %q (%+v)", r.Text, r.Error)
			}
			if r := callAs(t, p, "tenant-a", "setVar", map[string]any{"key": "k", "value": "A's value"}); !r.OK {
				t.Fatal(r.Error)
			}
			if r := callAs(t, p, "tenant-b", "getVar", map[string]any{"key": "k"}); r.OK {
				t.Fatalf("tenant B read A's variable: %q", r.Text)
			}
			if r := callAs(t, p, "tenant-a", "getVar", map[string]any{"key": "k"}); !r.OK || r.Text != "A's value" {
				t.Fatalf("tenant A lost its variable: %+v", r)
			}
		}
	}
	return 4
}

// Waiting for an instance counts against the call's deadline, ends with the
// caller's context, and a tenant with many calls waiting cannot starve
// another.
func hostileWaiting(t testing.TB) int {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithPoolSize(1) })
	// The limit leaves the holders' 1.5 s sleeps room on a slow machine
	// (under the race detector one went over a 2 s limit); the deadlines
	// tested are the callers' own.
	mod := withManifest(t, "snoop", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 10000 })
	p, err := h.Load(context.Background(), wasm.Source{Origin: "snoop", Module: mod})
	if err != nil {
		t.Fatal(err)
	}
	callAs(t, p, "a", "remember", map[string]any{"text": "warm"})

	// Tenant A occupies the only instance and R the one kept for tenants
	// holding none; queued calls outlast their deadline and say so; a
	// cancelled waiter ends at once.
	hold := make(chan wasm.Result, 2)
	go func() { hold <- callAs(t, p, "a", "sleep", map[string]any{"ms": 1500}) }()
	waitBusy(t, p)
	go func() { hold <- callAs(t, p, "r", "sleep", map[string]any{"ms": 1500}) }()
	waitLive(t, p, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan wasm.Result, 1)
	go func() { cancelled <- p.Call(ctx, "sleep", json.RawMessage(`{"ms":1}`), &wasm.CallOptions{Tenant: "c"}) }()
	waitWaiting(t, p, 1)
	cancel()
	if r := <-cancelled; r.OK || r.Error.Code != wasm.CodeCanceled {
		t.Fatalf("cancelled waiter: %+v", r)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if r := p.Call(short, "sleep", json.RawMessage(`{"ms":1}`), &wasm.CallOptions{Tenant: "a"}); r.OK || r.Error.Code != wasm.CodeTimeout {
		t.Fatalf("a waiter past its deadline: %+v", r)
	}
	for i := 0; i < 2; i++ {
		if r := <-hold; !r.OK {
			t.Fatalf("holder: %+v", r)
		}
	}
	return 3 + hostileWaitingShare(t)
}

// hostileWaitingShare: a tenant whose long calls hold every instance of a
// shared plugin, with more queued, does not make another tenant's first
// call wait for one of them (it runs in a slot kept for tenants holding
// none); a third tenant arriving while that slot is taken is served next,
// before the queue of the tenant holding everything. Nothing here depends
// on timing: the holders run until the test ends them.
func hostileWaitingShare(t testing.TB) int {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithPoolSize(2) })
	mod := withManifest(t, "snoop", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 })
	p, err := h.Load(context.Background(), wasm.Source{Origin: "snoop", Module: mod})
	if err != nil {
		t.Fatal(err)
	}
	long := map[string]any{"ms": 600000}
	holdA, stopA := context.WithCancel(context.Background())
	defer stopA()
	aDone := make(chan wasm.Result, 5)
	for i := 0; i < 5; i++ { // two run, three wait
		go func() { aDone <- p.Call(holdA, "sleep", mustJSON(t, long), &wasm.CallOptions{Tenant: "a"}) }()
	}
	waitWaiting(t, p, 3)
	if r := callAs(t, p, "b", "sleep", map[string]any{"ms": 1}); !r.OK {
		t.Fatalf("tenant B's call while A holds every instance: %+v", r)
	}
	// B holds the kept slot; C waits, and is served when B's call ends,
	// although A's calls waited longer.
	holdB, stopB := context.WithCancel(context.Background())
	defer stopB()
	bDone := make(chan wasm.Result, 1)
	go func() { bDone <- p.Call(holdB, "sleep", mustJSON(t, long), &wasm.CallOptions{Tenant: "b"}) }()
	waitLive(t, p, 3)
	cDone := make(chan wasm.Result, 1)
	go func() { cDone <- callAs(t, p, "c", "sleep", map[string]any{"ms": 1}) }()
	waitWaiting(t, p, 4)
	stopB()
	if r := <-bDone; r.OK {
		t.Fatalf("B's stopped call: %+v", r)
	}
	if r := <-cDone; !r.OK {
		t.Fatalf("tenant C's call: %+v", r)
	}
	select {
	case r := <-aDone:
		t.Fatalf("one of A's calls ended before the test stopped them: %+v", r)
	default:
	}
	stopA()
	for i := 0; i < 5; i++ {
		<-aDone
	}
	return 2
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// waitLive waits until the plugin has n instances alive or being made.
func waitLive(tb testing.TB, p *wasm.Plugin, n int) {
	tb.Helper()
	for p.LiveForTest() < n {
		time.Sleep(time.Millisecond)
	}
}

// waitBusy waits until the plugin has a call running (no sleep-based guess).
func waitBusy(tb testing.TB, p *wasm.Plugin) {
	tb.Helper()
	for !p.BusyForTest() {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func waitWaiting(tb testing.TB, p *wasm.Plugin, n int) {
	tb.Helper()
	for p.WaitingForTest() < n {
		time.Sleep(time.Millisecond)
	}
}
