package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeRefusesMCPServerAddress (issue 24 item 6): a tenant admin who adds
// an HTTP MCP server at an address the host would never connect to (its own
// loopback services, a private network, the cloud metadata service) is told
// so when adding it, over HTTP through serve, instead of a server that is
// stored and then fails at every connection. The operator's -allow-host
// still lets a server on such an address in.
func TestServeRefusesMCPServerAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server")
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	remote := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(remote.Close)
	allowed := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(allowed.Close)

	data, plugins := t.TempDir(), t.TempDir()
	tc := bootstrapTenant(t, data, plugins, "acme", nil)
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins, "-allow-host", strings.TrimPrefix(allowed.URL, "http://"))
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	add := func(name, url string) (int, string) {
		t.Helper()
		body := `{"name":"` + name + `","transport":"http","url":"` + url + `"}`
		req, _ := http.NewRequest("POST", base+"/api/v1/mcp-servers", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tc.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	for i, c := range []struct {
		name, url string
		want      int
		detail    string
	}{
		{"loopback", remote.URL + "/mcp", 403, "loopback"},
		{"loopback by name", strings.Replace(remote.URL, "127.0.0.1", "localhost", 1) + "/mcp", 403, "loopback"},
		{"the metadata service", "http://169.254.169.254/mcp", 403, "169.254.169.254"},
		{"the metadata service by name", "http://metadata.google.internal/mcp", 403, "metadata"},
		{"a private address", "http://10.1.2.3:8080/mcp", 403, "10.1.2.3"},
		{"an IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:9/mcp", 403, "127.0.0.1"},
		{"another port of the allowed host", "http://" + loopbackOtherPortOf(allowed.URL) + "/mcp", 403, "other ports"},
		{"the operator's allowed host", allowed.URL + "/mcp", 201, `"transport":"http"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, raw := add(fmt.Sprintf("server%d", i), c.url)
			if status != c.want || !strings.Contains(raw, c.detail) {
				t.Fatalf("add %s: %d %s, want %d with %q", c.url, status, raw, c.want, c.detail)
			}
		})
	}
}

// loopbackOtherPortOf is the host:port of url with another port.
func loopbackOtherPortOf(url string) string {
	hp := strings.TrimPrefix(url, "http://")
	i := strings.LastIndex(hp, ":")
	if hp[i+1:] == "1" {
		return hp[:i] + ":2"
	}
	return hp[:i] + ":1"
}
