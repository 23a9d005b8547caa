package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testOAuth: the authorization server's records. Clients are kept and a
// document's replaced; a grant reaches only a workspace its person sees;
// a code is good once and briefly, and a second use revokes its grant;
// refresh tokens rotate and a reused one revokes the grant; access tokens
// are not API tokens; revocation by the client (RFC 7009) and by the
// person; a person who loses the workspace or is deactivated loses the
// tokens; secrets are stored as hashes only.
func testOAuth(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	ttl := store.TokenTTLs{Access: time.Minute, Refresh: time.Hour}

	// Clients.
	if _, err := db.OAuthClientByID(ctx, "nobody"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("unknown client: %v", err)
	}
	if err := db.PutOAuthClient(ctx, store.OAuthClient{ID: "x", Kind: store.ClientRegistered}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("client without redirect URIs: %v", err)
	}
	doc := store.OAuthClient{ID: "https://ide.example/client.json", Kind: store.ClientDocument, Name: "IDE", RedirectURIs: []string{"http://127.0.0.1/cb"}}
	if err := db.PutOAuthClient(ctx, doc); err != nil {
		t.Fatal(err)
	}
	doc.Name, doc.RedirectURIs, doc.FetchedAt = "IDE 2", []string{"http://127.0.0.1/cb2", "https://ide.example/cb"}, time.Now().Add(time.Minute)
	if err := db.PutOAuthClient(ctx, doc); err != nil {
		t.Fatal(err)
	}
	got, err := db.OAuthClientByID(ctx, doc.ID)
	if err != nil || got.Name != "IDE 2" || len(got.RedirectURIs) != 2 || got.Kind != store.ClientDocument {
		t.Fatalf("document client after refetch: %+v %v", got, err)
	}
	reg := store.OAuthClient{ID: "c-1", Kind: store.ClientRegistered, Name: "Desktop", RedirectURIs: []string{"http://localhost/callback"}}
	if err := db.PutOAuthClient(ctx, reg); err != nil {
		t.Fatal(err)
	}

	authz := func(p tenancy.Principal, ws string, scopes ...string) (store.OAuthGrant, string, error) {
		return db.AuthorizeOAuth(ctx, p, store.OAuthAuthorization{ClientID: reg.ID, ClientName: reg.Name, WorkspaceID: ws, Scopes: scopes,
			Resource: "http://127.0.0.1:8081/api/v1/workspaces/" + ws + "/mcp", RedirectURI: "http://localhost:5555/callback", Challenge: "ch", TTL: time.Minute})
	}
	// A grant reaches no further than its person.
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		ws   string
	}{{"another tenant's workspace", w.alice, w.wsC.ID}, {"a workspace not the person's", w.alice, w.wsB.ID}, {"no workspace", w.alice, "nope"}} {
		if _, _, err := authz(c.p, c.ws, "mcp:read"); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, _, err := authz(w.alice, w.wsA.ID); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("no scopes: %v", err)
	}

	g, code, err := authz(w.alice, w.wsA.ID, "mcp:read", "mcp:write")
	if err != nil || !strings.HasPrefix(code, store.OAuthCodePrefix) {
		t.Fatalf("authorize: %v %q", err, code)
	}
	// Not listed before tokens were issued.
	if list, _ := db.OAuthGrants(ctx, w.alice); len(list) != 0 {
		t.Fatalf("grant listed before its code was exchanged: %+v", list)
	}
	taken, err := db.TakeOAuthCode(ctx, code)
	if err != nil || taken.Grant.ID != g.ID || taken.Challenge != "ch" || taken.RedirectURI != "http://localhost:5555/callback" ||
		taken.Grant.WorkspaceID != w.wsA.ID || strings.Join(taken.Grant.Scopes, " ") != "mcp:read mcp:write" {
		t.Fatalf("take code: %+v %v", taken, err)
	}
	tok, err := db.IssueOAuthTokens(ctx, g.ID, ttl)
	if err != nil || !strings.HasPrefix(tok.Access, store.OAuthAccessPrefix) || !strings.HasPrefix(tok.Refresh, store.OAuthRefreshPrefix) {
		t.Fatalf("issue: %+v %v", tok, err)
	}
	// Only hashes are kept: every stored key is a SHA-256, none a secret.
	for _, table := range []string{"oauth_codes", "oauth_tokens"} {
		rows, err := db.SQL().QueryContext(ctx, "SELECT hash FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var h []byte
			rows.Scan(&h)
			if len(h) != 32 || strings.Contains(string(h), code[4:]) || strings.Contains(string(h), tok.Access[4:]) {
				t.Fatalf("%s keeps %q, not a hash", table, h)
			}
		}
		rows.Close()
	}
	a, err := db.AuthenticateOAuth(ctx, tok.Access)
	if err != nil || a.Principal != w.alice || a.WorkspaceID != w.wsA.ID || a.ClientID != reg.ID || len(a.Scopes) != 2 || a.Resource != g.Resource {
		t.Fatalf("authenticate: %+v %v", a, err)
	}
	// An access token is not an API token, nor a refresh token an access token.
	if _, err := db.Authenticate(ctx, tok.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("access token accepted as an API token: %v", err)
	}
	for _, s := range []string{tok.Refresh, tampered(tok.Access), "", tenancy.NewTokenSecret()} {
		if _, err := db.AuthenticateOAuth(ctx, s); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("AuthenticateOAuth(%.8s…): %v", s, err)
		}
	}
	if list, err := db.OAuthGrants(ctx, w.alice); err != nil || len(list) != 1 || list[0].ID != g.ID || list[0].UsedAt == nil {
		t.Fatalf("alice's grants: %+v %v", list, err)
	}
	if list, _ := db.OAuthGrants(ctx, w.bob); len(list) != 0 {
		t.Fatalf("bob sees alice's grants: %+v", list)
	}

	// Refresh: another client's attempt changes nothing; rotation; reuse
	// revokes the grant.
	if _, err := db.RefreshOAuthTokens(ctx, "c-other", tok.Refresh, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("refresh by another client: %v", err)
	}
	if _, err := db.RefreshOAuthTokens(ctx, reg.ID, tok.Access, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("refresh with an access token: %v", err)
	}
	tok2, err := db.RefreshOAuthTokens(ctx, reg.ID, tok.Refresh, ttl)
	if err != nil || tok2.Refresh == tok.Refresh || tok2.Access == tok.Access {
		t.Fatalf("refresh: %+v %v", tok2, err)
	}
	if _, err := db.AuthenticateOAuth(ctx, tok2.Access); err != nil {
		t.Fatalf("refreshed access token: %v", err)
	}
	if _, err := db.RefreshOAuthTokens(ctx, reg.ID, tok.Refresh, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("reused refresh token: %v", err)
	}
	for _, s := range []string{tok.Access, tok2.Access} {
		if _, err := db.AuthenticateOAuth(ctx, s); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Fatalf("access token after refresh-token reuse: %v", err)
		}
	}
	if _, err := db.RefreshOAuthTokens(ctx, reg.ID, tok2.Refresh, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("the rotated refresh token outlived the reuse: %v", err)
	}
	if list, _ := db.OAuthGrants(ctx, w.alice); len(list) != 0 {
		t.Fatalf("revoked grant still listed: %+v", list)
	}

	// A code is good once: the second use revokes what the first got.
	g, code, _ = authz(w.alice, w.wsA.ID, "mcp:read")
	if _, err := db.TakeOAuthCode(ctx, code); err != nil {
		t.Fatal(err)
	}
	tok, _ = db.IssueOAuthTokens(ctx, g.ID, ttl)
	if _, err := db.TakeOAuthCode(ctx, code); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("code used twice: %v", err)
	}
	if _, err := db.AuthenticateOAuth(ctx, tok.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("token of a reused code: %v", err)
	}
	if _, err := db.TakeOAuthCode(ctx, tampered(code)); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("tampered code: %v", err)
	}
	// An expired code is spent and refused.
	_, short, _ := db.AuthorizeOAuth(ctx, w.alice, store.OAuthAuthorization{ClientID: reg.ID, WorkspaceID: w.wsA.ID, Scopes: []string{"mcp:read"},
		RedirectURI: "http://localhost/callback", Challenge: "ch", TTL: time.Millisecond})
	time.Sleep(5 * time.Millisecond)
	if _, err := db.TakeOAuthCode(ctx, short); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("expired code: %v", err)
	}

	// Revocation by the client (RFC 7009): an access token alone; a
	// refresh token the grant; another client's token nothing.
	g, code, _ = authz(w.alice, w.wsA.ID, "mcp:read")
	db.TakeOAuthCode(ctx, code)
	tok, _ = db.IssueOAuthTokens(ctx, g.ID, ttl)
	if g, err := db.RevokeOAuthToken(ctx, "c-other", tok.Refresh); err != nil || g != nil {
		t.Fatalf("another client's revocation: %+v %v", g, err)
	}
	if _, err := db.RevokeOAuthToken(ctx, reg.ID, tok.Access); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AuthenticateOAuth(ctx, tok.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("revoked access token: %v", err)
	}
	tok2, err = db.RefreshOAuthTokens(ctx, reg.ID, tok.Refresh, ttl)
	if err != nil {
		t.Fatalf("refresh after the access token's revocation: %v", err)
	}
	if r, err := db.RevokeOAuthToken(ctx, reg.ID, tok2.Refresh); err != nil || r == nil || r.ID != g.ID {
		t.Fatalf("revoke refresh token: %+v %v", r, err)
	}
	if _, err := db.AuthenticateOAuth(ctx, tok2.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("access token after its refresh token's revocation: %v", err)
	}
	if _, err := db.RevokeOAuthToken(ctx, reg.ID, "ahr_unknown"); err != nil {
		t.Fatalf("unknown token: %v", err)
	}

	// Revocation by the person, in their settings; not by another person.
	g, code, _ = authz(w.alice, w.wsA.ID, "mcp:read")
	db.TakeOAuthCode(ctx, code)
	tok, _ = db.IssueOAuthTokens(ctx, g.ID, ttl)
	for _, p := range []tenancy.Principal{w.bob, w.admin, w.daveAdmin} {
		if _, err := db.RevokeOAuthGrant(ctx, p, g.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Fatalf("%s revokes alice's grant: %v", p.UserID, err)
		}
	}
	if r, err := db.RevokeOAuthGrant(ctx, w.alice, g.ID); err != nil || r.RevokedAt == nil {
		t.Fatalf("revoke grant: %+v %v", r, err)
	}
	if _, err := db.AuthenticateOAuth(ctx, tok.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("access token of a revoked grant: %v", err)
	}
	if _, err := db.RefreshOAuthTokens(ctx, reg.ID, tok.Refresh, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("refresh token of a revoked grant: %v", err)
	}

	// The person loses the workspace: no refresh; is deactivated: no access.
	g, code, _ = authz(w.bob, w.wsA.ID, "mcp:read")
	db.TakeOAuthCode(ctx, code)
	tok, _ = db.IssueOAuthTokens(ctx, g.ID, ttl)
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.bob.UserID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RefreshOAuthTokens(ctx, reg.ID, tok.Refresh, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("refresh after losing the workspace: %v", err)
	}
	g, code, _ = authz(w.victor, w.wsA.ID, "mcp:read")
	db.TakeOAuthCode(ctx, code)
	tok, _ = db.IssueOAuthTokens(ctx, g.ID, ttl)
	if err := db.DeactivateUser(ctx, w.t1.ID, w.victor.UserID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AuthenticateOAuth(ctx, tok.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("access token of a deactivated person: %v", err)
	}
	if _, err := db.RefreshOAuthTokens(ctx, reg.ID, tok.Refresh, ttl); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("refresh of a deactivated person: %v", err)
	}

	// An expired access token.
	g, code, _ = authz(w.alice, w.wsA.ID, "mcp:read")
	db.TakeOAuthCode(ctx, code)
	tok, _ = db.IssueOAuthTokens(ctx, g.ID, store.TokenTTLs{Access: time.Millisecond, Refresh: time.Hour})
	time.Sleep(5 * time.Millisecond)
	if _, err := db.AuthenticateOAuth(ctx, tok.Access); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("expired access token: %v", err)
	}
}
