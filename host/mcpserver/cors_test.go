package mcpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/mcpserver"
)

// A browser-based client of a listed origin (a web IDE, the MCP Inspector's
// page) gets through the browser's CORS checks as the Fetch standard runs
// them: the preflight, without credentials, is answered; the 401 that
// starts its OAuth flow and the responses it reads carry the origin and
// expose the headers it needs. An origin not listed gets nothing.
func TestCORSForListedOrigins(t *testing.T) {
	const listed = "https://ide.example"
	f := newFixture(t, func(d *mcpserver.Deps) { d.Origins = []string{listed + "/"} })
	do := func(method, origin, token string, header ...string) *http.Response {
		t.Helper()
		body := io.Reader(nil)
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
		}
		req, _ := http.NewRequest(method, f.url(f.ws), body)
		req.Header.Set("Origin", origin)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	preflight := []string{"Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization,content-type,mcp-protocol-version,x-evil"}

	resp := do(http.MethodOptions, listed, "", preflight...)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != listed {
		t.Fatalf("preflight: %s %v", resp.Status, resp.Header)
	}
	if got := resp.Header.Get("Access-Control-Allow-Headers"); got != "authorization, content-type, mcp-protocol-version" {
		t.Errorf("allowed headers %q: want the protocol's, not x-evil", got)
	}
	if !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight methods/credentials: %v", resp.Header)
	}

	resp = do(http.MethodPost, listed, "")
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != listed ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Fatalf("unauthenticated POST: %s %v", resp.Status, resp.Header)
	}
	resp = do(http.MethodPost, listed, f.token)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != listed ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Fatalf("POST: %s %v", resp.Status, resp.Header)
	}

	for _, other := range []string{"https://evil.example", "http://ide.example", "https://ide.example:8443"} {
		resp = do(http.MethodOptions, other, "", preflight...)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %s %v", other, resp.Status, resp.Header)
		}
	}

	// The protected-resource metadata, the client's first read: its
	// preflight and its answer let the origin read it (the SDK's handler
	// answers the GET with "*": the document is public).
	meta := f.http.URL + "/.well-known/oauth-protected-resource/api/v1/workspaces/" + f.ws + "/mcp"
	for _, method := range []string{http.MethodOptions, http.MethodGet} {
		req, _ := http.NewRequest(method, meta, nil)
		req.Header.Set("Origin", listed)
		if method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "GET")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ao := resp.Header.Get("Access-Control-Allow-Origin"); resp.StatusCode >= 300 || (ao != listed && ao != "*") {
			t.Errorf("metadata %s from a listed origin: %s %v", method, resp.Status, resp.Header)
		}
	}
}
