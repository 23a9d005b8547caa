package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// withVersion returns module with its manifest's version (and, when caps
// is not nil, its capabilities) changed: another build of the plugin.
func withVersion(tb testing.TB, module []byte, version string, caps []string) []byte {
	tb.Helper()
	m, err := manifest.Read(module)
	if err != nil {
		tb.Fatal(err)
	}
	m.Version = version
	if caps != nil {
		m.Capabilities = caps
	}
	out, err := manifest.Embed(module, m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// blockingServer answers /block when released and /fast at once; each
// request to /block is announced on arrived.
func blockingServer(tb testing.TB) (srv *httptest.Server, arrived chan struct{}, release chan struct{}) {
	arrived, release = make(chan struct{}, 8), make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Write([]byte(strings.TrimPrefix(r.URL.Path, "/")))
	}))
	tb.Cleanup(srv.Close)
	return srv, arrived, release
}

func lifecycleHost(tb testing.TB, srv *httptest.Server, tweak func(wasm.Config) wasm.Config) (*wasm.Host, func(path string) json.RawMessage) {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	h := newHost(tb, wasm.EgressOptions{AllowPrivateHosts: []string{"allowed.test:" + port}, Resolver: fakeDNS{"allowed.test": "127.0.0.1"}}, tweak)
	return h, func(path string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"url": "http://allowed.test:" + port + path})
		return b
	}
}

// TestUpgradeWhileACallRuns: a call that started on version 1 ends on it
// after the upgrade, while the next call runs version 2; the old version
// closes after its last call; pins reach kept versions only; a removal
// takes the tools away at once.
func TestUpgradeWhileACallRuns(t *testing.T) {
	ctx := context.Background()
	srv, arrived, release := blockingServer(t)
	h, url := lifecycleHost(t, srv, nil)
	v1 := testModule(t, "netclient")
	p1, err := h.Install(ctx, wasm.Source{Origin: "v1", Module: v1})
	if err != nil {
		t.Fatal(err)
	}
	old := make(chan wasm.Result, 1)
	go func() { old <- h.Call(ctx, "fetch", url("/block"), nil) }()
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("the first call never reached the server")
	}
	if n := p1.Running(); n != 1 {
		t.Fatalf("version 1 runs %d calls, want 1", n)
	}
	p2, replaced, err := h.Upgrade(ctx, wasm.Source{Origin: "v2", Module: withVersion(t, v1, "2.0.0", nil)}, wasm.UpgradeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replaced != p1 || !p1.Retired() || p1.Running() != 1 {
		t.Fatalf("upgrade: replaced %v (want version 1), retired %v, running %d", replaced.Manifest().Version, p1.Retired(), p1.Running())
	}
	if cur, _ := h.Plugin("netclient"); cur != p2 || cur.Manifest().Version != "2.0.0" {
		t.Fatalf("the loaded plugin is %s, want 2.0.0", cur.Manifest().Version)
	}
	if r := h.Call(ctx, "fetch", url("/fast"), nil); !r.OK || r.Text != "200 fast" {
		t.Fatalf("a call after the upgrade: %+v", r)
	}
	close(release)
	if r := <-old; !r.OK || r.Text != "200 block" {
		t.Fatalf("the call that started on version 1 did not end well: %+v", r)
	}
	if n := p1.Running(); n != 0 {
		t.Fatalf("version 1 still runs %d calls", n)
	}
	// Closed now: a caller still holding it is told why.
	if r := p1.Call(ctx, "fetch", url("/fast"), nil); r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, "upgraded or removed") {
		t.Fatalf("a call on the retired version: %+v", r.Error)
	}
	if r := h.Call(ctx, "fetch@1.0.0", url("/fast"), nil); r.OK || r.Error.Code != wasm.CodeUnknownTool {
		t.Fatalf("a pin to a retired version: %+v", r)
	}
	// Kept: a pin reaches it beside the new version.
	if _, _, err := h.Upgrade(ctx, wasm.Source{Origin: "v3", Module: withVersion(t, v1, "3.0.0", nil)}, wasm.UpgradeOptions{Keep: true}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"fetch@2.0.0", "fetch@3.0.0", "fetch"} {
		if r := h.Call(ctx, tool, url("/fast"), nil); !r.OK {
			t.Errorf("%s: %+v", tool, r.Error)
		}
	}
	var versioned []string
	for _, ti := range h.VersionedTools() {
		versioned = append(versioned, ti.Name)
	}
	if got := strings.Join(versioned, " "); got != "fetch@2.0.0 fetch@3.0.0 send@2.0.0 send@3.0.0" {
		t.Errorf("versioned tools: %s", got)
	}
	if _, err := h.Remove("netclient", "3.0.0"); err == nil {
		t.Error("removing the loaded version by its number was accepted")
	}
	if _, err := h.Remove("netclient", "2.0.0"); err != nil {
		t.Fatal(err)
	}
	if r := h.Call(ctx, "fetch@2.0.0", url("/fast"), nil); r.OK {
		t.Error("a removed kept version still answers")
	}
	gone, err := h.Remove("netclient", "")
	if err != nil || len(gone) != 1 {
		t.Fatalf("remove: %v %v", gone, err)
	}
	if r := h.Call(ctx, "fetch", url("/fast"), nil); r.OK || r.Error.Code != wasm.CodeUnknownTool {
		t.Fatalf("a removed tool: %+v", r)
	}
	if _, ok := h.Plugin("netclient"); ok || len(h.Tools()) != 0 {
		t.Fatalf("the removed plugin is still listed: %v", h.Tools())
	}
}

// TestLiveInstallsAreCheckedLikeStartUp: what a start-up refuses, an
// install or upgrade refuses too, and what runs keeps running.
func TestLiveInstallsAreCheckedLikeStartUp(t *testing.T) {
	ctx := context.Background()
	srv, _, _ := blockingServer(t)
	// The operator grants netclient http and progress, nothing else.
	h, url := lifecycleHost(t, srv, func(c wasm.Config) wasm.Config {
		return c.WithGrantDeclared(false).WithGrant("netclient", "http", "progress")
	})
	v1 := testModule(t, "netclient")
	if _, err := h.Install(ctx, wasm.Source{Origin: "v1", Module: v1}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		run    func() error
		reason string
	}{
		{"an upgrade cannot gain a capability the operator did not grant", func() error {
			_, _, err := h.Upgrade(ctx, wasm.Source{Origin: "v2", Module: withVersion(t, v1, "2.0.0", []string{"http", "progress", "input"})}, wasm.UpgradeOptions{})
			return err
		}, `capability "input" is declared but not granted`},
		{"the same module twice is not an upgrade", func() error {
			_, _, err := h.Upgrade(ctx, wasm.Source{Origin: "v1 again", Module: v1}, wasm.UpgradeOptions{})
			return err
		}, "already loaded"},
		{"a new build under a loaded version number", func() error {
			m := withVersion(t, withVersion(t, v1, "9.9.9", nil), "1.0.0", []string{"progress", "http"})
			_, _, err := h.Upgrade(ctx, wasm.Source{Origin: "v1 rebuilt", Module: m}, wasm.UpgradeOptions{})
			return err
		}, "version 1.0.0 is loaded already"},
		{"a second install of a loaded name", func() error {
			_, err := h.Install(ctx, wasm.Source{Origin: "twice", Module: withVersion(t, v1, "4.0.0", nil)})
			return err
		}, "already loaded"},
		{"an upgrade of a plugin that is not loaded", func() error {
			_, _, err := h.Upgrade(ctx, wasm.Source{Origin: "echo", Module: testModule(t, "echo")}, wasm.UpgradeOptions{})
			return err
		}, "no such plugin"},
		{"a manifest that lies about its tools is refused before its tools appear", func() error {
			_, err := h.Install(ctx, wasm.Source{Origin: "liar", Module: testModule(t, "liar")})
			return err
		}, "manifest does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.reason)
			}
		})
	}
	if _, ok := h.Plugin("liar"); ok {
		t.Error("the lying plugin was registered")
	}
	if cur, _ := h.Plugin("netclient"); cur.Manifest().Version != "1.0.0" {
		t.Errorf("netclient is %s after refused upgrades", cur.Manifest().Version)
	}
	if r := h.Call(ctx, "fetch", url("/fast"), nil); !r.OK {
		t.Errorf("version 1 stopped serving: %+v", r.Error)
	}

	// Without trusted keys or -allow-unsigned, an unsigned install is
	// refused as at start-up.
	strict := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithAllowUnsigned(false) })
	if _, err := strict.Install(ctx, wasm.Source{Origin: "echo", Module: testModule(t, "echo")}); !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), "signature") {
		t.Errorf("an unsigned install on a host that wants signatures: %v", err)
	}
}
