package main

// The hostile suite through `serve`: the same plugins as the runtime's own
// tests, loaded from -plugins with -allow-unsigned, called over HTTP by two
// tenants. Each scenario asserts the contained outcome: an error code, the
// server alive and answering, the other tenant untouched.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// tenantClient calls the API as one tenant's admin.
type tenantClient struct {
	base, token, workspace string
	tenant                 string // its id
}

func (tc tenantClient) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, tc.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tc.token != "" {
		req.Header.Set("Authorization", "Bearer "+tc.token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type toolResult struct {
	OK    bool   `json:"ok"`
	Text  string `json:"text"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (tc tenantClient) tool(t *testing.T, name string, args any) toolResult {
	t.Helper()
	status, b := tc.do(t, http.MethodPost, "/api/v1/workspaces/"+tc.workspace+"/tools/"+name, args)
	if status != http.StatusOK {
		t.Fatalf("tool %s: HTTP %d %s", name, status, b)
	}
	var r toolResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("tool %s: %v (%s)", name, err, b)
	}
	return r
}

var tokenLine = regexp.MustCompile(`(?m)^workspace (\S+)$[\s\S]*: (ahk_\S+)$`)

// bootstrapTenant makes a tenant with an admin, a workspace offering tools,
// and a token.
func bootstrapTenant(t *testing.T, data, plugins, name string, tools []string) tenantClient {
	t.Helper()
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", name, "-email", "admin@"+name+".example")
	if err != nil {
		t.Fatalf("bootstrap %s: %v\n%s", name, err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	if _, stderr, err := run0(t, "admin", "tools", "-data", data, "-plugins", plugins, "-workspace", m[1], "-set", "core", "-extra", strings.Join(tools, ",")); err != nil {
		t.Fatalf("tools: %v\n%s", err, stderr)
	}
	tn := regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(out)
	if tn == nil {
		t.Fatalf("bootstrap printed no tenant: %q", out)
	}
	return tenantClient{token: m[2], workspace: m[1], tenant: tn[1]}
}

// hostileServer runs `serve` in this process with the named test plugins
// in its -plugins folder, and returns its address once it answers.
// pluginsDir writes modules into a new -plugins folder.
func pluginsDir(t *testing.T, modules map[string][]byte) string {
	t.Helper()
	plugins := t.TempDir()
	for name, mod := range modules {
		if err := os.WriteFile(filepath.Join(plugins, name+".wasm"), mod, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return plugins
}

func hostileServer(t *testing.T, data string, logs *syncBuffer, plugins string, extra ...string) string {
	t.Helper()
	return serveInProcess(t, logs, append([]string{"-data", data, "-plugins", plugins, "-allow-unsigned"}, extra...)...)
}

func TestServeContainsHostilePlugins(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server with hostile plugins")
	}
	data := t.TempDir()
	snoopTools := []string{"remember", "setVar", "getVar", "readPath", "writePath", "sleep", "frameLie", "kernelAlloc", "never", "flood", "starterRun"}
	greedy := withLimits(t, wasmtest.Module(t, "echo"), "greedy", func(l *manifest.Limits) { l.MemoryMiB = 4096 })
	plugins := pluginsDir(t, map[string][]byte{
		"snoop":    wasmtest.Module(t, "snoop"),
		"initloop": wasmtest.Module(t, "initloop"),
		"logflood": wasmtest.Module(t, "logflood"),
		"greedy":   greedy,
		// Hand-written guests: one writes the would-be interrupt flag, one
		// has a start section that never returns.
		"flagger": wasmtest.HandModule(t, "flagger", wasmtest.Forever(asm.I32Const(0), asm.GlobalSet(0)), nil),
		"starter": wasmtest.HandModule(t, "starter", asm.I32Const(0), wasmtest.Spin()),
	})
	a := bootstrapTenant(t, data, plugins, "tenant-a", snoopTools)
	b := bootstrapTenant(t, data, plugins, "tenant-b", snoopTools)
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins, "-pool-size", "2", "-plugin-init-timeout", "2s")
	a.base, b.base = base, base

	t.Run("the plugin list needs a token and shows grants", func(t *testing.T) {
		if code, _ := (tenantClient{base: base}).do(t, http.MethodGet, "/api/v1/plugins", nil); code != http.StatusUnauthorized {
			t.Fatalf("GET /plugins without a token: %d", code)
		}
		_, body := a.do(t, http.MethodGet, "/api/v1/plugins", nil)
		var list []struct {
			Name  string `json:"name"`
			Grant struct {
				Mounts         []any             `json:"mounts"`
				RequestedPaths map[string]string `json:"requestedPaths"`
			} `json:"grant"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.Name == "snoop" && (len(p.Grant.Mounts) != 0 || p.Grant.RequestedPaths["/"] != "/host") {
				t.Fatalf("snoop's grant: %+v", p.Grant)
			}
			if p.Name == "flagger" {
				t.Fatal("flagger, which writes the interrupt flag, is loaded")
			}
		}
		if !strings.Contains(logs.String(), "flagger") {
			t.Fatal("flagger's refusal is not logged")
		}
	})
	t.Run("a start section that never returns fails its plugin only", func(t *testing.T) {
		if r := a.tool(t, "starterRun", map[string]any{}); r.OK || r.Error.Code != "plugin_unavailable" {
			t.Fatalf("starterRun: %+v", r)
		}
	})
	t.Run("a plugin's log flood is capped", func(t *testing.T) {
		before := len(logs.String())
		// Whatever the call's own outcome, the log stays small.
		a.tool(t, "flood", map[string]any{"count": 20000, "size": 1000})
		if grew := len(logs.String()) - before; grew > 1<<20 {
			t.Fatalf("one call wrote %d bytes to the server's log", grew)
		}
	})

	t.Run("manifest paths are not mounted", func(t *testing.T) {
		for _, p := range []string{"/host/etc/hostname", "/self/environ", "/host/" + strings.TrimPrefix(data, "/") + "/agenthost.db"} {
			if r := a.tool(t, "readPath", map[string]any{"path": p}); r.OK {
				t.Errorf("readPath %s succeeded: %.80q", p, r.Text)
			}
		}
	})
	t.Run("a plugin over the ceilings is refused at load", func(t *testing.T) {
		_, body := a.do(t, http.MethodGet, "/api/v1/plugins", nil)
		if bytes.Contains(body, []byte(`"greedy"`)) {
			t.Fatalf("greedy is loaded: %s", body)
		}
		if !bytes.Contains(body, []byte(`"snoop"`)) {
			t.Fatalf("snoop is missing: %s", body)
		}
	})
	t.Run("announced sizes cost nothing", func(t *testing.T) {
		if r := a.tool(t, "frameLie", map[string]any{"size": 1 << 40}); r.OK || r.Error.Code != "output_too_large" {
			t.Fatalf("frameLie: %+v", r)
		}
		if r := a.tool(t, "kernelAlloc", map[string]any{"size": 1 << 40}); r.OK || r.Error.Code != "out_of_memory" {
			t.Fatalf("kernelAlloc: %+v", r)
		}
	})
	t.Run("a start-up that never ends fails its plugin only", func(t *testing.T) {
		if r := a.tool(t, "never", map[string]any{}); r.OK || r.Error.Code != "plugin_unavailable" {
			t.Fatalf("never: %+v", r)
		}
		if r := a.tool(t, "remember", map[string]any{"text": "alive"}); !r.OK {
			t.Fatalf("snoop after initloop: %+v", r)
		}
	})
	t.Run("no state crosses tenants", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			a.tool(t, "remember", map[string]any{"text": "secret of tenant A"})
			if r := b.tool(t, "remember", map[string]any{"text": "B"}); !r.OK || strings.Contains(r.Text, "tenant A") {
				t.Fatalf("tenant B got %q", r.Text)
			}
		}
		if r := a.tool(t, "setVar", map[string]any{"key": "k", "value": "A's"}); !r.OK {
			t.Fatal(r.Error)
		}
		if r := b.tool(t, "getVar", map[string]any{"key": "k"}); r.OK {
			t.Fatalf("tenant B read A's variable: %q", r.Text)
		}
	})
	t.Run("abandoned calls free their instances; another tenant is served", func(t *testing.T) {
		// Tenant A starts more long calls than there are instances and hangs
		// up on all of them.
		for i := 0; i < 6; i++ {
			abandon(t, a, "sleep", map[string]any{"ms": 25000})
		}
		t0 := time.Now()
		if r := b.tool(t, "remember", map[string]any{"text": "B's turn"}); !r.OK {
			t.Fatalf("tenant B: %+v", r)
		}
		if d := time.Since(t0); d > 20*time.Second {
			t.Fatalf("tenant B waited %v: the abandoned calls kept the instances", d)
		}
	})
	if code, _ := (tenantClient{base: base}).do(t, http.MethodGet, "/healthz", nil); code != http.StatusOK {
		t.Fatalf("healthz after the hostile calls: %d", code)
	}
}

// abandon sends a tool call and closes the connection once the request is
// written, as a client that gave up would.
func abandon(t *testing.T, tc tenantClient, tool string, args any) {
	t.Helper()
	body, _ := json.Marshal(args)
	conn, err := net.Dial("tcp", strings.TrimPrefix(tc.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/v1/workspaces/%s/tools/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		tc.workspace, tool, tc.token, len(body), body)
	// Give the server the request, then hang up without reading.
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, _ = bufio.NewReader(conn).ReadByte()
	conn.Close()
}

// withLimits returns a module renamed and with its limits changed.
func withLimits(t *testing.T, mod []byte, name string, edit func(*manifest.Limits)) []byte {
	t.Helper()
	m, err := manifest.Read(mod)
	if err != nil {
		t.Fatal(err)
	}
	m.Name = name
	edit(&m.Limits)
	out, err := manifest.Embed(mod, m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
