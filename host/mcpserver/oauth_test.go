package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/store"
)

// TestOAuthTokens: an access token of the authorization server
// (host/oauthserver) admits its person at the one workspace and resource
// it was granted for; without mcp:write the writing tools are neither
// offered nor callable; a revoked grant stops the next request; the
// protected-resource metadata names the authorization server and scopes.
func TestOAuthTokens(t *testing.T) {
	const issuer = "http://as.example"
	// The store that authenticates API tokens checks the OAuth ones too.
	f := newFixture(t, func(d *mcpserver.Deps) { d.OAuth, d.Issuer = d.Auth.(mcpserver.OAuthTokens), issuer })
	ctx := context.Background()
	db := f.w.DB
	if err := db.PutOAuthClient(ctx, store.OAuthClient{ID: "c1", Kind: store.ClientRegistered, Name: "IDE", RedirectURIs: []string{"http://127.0.0.1/cb"}}); err != nil {
		t.Fatal(err)
	}
	issue := func(ws, resource string, scopes ...string) (string, store.OAuthGrant) {
		t.Helper()
		g, code, err := db.AuthorizeOAuth(ctx, f.w.P, store.OAuthAuthorization{ClientID: "c1", ClientName: "IDE", WorkspaceID: ws, Scopes: scopes,
			Resource: resource, RedirectURI: "http://127.0.0.1/cb", Challenge: "c", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.TakeOAuthCode(ctx, code); err != nil {
			t.Fatal(err)
		}
		tok, err := db.IssueOAuthTokens(ctx, g.ID, store.TokenTTLs{Access: time.Minute, Refresh: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return tok.Access, g
	}

	resp, err := http.Get(f.http.URL + "/.well-known/oauth-protected-resource/api/v1/workspaces/" + f.ws + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		Servers []string `json:"authorization_servers"`
		Scopes  []string `json:"scopes_supported"`
	}
	json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if strings.Join(prm.Servers, " ") != issuer || strings.Join(prm.Scopes, " ") != "mcp:read mcp:write" {
		t.Fatalf("protected-resource metadata: %+v", prm)
	}

	offered := func(cs *mcp.ClientSession) map[string]bool {
		t.Helper()
		l, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, tl := range l.Tools {
			m[tl.Name] = true
		}
		return m
	}
	readOnly, _ := issue(f.ws, f.url(f.ws), "mcp:read")
	cs, err := f.connect(t, f.ws, readOnly, nil)
	if err != nil {
		t.Fatalf("read-only token: %v", err)
	}
	if got := offered(cs); got["writeNote"] || !got["echo"] {
		t.Errorf("a client without mcp:write is offered %v", got)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "x"}}); err == nil && !r.IsError {
		t.Fatalf("a client without mcp:write ran writeNote: %+v", r)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil || r.IsError {
		t.Fatalf("a read-only tool: %v %+v", err, r)
	}
	cs.Close()

	writer, g := issue(f.ws, f.url(f.ws), "mcp:read", "mcp:write")
	cs, err = f.connect(t, f.ws, writer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := offered(cs); !got["writeNote"] {
		t.Errorf("a client with mcp:write is not offered writeNote: %v", got)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "x"}}); err != nil || r.IsError {
		t.Fatalf("writeNote with mcp:write: %v %+v", err, r)
	}
	// Not at the other workspace; a token for another resource nowhere.
	if _, err := f.connect(t, f.ws2, writer, nil); err == nil {
		t.Error("the token opened another workspace's endpoint")
	}
	elsewhere, _ := issue(f.ws, "https://elsewhere.example/api/v1/workspaces/"+f.ws+"/mcp", "mcp:read")
	if _, err := f.connect(t, f.ws, elsewhere, nil); err == nil {
		t.Error("a token for another resource was accepted")
	}
	// Revoked: the next request of the open session is refused.
	if _, err := db.RevokeOAuthGrant(ctx, f.w.P, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("a revoked grant's session went on")
	}
}
