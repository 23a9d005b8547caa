package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/tenancy"
)

type shoutIn struct {
	Text string `json:"text"`
}

// remoteMCP is a streamable-HTTP MCP server of the Go SDK that wants a
// bearer token; it records every Authorization header it saw.
func remoteMCP(t *testing.T, token string) (*httptest.Server, *[]string) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "shout", Description: "Upper-cases text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in shoutIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &seen
}

// TestMCPServersAPI: only the tenant's admin administers MCP servers; the
// token is sealed and never returned; the server's tools join the
// workspace's tool set with their schema, are called through the same
// route as plugin tools, and leave it when the server is removed.
func TestMCPServersAPI(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	alice, err := ts.db.Authenticate(ctx, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ts.db.CreateUser(ctx, tenancy.User{TenantID: alice.TenantID, Email: "root@acme", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	_, root, err := ts.db.CreateToken(ctx, admin.ID, "admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, _ := remoteMCP(t, "tok-secret-42")
	add := `{"name":"remote","workspaceId":"` + ts.wsA + `","transport":"http","url":"` + remote.URL + `","bearerToken":"tok-secret-42","readOnly":["shout"]}`

	for _, c := range []struct {
		name, token, body string
		want              int
	}{
		{"a member", ts.alice, add, 403},
		{"no token", "", add, 401},
		{"a bad name", root, strings.Replace(add, `"remote"`, `"Remote!"`, 1), 400},
		{"an unknown field", root, strings.Replace(add, `"transport"`, `"shell":"sh","transport"`, 1), 400},
		{"a header injection", root, strings.Replace(add, `"readOnly"`, `"headers":{"X-A":"1\r\nX-B: 2"},"readOnly"`, 1), 400},
		{"another tenant's workspace", root, strings.Replace(add, ts.wsA, "no-such-workspace", 1), 404},
	} {
		if status, _, raw := do(t, ts.base, call{"POST", "/mcp-servers", c.token, "application/json", strings.NewReader(c.body)}); status != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, status, raw, c.want)
		}
	}
	status, _, raw := do(t, ts.base, call{"POST", "/mcp-servers", root, "application/json", strings.NewReader(add)})
	var created struct {
		ID     string `json:"id"`
		Config struct {
			SecretHeaders []string `json:"secretHeaders"`
		} `json:"config"`
	}
	if status != 201 || json.Unmarshal(raw, &created) != nil || created.ID == "" || len(created.Config.SecretHeaders) != 1 {
		t.Fatalf("add: %d %s", status, raw)
	}
	if status, _, raw := do(t, ts.base, call{"POST", "/mcp-servers", root, "application/json", strings.NewReader(add)}); status != 409 {
		t.Fatalf("the same name again: %d %s", status, raw)
	}
	// The token is never returned, nor kept in the clear.
	for _, path := range []string{"/mcp-servers", "/mcp-servers/" + created.ID} {
		status, _, raw := do(t, ts.base, call{"GET", path, root, "", nil})
		if status != 200 || strings.Contains(string(raw), "tok-secret-42") {
			t.Fatalf("GET %s: %d %s", path, status, raw)
		}
		if path != "/mcp-servers" && !strings.Contains(string(raw), `"connected":true`) {
			t.Fatalf("status: %s", raw)
		}
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/mcp-servers", ts.alice, "", nil}); status != 403 {
		t.Fatalf("a member lists: %d", status)
	}
	var secrets []byte
	if err := ts.db.SQL().QueryRowContext(ctx, `SELECT secrets FROM mcp_servers WHERE id = ?`, created.ID).Scan(&secrets); err != nil ||
		len(secrets) == 0 || strings.Contains(string(secrets), "tok-secret-42") {
		t.Fatalf("stored secrets %q %v", secrets, err)
	}

	// A member of A sees and calls the tool; B does not have it.
	status, _, raw = do(t, ts.base, call{"GET", "/workspaces/" + ts.wsA + "/tools", ts.alice, "", nil})
	if status != 200 || !strings.Contains(string(raw), `"name":"remote_shout"`) || !strings.Contains(string(raw), `"plugin":"mcp:remote"`) {
		t.Fatalf("tools of A: %d %s", status, raw)
	}
	status, _, raw = do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/tools/remote_shout", ts.alice, "application/json", strings.NewReader(`{"text":"hi"}`)})
	if status != 200 || !strings.Contains(string(raw), `"ok":true`) || !strings.Contains(string(raw), `"text":"HI"`) {
		t.Fatalf("call: %d %s", status, raw)
	}
	status, _, raw = do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/tools/remote_shout", ts.alice, "application/json", strings.NewReader(`{"text":5}`)})
	if status != 200 || !strings.Contains(string(raw), `"code":"invalid_arguments"`) || !strings.Contains(string(raw), "/text") {
		t.Fatalf("a call with bad arguments: %d %s", status, raw)
	}

	if status, _, _ := do(t, ts.base, call{"DELETE", "/mcp-servers/" + created.ID, ts.alice, "", nil}); status != 403 {
		t.Fatalf("a member removes: %d", status)
	}
	if status, _, _ := do(t, ts.base, call{"DELETE", "/mcp-servers/" + created.ID, root, "", nil}); status != 204 {
		t.Fatalf("remove: %d", status)
	}
	status, _, raw = do(t, ts.base, call{"GET", "/workspaces/" + ts.wsA + "/tools", ts.alice, "", nil})
	if status != 200 || strings.Contains(string(raw), "remote_shout") {
		t.Fatalf("tools after removal: %d %s", status, raw)
	}
}
