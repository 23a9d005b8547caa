package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

func testTenancy(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB

	t.Run("user e-mail unique per tenant", func(t *testing.T) {
		_, err := db.CreateUser(ctx, tenancy.User{TenantID: w.t1.ID, Email: "alice@acme"})
		if !errors.Is(err, tenancy.ErrConflict) {
			t.Fatalf("duplicate e-mail: %v", err)
		}
		if _, err := db.CreateUser(ctx, tenancy.User{TenantID: w.t2.ID, Email: "alice@acme"}); err != nil {
			t.Fatalf("same e-mail in another tenant: %v", err)
		}
	})
	t.Run("unknown tenant", func(t *testing.T) {
		_, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: "nope", Name: "x"})
		if !errors.Is(err, tenancy.ErrNotFound) {
			t.Fatalf("workspace of unknown tenant: %v", err)
		}
	})
	t.Run("membership never crosses tenants", func(t *testing.T) {
		err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsC.ID, UserID: w.alice.UserID, Role: tenancy.RoleMember})
		if !errors.Is(err, tenancy.ErrNotFound) {
			t.Fatalf("cross-tenant membership: %v", err)
		}
		err = db.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.alice.UserID, Role: "owner"})
		if !errors.Is(err, tenancy.ErrInvalid) {
			t.Fatalf("unknown role: %v", err)
		}
	})
	t.Run("levels", func(t *testing.T) {
		cases := []struct {
			name        string
			p           tenancy.Principal
			ws          string
			read, write tenancy.Level
			err         error
		}{
			{"member", w.alice, w.wsA.ID, tenancy.Group, tenancy.My, nil},
			{"viewer", w.victor, w.wsA.ID, tenancy.Group, tenancy.None, nil},
			{"personal", w.pat, w.wsA.ID, tenancy.My, tenancy.My, nil},
			{"manager", w.carol, w.wsB.ID, tenancy.Group, tenancy.Group, nil},
			{"admin", w.admin, w.wsB.ID, tenancy.All, tenancy.All, nil},
			{"non-member", w.carol, w.wsA.ID, 0, 0, tenancy.ErrNotFound},
			{"other tenant", w.dave, w.wsA.ID, 0, 0, tenancy.ErrNotFound},
			{"other tenant's admin", w.daveAdmin, w.wsA.ID, 0, 0, tenancy.ErrNotFound},
			{"unknown workspace", w.admin, "nope", 0, 0, tenancy.ErrNotFound},
		}
		for _, c := range cases {
			r, wr, err := db.Levels(ctx, c.p, c.ws)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Errorf("%s: err %v, want %v", c.name, err, c.err)
				}
				continue
			}
			if err != nil || r != c.read || wr != c.write {
				t.Errorf("%s: %v/%v %v, want %v/%v", c.name, r, wr, err, c.read, c.write)
			}
		}
	})
	t.Run("workspaces listed by membership", func(t *testing.T) {
		for _, c := range []struct {
			p    tenancy.Principal
			want []string
		}{
			{w.alice, []string{"A"}},
			{w.carol, []string{"B"}},
			{w.admin, []string{"A", "B"}},
			{w.dave, []string{"C"}},
		} {
			ws, err := db.Workspaces(ctx, c.p)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range ws {
				got = append(got, x.Name)
			}
			if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) || (len(got) > 1 && got[1] != c.want[1]) {
				t.Errorf("%s sees %v, want %v", c.p.UserID, got, c.want)
			}
		}
	})
	t.Run("revoked membership takes effect at once", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "m.txt", "m")
		if _, err := w.svc.Get(ctx, w.bob, f.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.bob.UserID}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Get(ctx, w.bob, f.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Fatalf("after removal: %v", err)
		}
	})
}

func testTokens(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	tok, secret, err := db.CreateToken(ctx, w.alice.UserID, "cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.Authenticate(ctx, secret)
	if err != nil || p != w.alice {
		t.Fatalf("authenticate: %+v %v, want %+v", p, err, w.alice)
	}
	// Only the hash is kept.
	var n int
	if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM api_tokens WHERE hash = '"+secret+"'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret stored in clear: %d %v", n, err)
	}
	past := time.Now().Add(-time.Minute)
	_, expired, err := db.CreateToken(ctx, w.alice.UserID, "old", &past)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, secret string }{
		{"empty", ""},
		{"malformed", "Bearer nonsense"},
		{"unknown", tenancy.NewTokenSecret()},
		{"tampered", tampered(secret)},
		{"expired", expired},
	} {
		if _, err := db.Authenticate(ctx, c.secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("%s token: %v", c.name, err)
		}
	}
	if err := db.RevokeToken(ctx, w.bob, tok.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob revoking alice's token: %v", err)
	}
	if err := db.RevokeToken(ctx, w.daveAdmin, tok.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("another tenant's admin revoking: %v", err)
	}
	if err := db.RevokeToken(ctx, w.alice, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("revoked token: %v", err)
	}
	if err := db.RevokeToken(ctx, w.alice, tok.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("revoking twice: %v", err)
	}
	testTokenListing(t, w, tok.ID)
	testConcurrentTokens(t, w)
}

// testConcurrentTokens: lookups that arrive together (a thousand clients
// reconnecting) share queries, and each still gets its own token's answer:
// two users' tokens, an unknown one and a revoked one, at once; a token
// revoked before the lookups arrive is refused to every one of them.
func testConcurrentTokens(t *testing.T, w *world) {
	ctx := context.Background()
	db := w.env.DB
	_, aliceSecret, err := db.CreateToken(ctx, w.alice.UserID, "tab", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, bobSecret, err := db.CreateToken(ctx, w.bob.UserID, "tab", nil)
	if err != nil {
		t.Fatal(err)
	}
	revoked, revokedSecret, err := db.CreateToken(ctx, w.bob.UserID, "gone", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeToken(ctx, w.bob, revoked.ID); err != nil {
		t.Fatal(err)
	}
	unknown := tenancy.NewTokenSecret()
	cases := []struct {
		secret string
		want   tenancy.Principal
		ok     bool
	}{{aliceSecret, w.alice, true}, {bobSecret, w.bob, true}, {unknown, tenancy.Principal{}, false}, {revokedSecret, tenancy.Principal{}, false}}
	var wg sync.WaitGroup
	for i := range 400 {
		c := cases[i%len(cases)]
		wg.Go(func() {
			p, err := db.Authenticate(ctx, c.secret)
			switch {
			case c.ok && (err != nil || p != c.want):
				t.Errorf("lookup %d: %+v %v, want %+v", i, p, err, c.want)
			case !c.ok && !errors.Is(err, tenancy.ErrUnauthenticated):
				t.Errorf("lookup %d of a refused token: %+v %v", i, p, err)
			}
		})
	}
	wg.Wait()
}

// testTokenListing: a user lists their own tokens (revoked and expired ones
// with their times), a tenant admin every token of the tenant, nobody
// another tenant's; an admin revokes a member's token; the operator's path
// lists a user's tokens and revokes any.
func testTokenListing(t *testing.T, w *world, revokedID string) {
	ctx := context.Background()
	db := w.env.DB
	bobTok, bobSecret, err := db.CreateToken(ctx, w.bob.UserID, "bob's", nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ts []tenancy.Token) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	mine, err := db.ListTokens(ctx, w.alice)
	if err != nil || len(mine) != 2 {
		t.Fatalf("alice's tokens: %+v %v", mine, err)
	}
	for _, tk := range mine {
		if tk.UserID != w.alice.UserID {
			t.Fatalf("alice sees another user's token: %+v", tk)
		}
		switch tk.Name {
		case "cli":
			if tk.ID != revokedID || tk.RevokedAt == nil {
				t.Fatalf("revoked token listed without its time: %+v", tk)
			}
		case "old":
			if tk.ExpiresAt == nil || tk.ExpiresAt.After(time.Now()) || tk.RevokedAt != nil {
				t.Fatalf("expired token: %+v", tk)
			}
		default:
			t.Fatalf("unexpected token %+v", tk)
		}
	}
	if all, err := db.ListTokens(ctx, w.admin); err != nil || !slices.Contains(ids(all), bobTok.ID) || !slices.Contains(ids(all), revokedID) {
		t.Fatalf("tenant admin's listing: %v %v", ids(all), err)
	}
	if other, err := db.ListTokens(ctx, w.daveAdmin); err != nil || slices.Contains(ids(other), bobTok.ID) || slices.Contains(ids(other), revokedID) {
		t.Fatalf("another tenant's admin sees these tokens: %v %v", ids(other), err)
	}
	if err := db.RevokeToken(ctx, w.alice, bobTok.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("alice revoking bob's token: %v", err)
	}
	if err := db.RevokeToken(ctx, w.admin, bobTok.ID); err != nil {
		t.Fatalf("tenant admin revoking bob's token: %v", err)
	}
	if _, err := db.Authenticate(ctx, bobSecret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("token revoked by the admin still works: %v", err)
	}
	// The operator's path.
	cTok, cSecret, err := db.CreateToken(ctx, w.carol.UserID, "carol's", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.UserTokens(ctx, w.carol.UserID); err != nil || len(got) != 1 || got[0].ID != cTok.ID || got[0].Name != "carol's" {
		t.Fatalf("carol's tokens: %+v %v", got, err)
	}
	if err := db.RevokeAnyToken(ctx, cTok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, cSecret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("token revoked by the operator still works: %v", err)
	}
	if err := db.RevokeAnyToken(ctx, cTok.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("revoking twice: %v", err)
	}
	if err := db.RevokeAnyToken(ctx, "nope"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
}

// tampered changes a secret's last character to a different one.
func tampered(secret string) string {
	last := "A"
	if strings.HasSuffix(secret, "A") {
		last = "B"
	}
	return secret[:len(secret)-1] + last
}

func testWorkspaceTools(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	if set, extra, err := db.WorkspaceTools(ctx, w.alice, w.wsA.ID); err != nil || set != "core" || len(extra) != 0 {
		t.Fatalf("default: %q %v %v", set, extra, err)
	}
	if err := db.SetWorkspaceTools(ctx, w.wsA.ID, "chatbot", []string{"sqlQuery", "webSearch"}); err != nil {
		t.Fatal(err)
	}
	if set, extra, err := db.WorkspaceTools(ctx, w.victor, w.wsA.ID); err != nil || set != "chatbot" || strings.Join(extra, ",") != "sqlQuery,webSearch" {
		t.Fatalf("after set: %q %v %v", set, extra, err)
	}
	for _, p := range []tenancy.Principal{w.carol, w.dave} {
		if _, _, err := db.WorkspaceTools(ctx, p, w.wsA.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("outsider reads tools: %v", err)
		}
	}
	if err := db.SetWorkspaceTools(ctx, w.wsA.ID, "x", []string{"a,b"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("bad tool name: %v", err)
	}
	if err := db.SetWorkspaceTools(ctx, "nope", "x", nil); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown workspace: %v", err)
	}
	// The workspace's agent settings live beside its tool set.
	t.Run("EntityCache", func(t *testing.T) { testWorkspaceEntityCache(t, open) })
	t.Run("MCPExternalTools", func(t *testing.T) { testWorkspaceMCPExternalTools(t, open) })
}
