package mcpclient_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/wasm"
)

type echoIn struct {
	Message string `json:"message"`
}

type hugeIn struct {
	Bytes int `json:"bytes"`
}

// sdkServer is a streamable-HTTP MCP server of the Go SDK behind a bearer
// token check: the real wire format, as a remote server speaks it.
func sdkServer(t *testing.T, token string, jsonResponse bool) *httptest.Server {
	ts, _ := sdkServerWith(t, token, jsonResponse)
	return ts
}

func sdkServerWith(t *testing.T, token string, jsonResponse bool) (*httptest.Server, *mcp.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "huge", Description: "Many bytes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, srv
}

func remote(t *testing.T, url string, sec mcpconfig.Secrets, cfg mcpconfig.Config) (mcpconfig.Server, *mcpclient.Sealer) {
	t.Helper()
	sealer, err := mcpclient.NewSealer(testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Transport, cfg.URL = mcpconfig.HTTP, url
	s := mcpconfig.Server{ID: "srv-remote", TenantID: "t1", Name: "remote", Config: cfg}
	if s.Secrets, err = sealer.Seal(s.TenantID, s.Name, sec); err != nil {
		t.Fatal(err)
	}
	return s, sealer
}

func TestHTTPServer(t *testing.T) {
	for _, jsonResponse := range []bool{true, false} {
		name := "sse"
		if jsonResponse {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			ts := sdkServer(t, "tok-1", jsonResponse)
			s, sealer := remote(t, ts.URL, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-1"}},
				mcpconfig.Config{MaxResultBytes: 64 << 10, ReadOnly: []string{"*"}})
			src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{hostPort(ts.URL)}})
			list, err := src.Tools(context.Background())
			if err != nil || len(list) != 2 || list[0].Name != "remote_echo" || !list[0].ReadOnly || list[1].ReadOnly {
				t.Fatalf("tools %+v %v", list, err)
			}
			if r := src.Call(context.Background(), "remote_echo", []byte(`{"message":"over http"}`)); !r.OK || r.Text != "over http" {
				t.Fatalf("echo: %+v", r)
			}
			r := src.Call(context.Background(), "remote_huge", []byte(`{"bytes":100000}`))
			if r.OK || r.Error.Code != wasm.CodeOutputTooLarge {
				t.Fatalf("huge: %+v", r)
			}
			if r := src.Call(context.Background(), "remote_echo", []byte(`{"message":"again"}`)); !r.OK || r.Text != "again" {
				t.Fatalf("echo after the huge answer: %+v", r)
			}
		})
	}
}

func TestHTTPAuthRefused(t *testing.T) {
	ts := sdkServer(t, "tok-1", true)
	s, sealer := remote(t, ts.URL, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer wrong"}}, mcpconfig.Config{})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{hostPort(ts.URL)}})
	if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("wrong token: %v", err)
	}
}

// TestHTTPRedirectNotFollowed: a server that redirects does not get the
// request (nor the token) to another origin.
func TestHTTPRedirectNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	s, sealer := remote(t, redirector.URL, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-1"}}, mcpconfig.Config{})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{hostPort(redirector.URL), hostPort(other.URL)}})
	if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("redirect: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Fatalf("the other origin got requests: %q", seen)
	}
}

func hostPort(u string) string { return strings.TrimPrefix(u, "http://") }

// TestHTTPPrivateAddressRefused: an HTTP server on a loopback (or private,
// or metadata) address is not reached unless the operator allows its host:
// a tenant admin cannot point agenthost at the host's own services.
func TestHTTPPrivateAddressRefused(t *testing.T) {
	ts := sdkServer(t, "tok-1", true)
	s, sealer := remote(t, ts.URL, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-1"}}, mcpconfig.Config{})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer})
	if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a loopback server: %v", err)
	}
	meta, sealer := remote(t, "http://169.254.169.254/mcp", mcpconfig.Secrets{}, mcpconfig.Config{})
	src, _ = source(t, meta, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{"169.254.169.254:80"}})
	if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "169.254.169.254") {
		t.Fatalf("the metadata address: %v", err)
	}
}

// TestToolListChanged: a tool the server adds while connected joins the
// source's tools once the server says its list changed.
func TestToolListChanged(t *testing.T) {
	ts, srv := sdkServerWith(t, "tok-1", false)
	s, sealer := remote(t, ts.URL, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-1"}}, mcpconfig.Config{})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{hostPort(ts.URL)}})
	if list, err := src.Tools(context.Background()); err != nil || len(list) != 2 {
		t.Fatalf("tools: %v %v", list, err)
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "late", Description: "Added later."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late " + in.Message}}}, nil, nil
		})
	// The notification arrives on its own stream: wait for it (a lost one
	// ends the test at its deadline).
	for {
		list, err := src.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := src.Call(context.Background(), "remote_late", []byte(`{"message":"x"}`)); !r.OK || r.Text != "late x" {
		t.Fatalf("the new tool: %+v", r)
	}
}

// noDNS knows no name: only an override reaches anything.
type noDNS struct{}

func (noDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return nil, fmt.Errorf("no such host %s", host)
}

// TestHTTPResolveOverride: the operator's -resolve reaches HTTP servers'
// transport: a server registered by a name only the override knows is
// reached when its host is also allowed by name, and refused as loopback
// when not.
func TestHTTPResolveOverride(t *testing.T) {
	// A server answering any Host (the SDK's own DNS-rebinding check
	// refuses names on loopback), recording the Host it was asked for.
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true, DisableLocalhostProtection: true})
	var mu sync.Mutex
	var hosts []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	named := "http://mcp.example.test:" + u.Port() + "/mcp"
	o, err := egress.NewOverrides(noDNS{}, "mcp.example.test=127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, sealer := remote(t, named, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-1"}}, mcpconfig.Config{})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, Resolver: o})
	if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("override to loopback without -allow-host: %v", err)
	}
	src, _ = source(t, s, mcpclient.Options{Sealer: sealer, Resolver: o, AllowPrivateHosts: []string{"mcp.example.test:" + u.Port()}})
	if list, err := src.Tools(context.Background()); err != nil || len(list) != 1 {
		t.Fatalf("tools through the override: %+v %v", list, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) == 0 || hosts[0] != "mcp.example.test:"+u.Port() {
		t.Fatalf("the server was asked for hosts %v, want the registered name", hosts)
	}
}
