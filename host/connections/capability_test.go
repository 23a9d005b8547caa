package connections_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// probeHost loads the hostile connector connprobe with the connection
// capability reaching e's service; api.acme.test, its subdomain
// x.api.acme.test and evil.acme.test resolve to the loopback test server.
func probeHost(t *testing.T, e *env) (*wasm.Plugin, *connectionstest.LogSink, string) {
	t.Helper()
	u, _ := url.Parse(e.api.URL)
	port := u.Port()
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"api.acme.test:" + port, "evil.acme.test:" + port, "x.api.acme.test:" + port, "other.test:" + port},
		Resolver: connectionstest.DNS{"api.acme.test": "127.0.0.1", "evil.acme.test": "127.0.0.1", "x.api.acme.test": "127.0.0.1", "other.test": "127.0.0.1"}}
	capab := &connections.Capability{Service: e.svc, Egress: opts}
	logs := &connectionstest.LogSink{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{capab.Wasm()}, Logs: logs}, "connprobe")
	return wasmtest.Plugin(t, h, "connprobe"), logs, port
}

func call(t *testing.T, p *wasm.Plugin, who tenancy.Principal, tool string, args any) wasm.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: who})
	return p.Call(ctx, tool, b, &wasm.CallOptions{Tenant: who.TenantID})
}

func mask(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] ^= 0x5a
	}
	return hex.EncodeToString(b)
}

// TestTokenNeverEntersTheSandbox: a hostile connector uses alice's OAuth
// connection against a server that echoes the credential back. Its
// result, its logs, its variables and its whole memory are then searched
// for every token the provider issued: none is there. The scan is shown to
// work by finding a marker the server did send.
func TestTokenNeverEntersTheSandbox(t *testing.T) {
	e := newEnv(t)
	c := e.connectOAuth(t, e.alice)
	p, logs, port := probeHost(t, e)
	base := "http://api.acme.test:" + port
	res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": base + "/echo"})
	if !res.OK {
		t.Fatalf("fetch: %+v", res)
	}
	var got struct {
		Status int
		Body   string
		Info   struct{ Provider, Label string }
	}
	if err := json.Unmarshal(res.Data, &got); err != nil || got.Status != 200 || got.Info.Provider != "acme" {
		t.Fatalf("fetch answered %s (%v)", res.Data, err)
	}
	// The provider saw the host's credential, not the plugin's smuggled one.
	e.mu.Lock()
	last := e.seen[len(e.seen)-1]
	e.mu.Unlock()
	if !strings.HasPrefix(last, "Bearer ") || strings.Contains(last, "smuggled") || !e.as.Valid(strings.TrimPrefix(last, "Bearer ")) {
		t.Fatalf("the provider saw %q", last)
	}
	// Look everywhere.
	vars := call(t, p, e.alice, "getVar", map[string]any{})
	if !vars.OK || !strings.Contains(vars.Text+string(vars.Data), "you sent") {
		t.Fatalf("getVar: %+v", vars)
	}
	marker := call(t, p, e.alice, "scan", map[string]any{"masked": mask("you sent: Bearer ")})
	if !marker.OK || strings.TrimSpace(string(marker.Data)) == "0" {
		t.Fatalf("the memory scan does not find what the plugin did receive: %+v", marker)
	}
	tokens := e.as.Issued()
	if len(tokens) == 0 {
		t.Fatal("no tokens issued")
	}
	for _, tok := range tokens {
		for where, text := range map[string]string{"result": res.Text + string(res.Data), "variables": vars.Text + string(vars.Data), "logs": logs.String()} {
			if strings.Contains(text, tok) {
				t.Errorf("a token is in the plugin's %s", where)
			}
		}
		scan := call(t, p, e.alice, "scan", map[string]any{"masked": mask(tok)})
		if !scan.OK || strings.TrimSpace(string(scan.Data)) != "0" {
			t.Errorf("a token is in the plugin's memory: %+v", scan)
		}
	}
}

// TestConnectorRefusals: another host, another user's connection, a
// connection of another provider, a revoked one, a plugin not a connector.
func TestConnectorRefusals(t *testing.T) {
	e := newEnv(t)
	c := e.connectOAuth(t, e.alice)
	p, _, port := probeHost(t, e)
	other, err := e.svc.AddToken(context.Background(), e.alice, connections.NewToken{Provider: "other", Label: "o", Auth: "token", Token: "static-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	acmeToken, err := e.svc.AddToken(context.Background(), e.alice, connections.NewToken{Provider: "acme", Label: "pat", Auth: "token", Token: "static-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, code string
		who        tenancy.Principal
		conn, url  string
	}{
		{"a host outside the manifest", "host_refused", e.alice, c.ID, "http://other.test:" + port + "/"},
		{"a manifest host not the provider's", "host_refused", e.alice, c.ID, "http://evil.acme.test:" + port + "/"},
		{"another user's connection", "not_found", e.bob, c.ID, "http://api.acme.test:" + port + "/"},
		{"another provider's connection", "wrong_provider", e.alice, other.ID, "http://api.acme.test:" + port + "/"},
		{"an unknown connection", "not_found", e.alice, "nope", "http://api.acme.test:" + port + "/"},
		{"a token connection to an OAuth connector", "wrong_auth", e.alice, acmeToken.ID, "http://api.acme.test:" + port + "/"},
	}
	before := e.requests()
	for _, tc := range cases {
		res := call(t, p, tc.who, "fetch", map[string]any{"connection": tc.conn, "url": tc.url})
		if res.OK || res.Error == nil || !strings.Contains(res.Error.Error(), tc.code) {
			t.Errorf("%s: %+v %+v", tc.name, res, res.Error)
		}
	}
	if e.requests() != before {
		t.Fatalf("%d refused requests reached a server", e.requests()-before)
	}
	// A read-only tool's connection requests may only read.
	if res := call(t, p, e.alice, "peek", map[string]any{"connection": c.ID, "url": "http://api.acme.test:" + port + "/", "method": "POST"}); res.OK || !strings.Contains(res.Error.Error(), "method POST is not allowed") {
		t.Errorf("POST from a read-only tool: %+v %+v", res, res.Error)
	}
	if res := call(t, p, e.alice, "peek", map[string]any{"connection": c.ID, "url": "http://api.acme.test:" + port + "/"}); !res.OK {
		t.Errorf("GET from a read-only tool: %+v", res.Error)
	}
	if e.requests() != before+1 {
		t.Fatalf("%d requests reached the server, want the one GET", e.requests()-before)
	}
	if err := e.svc.Revoke(context.Background(), e.alice, c.ID); err != nil {
		t.Fatal(err)
	}
	res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": "http://api.acme.test:" + port + "/"})
	if res.OK || !strings.Contains(res.Error.Error(), "connection_revoked") {
		t.Fatalf("revoked: %+v %+v", res, res.Error)
	}
	// Without a caller there is no user whose connection it could be.
	b, _ := json.Marshal(map[string]any{"connection": c.ID, "url": "http://api.acme.test:" + port + "/"})
	res = p.Call(context.Background(), "fetch", b, nil)
	if res.OK || !strings.Contains(res.Error.Error(), "forbidden") {
		t.Fatalf("no caller: %+v %+v", res, res.Error)
	}
}

// TestConnectorRedirectRefused: through the capability, the provider
// answering a connector's request with a redirect to a subdomain of the
// connection's host, or to another host the connector may reach, hands the
// plugin host_refused naming the hop; the hop is never sent, so neither the
// token nor an answer from there reaches anyone. A redirect on the
// connection's host is followed with the token.
func TestConnectorRedirectRefused(t *testing.T) {
	e := newEnv(t)
	c := e.connectOAuth(t, e.alice)
	p, _, port := probeHost(t, e)
	redirectTo := func(loc string) func(http.ResponseWriter) bool {
		return func(w http.ResponseWriter) bool {
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusFound)
			return true
		}
	}
	for _, host := range []string{"x.api.acme.test", "evil.acme.test"} {
		e.mu.Lock()
		e.script = append(e.script, redirectTo("http://"+host+":"+port+"/echo"))
		e.mu.Unlock()
		before := e.requests()
		res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": "http://api.acme.test:" + port + "/files"})
		if res.OK || !strings.Contains(res.Error.Error(), "host_refused") || !strings.Contains(res.Error.Error(), host) {
			t.Errorf("redirect to %s: %s %+v", host, res.Data, res.Error)
		}
		if n := e.requests() - before; n != 1 {
			t.Errorf("redirect to %s: %d requests reached the server, want the first only", host, n)
		}
	}
	e.mu.Lock()
	e.script = append(e.script, redirectTo("/echo"))
	e.mu.Unlock()
	res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": "http://api.acme.test:" + port + "/files"})
	if !res.OK || !strings.Contains(string(res.Data), "you sent: Bearer [redacted]") {
		t.Fatalf("redirect on the connection's host: %s %+v", res.Data, res.Error)
	}
}

// TestHostileUploadRequests: what a hostile connector may not do with the
// upload body parts and uncredentialed requests: name bytes of an upload
// outside one, or past its end; send a request without the credentials to
// the connection's own API host (only its provider's download hosts take
// them, where Graph's pre-authenticated uploadUrl is); and a request it
// may send there carries no credential, not even the one it smuggled.
func TestHostileUploadRequests(t *testing.T) {
	var dl string
	e := newEnv(t, func(o *connections.Options) {
		for i, p := range o.Providers {
			if p.Name == "acme" {
				u, _ := url.Parse(p.BaseURL)
				dl = "evil.acme.test:" + u.Port()
				o.Providers[i].DownloadHosts = []string{dl}
			}
		}
	})
	c := e.connectOAuth(t, e.alice)
	p, _, port := probeHost(t, e)
	base := "http://api.acme.test:" + port
	upload := connections.BytesSource("f.bin", "", []byte("0123456789"))
	run := func(ctx context.Context, args map[string]any) wasm.Result {
		args["connection"] = c.ID
		b, _ := json.Marshal(args)
		return p.Call(toolcall.With(ctx, toolcall.Caller{Principal: e.alice}), "fetch", b, &wasm.CallOptions{Tenant: e.alice.TenantID})
	}
	bg := context.Background()
	in := connections.WithUpload(bg, upload)
	rng := func(off, n int64) []map[string]any {
		return []map[string]any{{"upload": map[string]int64{"offset": off, "length": n}}}
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		args map[string]any
		code string
	}{
		{"a range outside an upload", bg, map[string]any{"url": base + "/x", "method": "PUT", "parts": rng(0, 4)}, "invalid_request"},
		{"a range past the end", in, map[string]any{"url": base + "/x", "method": "PUT", "parts": rng(8, 4)}, "invalid_request"},
		{"a negative range", in, map[string]any{"url": base + "/x", "method": "PUT", "parts": rng(-1, 4)}, "invalid_request"},
		{"no credential to the API host", in, map[string]any{"url": base + "/x", "method": "PUT", "noCredential": true, "parts": rng(0, 10)}, "host_refused"},
	} {
		res := run(c.ctx, c.args)
		if res.OK || res.Error == nil || !strings.Contains(res.Error.Error(), c.code) {
			t.Fatalf("%s: %+v %+v, want %s", c.name, res, res.Error, c.code)
		}
	}
	e.mu.Lock()
	sent := len(e.seen)
	e.mu.Unlock()
	if sent != 0 {
		t.Fatalf("%d refused requests reached the provider", sent)
	}
	res := run(in, map[string]any{"url": "http://" + dl + "/upload", "method": "PUT", "noCredential": true, "parts": rng(0, 10)})
	if !res.OK {
		t.Fatalf("to a download host: %+v %+v", res, res.Error)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) != 1 || e.seen[0] != "" {
		t.Fatalf("the download host saw Authorization %q", e.seen)
	}
}
