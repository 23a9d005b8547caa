package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// testSessions: a session opened with an API token acts as its user, keeps
// only the secret's hash, ends on sign-out, at its expiry, and when its
// token is revoked or expires; bad tokens and secrets open nothing.
func testSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	tok, secret, err := db.CreateToken(ctx, w.alice.UserID, "browser", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, cookie, err := db.OpenSession(ctx, secret, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if s.Principal != w.alice || s.CSRF == "" || cookie == secret || !strings.HasPrefix(cookie, "ahs_") {
		t.Fatalf("session %+v cookie %q", s, cookie)
	}
	got, err := db.SessionBySecret(ctx, cookie)
	if err != nil || got.Principal != w.alice || got.CSRF != s.CSRF || got.ID != s.ID {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE hash = '"+cookie+"'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret stored in clear: %d %v", n, err)
	}
	u, err := db.User(ctx, w.alice)
	if err != nil || u.ID != w.alice.UserID {
		t.Fatalf("user: %+v %v", u, err)
	}
	if tn, err := db.Tenant(ctx, w.dave); err != nil || tn.ID != w.t2.ID {
		t.Fatalf("tenant: %+v %v", tn, err)
	}

	for _, c := range []struct{ name, token string }{
		{"empty", ""}, {"malformed", "nonsense"}, {"unknown", tenancy.NewTokenSecret()}, {"tampered", tampered(secret)},
	} {
		if _, _, err := db.OpenSession(ctx, c.token, time.Hour); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("open with %s token: %v", c.name, err)
		}
	}
	for _, c := range []struct{ name, secret string }{
		{"empty", ""}, {"api token", secret}, {"tampered", tampered(cookie)}, {"unknown", "ahs_" + strings.Repeat("A", 43)},
	} {
		if _, err := db.SessionBySecret(ctx, c.secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("%s secret: %v", c.name, err)
		}
	}

	// Sign-out ends this session only.
	_, other, err := db.OpenSession(ctx, secret, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EndSession(ctx, cookie); err != nil {
		t.Fatal(err)
	}
	if err := db.EndSession(ctx, cookie); err != nil {
		t.Fatalf("signing out twice: %v", err)
	}
	if _, err := db.SessionBySecret(ctx, cookie); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("after sign-out: %v", err)
	}
	if _, err := db.SessionBySecret(ctx, other); err != nil {
		t.Fatalf("the other session: %v", err)
	}

	// A session does not outlive its token, nor its own expiry. Expiry is
	// moved into the past in the database rather than waited for.
	soon := time.Now().Add(time.Minute)
	shortTok, short, err := db.CreateToken(ctx, w.bob.UserID, "short", &soon)
	if err != nil {
		t.Fatal(err)
	}
	s2, c2, err := db.OpenSession(ctx, short, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if s2.ExpiresAt.After(soon) {
		t.Fatalf("session expires %v, after its token (%v)", s2.ExpiresAt, soon)
	}
	s3, c3, err := db.OpenSession(ctx, secret, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Second).UnixMicro()
	for _, q := range []string{
		fmt.Sprintf("UPDATE api_tokens SET expires_at = %d WHERE id = '%s'", past, shortTok.ID),
		fmt.Sprintf("UPDATE sessions SET expires_at = %d WHERE id = '%s'", past, s3.ID),
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]string{"token expired": c2, "session expired": c3} {
		if _, err := db.SessionBySecret(ctx, c); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := db.RevokeToken(ctx, w.alice, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionBySecret(ctx, other); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("after the token's revocation: %v", err)
	}
	if _, _, err := db.OpenSession(ctx, secret, time.Hour); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("opening with a revoked token: %v", err)
	}
}
