package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/signature"
)

func TestEcho(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "echo")
	r := call(t, p, "echo", map[string]any{"text": "grüezi"})
	if !r.OK || r.Text != "grüezi" {
		t.Fatalf("echo: %+v", r)
	}
	r = call(t, p, "echoJSON", map[string]any{"text": "a\"b"})
	if !r.OK || string(r.Data) != `{"text":"a\"b"}` {
		t.Fatalf("echoJSON: %+v (%s)", r, r.Data)
	}
	if r.Stats.MemoryBytes == 0 || r.Stats.Duration <= 0 {
		t.Fatalf("stats not recorded: %+v", r.Stats)
	}
	// Calls reuse pooled instances.
	if r2 := call(t, p, "echo", map[string]any{"text": "x"}); !r2.Stats.Reused {
		t.Fatalf("second call did not reuse an instance: %+v", r2.Stats)
	}
}

func TestArgumentsValidatedBeforeTheGuestRuns(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "echo")
	cases := []struct {
		name, tool, args, code, field string
	}{
		{"wrong type", "echo", `{"text": 5}`, wasm.CodeInvalidArguments, "/text"},
		{"missing field", "echo", `{}`, wasm.CodeInvalidArguments, "text"},
		{"unknown field", "echo", `{"text":"a","extra":1}`, wasm.CodeInvalidArguments, "extra"},
		{"malformed JSON", "echo", `{"text":`, wasm.CodeInvalidArguments, "JSON"},
		{"not an object", "echo", `["text"]`, wasm.CodeInvalidArguments, ""},
		{"hallucinated tool", "ecko", `{}`, wasm.CodeUnknownTool, "ecko"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Call(context.Background(), tc.tool, json.RawMessage(tc.args), nil)
			if r.OK || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.field) {
				t.Fatalf("got %+v, want code %s naming %q", r.Error, tc.code, tc.field)
			}
			if r.Stats.MemoryBytes != 0 {
				t.Fatal("the guest ran for invalid arguments")
			}
		})
	}
	if r := h.Call(context.Background(), "nosuchtool", []byte(`{}`), nil); r.Error == nil || r.Error.Code != wasm.CodeUnknownTool {
		t.Fatalf("host-level unknown tool: %+v", r)
	}
}

// TestHostilePluginsAreContained runs every hostile plugin against one host and
// checks after each that the host still serves normal calls.
func TestHostilePluginsAreContained(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	echo := load(t, h, "echo")
	healthy := func() {
		t.Helper()
		if r := call(t, echo, "echo", map[string]any{"text": "still here"}); !r.OK || r.Text != "still here" {
			t.Fatalf("host no longer serves normal calls: %+v", r)
		}
	}
	healthy()

	t.Run("endless loop stops within timeout+100ms", func(t *testing.T) {
		p := load(t, h, "loop")
		// Warm the pool so the measured call is the loop alone, not compilation.
		if err := h.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		timeout := 300 * time.Millisecond // the plugin's manifest limit
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			r := call(t, p, "spin", map[string]any{})
			took := time.Since(t0)
			if r.OK || r.Error.Code != wasm.CodeTimeout {
				t.Fatalf("spin: %+v", r.Error)
			}
			within(t, took, timeout+stopBound, "stopping the endless loop")
		}
	})
	healthy()

	t.Run("fallback mode stops within timeout+100ms too", func(t *testing.T) {
		h2 := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithCloseOnDoneOnly() })
		p := load(t, h2, "loop")
		if err := h2.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			t0 := time.Now()
			r := call(t, p, "spin", map[string]any{})
			if r.OK || r.Error.Code != wasm.CodeTimeout {
				t.Fatalf("spin: %+v", r.Error)
			}
			within(t, time.Since(t0), 300*time.Millisecond+stopBound, "stopping the endless loop in close-on-done mode")
		}
	})

	t.Run("a sleeping guest stops at cancellation, long before its sleep ends, in both modes", func(t *testing.T) {
		for _, mode := range []struct {
			name string
			h    *wasm.Host
		}{
			{"instrumented", h},
			{"close-on-done", newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithCloseOnDoneOnly() })},
		} {
			p := load(t, mode.h, "notebook")
			if err := mode.h.Warm(context.Background()); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
				t0 := time.Now()
				r := p.Call(ctx, "lookup", json.RawMessage(`{"topic":"t","sleepMs":5000}`), nil)
				if r.OK || r.Error.Code != wasm.CodeCanceled {
					t.Fatalf("%s: sleeping lookup: %+v", mode.name, r)
				}
				within(t, time.Since(t0), 100*time.Millisecond+stopBound, mode.name+": stopping a guest asleep for 5 s")
			}
			if r := p.Call(context.Background(), "lookup", json.RawMessage(`{"topic":"t","sleepMs":10}`), nil); !r.OK {
				t.Fatalf("%s: after stops: %+v", mode.name, r)
			}
		}
	})

	t.Run("caller cancellation stops the guest", func(t *testing.T) {
		p, _ := h.Plugin("loop")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		t0 := time.Now()
		r := p.Call(ctx, "spin", json.RawMessage(`{}`), nil)
		if r.OK || r.Error.Code != wasm.CodeCanceled {
			t.Fatalf("spin: %+v", r.Error)
		}
		within(t, time.Since(t0), 50*time.Millisecond+stopBound, "stopping after cancel")
	})

	t.Run("memory bomb traps at the limit", func(t *testing.T) {
		p := load(t, h, "membomb")
		r := call(t, p, "allocate", map[string]any{})
		if r.OK || r.Error.Code != wasm.CodeOutOfMemory {
			t.Fatalf("allocate: %+v", r.Error)
		}
		if limit := uint64(64 << 20); r.Stats.MemoryBytes > limit {
			t.Fatalf("guest memory %d exceeds the declared limit %d", r.Stats.MemoryBytes, limit)
		}
	})
	healthy()

	t.Run("handler panic is an error result", func(t *testing.T) {
		p := load(t, h, "crash")
		r := call(t, p, "panic", map[string]any{})
		if r.OK || r.Error.Code != wasm.CodePanic || !strings.Contains(r.Error.Message, "nil map") {
			t.Fatalf("panic: %+v", r.Error)
		}
		r = call(t, p, "fatal", map[string]any{})
		if r.OK || r.Error.Code != wasm.CodePanic || !strings.Contains(r.Error.Message, "unlock of unlocked mutex") {
			t.Fatalf("fatal: %+v", r.Error)
		}
	})
	healthy()

	t.Run("huge output is refused", func(t *testing.T) {
		p := load(t, h, "hugeoutput")
		r := call(t, p, "flood", map[string]any{})
		if r.OK || r.Error.Code != wasm.CodeOutputTooLarge {
			t.Fatalf("flood: %+v", r.Error)
		}
	})
	healthy()

	t.Run("undeclared capability is refused at load", func(t *testing.T) {
		_, err := h.Load(context.Background(), wasm.Source{Origin: "undeclaredcap", Module: testModule(t, "undeclaredcap")})
		if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), "agenthost:progress.report") {
			t.Fatalf("Load = %v, want a refusal naming the import", err)
		}
	})

	t.Run("lying manifest is refused", func(t *testing.T) {
		p := load(t, h, "liar")
		r := call(t, p, "wipe", map[string]any{})
		if r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, "readOnly") {
			t.Fatalf("wipe: %+v", r.Error)
		}
		if err := h.Warm(context.Background()); !errors.Is(err, wasm.ErrManifestMismatch) {
			t.Fatalf("Warm = %v, want ErrManifestMismatch", err)
		}
	})
	healthy()
}

func TestUnknownCapabilityAndGrants(t *testing.T) {
	module := testModule(t, "netclient")
	// Not granted: a third-party plugin gets only what the operator grants.
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithGrantDeclared(false).WithGrant("netclient", "progress") })
	_, err := h.Load(context.Background(), wasm.Source{Origin: "netclient", Module: module})
	if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), `"http"`) {
		t.Fatalf("Load without http grant = %v", err)
	}
	// Granted by name: loads.
	h = newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		return c.WithGrantDeclared(false).WithGrant("netclient", "http", "progress")
	})
	if _, err := h.Load(context.Background(), wasm.Source{Origin: "netclient", Module: module}); err != nil {
		t.Fatalf("Load with grants: %v", err)
	}
	// A capability the host does not know.
	reg, _ := wasm.NewRegistry(wasm.ProgressCapability())
	h2, _ := wasm.New(context.Background(), wasm.NewConfig().WithCapabilities(reg).WithGrantDeclared(true).WithAllowUnsigned(true))
	defer h2.Close(context.Background())
	if _, err := h2.Load(context.Background(), wasm.Source{Origin: "netclient", Module: module}); err == nil || !strings.Contains(err.Error(), `unknown capability "http"`) {
		t.Fatalf("Load with unknown capability = %v", err)
	}
}

func TestUnsignedThirdPartyRefusedByDefault(t *testing.T) {
	h, err := wasm.New(context.Background(), wasm.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	_, err = h.Load(context.Background(), wasm.Source{Origin: "echo", Module: testModule(t, "echo")})
	if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("Load(unsigned) = %v", err)
	}
	if _, err := h.Load(context.Background(), wasm.Source{Origin: "echo", Module: testModule(t, "echo"), Builtin: true}); err != nil {
		t.Fatalf("built-in plugins need no signature: %v", err)
	}
}

// TestEgress covers what a plugin's HTTP may and may not do, through a real
// server on 127.0.0.1 that the operator allows by name.
func TestEgress(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/redirect-out":
			http.Redirect(w, r, "http://evil.test:"+r.URL.Port()+"/", http.StatusFound)
		case "/redirect-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+portOf(r)+"/hello", http.StatusFound)
		case "/redirect-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			fmt.Fprintf(w, "hello %s", r.Method)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	dns := fakeDNS{"allowed.test": "127.0.0.1", "api.allowed.test": "127.0.0.1", "evil.test": "127.0.0.1"}
	h := newHost(t, wasm.EgressOptions{AllowPrivateHosts: []string{"allowed.test:" + port, "api.allowed.test:" + port}, Resolver: dns}, nil)
	p := load(t, h, "netclient")
	at := func(host, path string) string { return "http://" + host + ":" + port + path }

	cases := []struct {
		name, tool, method, url string
		ok                      bool
		want                    string // text on success, message fragment on failure
	}{
		{"read-only GET", "fetch", "GET", at("allowed.test", "/hello"), true, "200 hello GET"},
		{"read-only HEAD", "fetch", "HEAD", at("allowed.test", "/hello"), true, "200"},
		{"read-only POST refused", "fetch", "POST", at("allowed.test", "/hello"), false, "method POST"},
		{"read-only DELETE refused", "fetch", "DELETE", at("allowed.test", "/hello"), false, "method DELETE"},
		{"writer POST allowed", "send", "POST", at("allowed.test", "/hello"), true, "200 hello POST"},
		// The denial names the host and the grant that would allow it.
		{"forbidden host", "fetch", "GET", at("evil.test", "/"), false, `plugins.netclient.hosts: ["evil.test"]`},
		{"redirect outside allow-list", "fetch", "GET", at("allowed.test", "/redirect-out"), false, `"evil.test"`},
		{"redirect to 127.0.0.1", "fetch", "GET", at("api.allowed.test", "/redirect-loopback"), false, "127.0.0.1"},
		{"redirect to metadata", "fetch", "GET", at("allowed.test", "/redirect-metadata"), false, "169.254.169.254"},
		{"raw loopback address", "send", "GET", at("127.0.0.1", "/hello"), false, "127.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, p, tc.tool, map[string]any{"url": tc.url, "method": tc.method})
			if tc.ok {
				if !r.OK || !strings.HasPrefix(r.Text, tc.want) {
					t.Fatalf("got %+v, want text %q", r, tc.want)
				}
				return
			}
			if r.OK || r.Error.Code != wasm.CodeHTTPDenied || !strings.Contains(r.Error.Message, tc.want) {
				t.Fatalf("got %+v / %+v, want http_denied naming %q", r.Text, r.Error, tc.want)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, g := range got {
		if strings.HasPrefix(g, "POST") && !strings.Contains(g, "allowed.test") {
			t.Errorf("a refused request reached the server: %s", g)
		}
	}
	if n := strings.Count(strings.Join(got, "\n"), "POST"); n != 1 {
		t.Errorf("server saw %d POSTs, want exactly the writer's one: %v", n, got)
	}
}

// An operator lets a plugin reach a host its manifest does not list
// (Grant.Hosts): the plugin reaches it, and nothing else more.
func TestGrantedHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	dns := fakeDNS{"extra.test": "127.0.0.1", "other.test": "127.0.0.1"}
	h := newHost(t, wasm.EgressOptions{AllowPrivateHosts: []string{"extra.test:" + port, "other.test:" + port}, Resolver: dns},
		func(c wasm.Config) wasm.Config { return c.WithHosts("netclient", "extra.test") })
	p := load(t, h, "netclient")
	if a := p.Assessment(); !slices.Contains(a.Hosts, "extra.test") || !slices.Equal(a.GrantedHosts, []string{"extra.test"}) {
		t.Errorf("assessment hosts %v, granted %v", a.Hosts, a.GrantedHosts)
	}
	if r := call(t, p, "fetch", map[string]any{"url": "http://extra.test:" + port + "/", "method": "GET"}); !r.OK {
		t.Fatalf("the granted host: %+v", r.Error)
	}
	if r := call(t, p, "fetch", map[string]any{"url": "http://other.test:" + port + "/", "method": "GET"}); r.OK || r.Error.Code != wasm.CodeHTTPDenied {
		t.Fatalf("a host granted to nobody: %+v", r)
	}
	bad := wasm.NewConfig().WithHosts("netclient", "http://extra.test/path")
	if a := bad.Assess(p.Manifest(), false); len(a.Problems) == 0 {
		t.Errorf("a malformed granted host is not refused: %+v", a)
	}
}

func TestProgressReports(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	h := newHost(t, wasm.EgressOptions{AllowPrivateHosts: []string{"allowed.test:" + u.Port()}, Resolver: fakeDNS{"allowed.test": "127.0.0.1"}}, nil)
	p := load(t, h, "netclient")
	var reports []wasm.Progress
	r := p.Call(context.Background(), "fetch", json.RawMessage(`{"url":"http://allowed.test:`+u.Port()+`/"}`), &wasm.CallOptions{
		OnProgress: func(pr wasm.Progress) { reports = append(reports, pr) },
	})
	if !r.OK {
		t.Fatal(r.Error)
	}
	if len(reports) != 1 || reports[0].Fraction != 0.1 || !strings.Contains(reports[0].Message, "requesting") || reports[0].Tool != "fetch" {
		t.Fatalf("reports = %+v", reports)
	}
}

// TestManyCallsDoNotLeak runs 10,000 calls and checks goroutines and heap
// return to where they were.
func TestManyCallsDoNotLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "echo")
	ctx := context.Background()
	args := json.RawMessage(`{"text":"0123456789abcdef"}`)
	// run makes n calls on 4 goroutines and returns the distinct guest memory
	// sizes it saw.
	run := func(n int) map[uint64]bool {
		var mu sync.Mutex
		sizes := map[uint64]bool{}
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < n/4; i++ {
					r := p.Call(ctx, "echo", args, nil)
					if !r.OK {
						t.Errorf("call: %+v", r.Error)
						return
					}
					mu.Lock()
					sizes[r.Stats.MemoryBytes] = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return sizes
	}
	// Each pooled guest grows its memory until its own GC settles (Wasm memory
	// never shrinks); warm up until every instance has stopped growing.
	for i := 0; i < 20; i++ {
		before := run(10000)
		after := run(10000)
		if len(before) == 1 && len(after) == 1 && fmt.Sprint(before) == fmt.Sprint(after) {
			break
		}
	}
	g0, h0 := settle()
	run(10000)
	g1, h1 := settle()
	if g1 > g0 {
		t.Errorf("goroutines grew from %d to %d over 10,000 calls", g0, g1)
	}
	// A leak of 100 bytes per call would add 1 MB.
	if h1 > h0+1<<20 {
		t.Errorf("heap grew from %d to %d bytes over 10,000 calls", h0, h1)
	}
	t.Logf("goroutines %d → %d, heap %.1f → %.1f MB", g0, g1, float64(h0)/1e6, float64(h1)/1e6)
}

func settle() (int, uint64) {
	var ms runtime.MemStats
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

func TestManifestReadWithoutRunning(t *testing.T) {
	m, err := manifest.Read(testModule(t, "netclient"))
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasCapability("http") || len(m.Tools) != 2 || m.Limits.AllowedHosts[0] != "allowed.test" {
		t.Fatalf("manifest: %+v", m)
	}
	fetch, _ := m.Tool("fetch")
	send, _ := m.Tool("send")
	if !fetch.ReadOnly || send.ReadOnly {
		t.Fatalf("readOnly flags wrong: fetch %v send %v", fetch.ReadOnly, send.ReadOnly)
	}
	if !strings.Contains(string(fetch.InputSchema), `"enum":["GET","HEAD","POST","PUT","DELETE"]`) {
		t.Fatalf("schema not generated from tags: %s", fetch.InputSchema)
	}
}

func TestSignedThirdPartyPlugins(t *testing.T) {
	pub, priv, _ := signature.GenerateKey()
	_, otherPriv, _ := signature.GenerateKey()
	module := testModule(t, "echo")
	signed, err := signature.Sign(module, priv)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Clone(signed)
	tampered[100] ^= 0x01
	byStranger, _ := signature.Sign(module, otherPriv)
	verifier := signature.Verifier{Trust: signature.NewTrustStore(pub)}

	cases := []struct {
		name          string
		module        []byte
		allowUnsigned bool
		want          error // nil: loads
	}{
		{"signed by a trusted key", signed, false, nil},
		{"tampered", tampered, false, signature.ErrBadSignature},
		{"tampered, unsigned allowed", tampered, true, signature.ErrBadSignature},
		{"unknown key", byStranger, false, signature.ErrUntrustedKey},
		{"unsigned", module, false, signature.ErrUnsigned},
		{"unsigned, explicitly allowed", module, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := wasm.New(context.Background(), wasm.NewConfig().WithVerifier(verifier).WithAllowUnsigned(tc.allowUnsigned).
				WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(context.Background())
			_, err = h.Load(context.Background(), wasm.Source{Origin: tc.name, Module: tc.module})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if !errors.Is(err, wasm.ErrRefused) || !errors.Is(err, tc.want) {
				t.Fatalf("Load = %v, want refusal with %v", err, tc.want)
			}
		})
	}
}

// TestIdleMemoryReturned: an instance that a call grew past the idle
// bound is closed after the call (its memory returned), so the next call
// starts a fresh one; instances within the bound are reused.
func TestIdleMemoryReturned(t *testing.T) {
	const bound = 8 << 20
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithMaxIdleMemory(bound) })
	p := load(t, h, "echo")
	call(t, p, "echo", map[string]any{"text": "warm"})
	small := call(t, p, "echo", map[string]any{"text": "small"})
	if !small.OK || !small.Stats.Reused || small.Stats.MemoryBytes > bound {
		t.Fatalf("a small call: reused %v, memory %d (bound %d)", small.Stats.Reused, small.Stats.MemoryBytes, bound)
	}
	big := call(t, p, "echo", map[string]any{"text": strings.Repeat("x", 6<<20)})
	if !big.OK || big.Stats.MemoryBytes <= bound {
		t.Fatalf("a big call: %v, memory %d, want over %d", big.Error, big.Stats.MemoryBytes, bound)
	}
	if next := call(t, p, "echo", map[string]any{"text": "after"}); !next.OK || next.Stats.Reused {
		t.Fatalf("the call after a big one reused the grown instance (memory %d)", next.Stats.MemoryBytes)
	}
	if again := call(t, p, "echo", map[string]any{"text": "again"}); !again.Stats.Reused {
		t.Fatal("a fresh instance within the bound was not kept")
	}
}
