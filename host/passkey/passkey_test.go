package passkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/agenthost/agenthost/host/passkey"
	"github.com/agenthost/agenthost/host/passkey/passkeytest"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

type fixture struct {
	db          *store.DB
	svc         *passkey.Service
	auth        *passkeytest.Authenticator
	alice, bob  tenancy.Principal
	aliceRecord tenancy.User
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := passkey.New(db, passkey.Config{PublicURL: "https://agents.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := db.CreateTenant(ctx, "Acme")
	a, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "alice@acme.example", Name: "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "bob@acme.example", Name: "Bob"})
	return &fixture{db: db, svc: svc, auth: &passkeytest.Authenticator{Origin: "https://agents.example.com", RPID: "agents.example.com"},
		alice: tenancy.Principal{TenantID: tn.ID, UserID: a.ID}, bob: tenancy.Principal{TenantID: tn.ID, UserID: b.ID}, aliceRecord: a}
}

func (f *fixture) register(t *testing.T, p tenancy.Principal, name string) (store.Passkey, *passkeytest.Credential) {
	t.Helper()
	ctx := context.Background()
	id, opts, err := f.svc.BeginRegistration(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Response.RelyingParty.ID != "agents.example.com" || string(opts.Response.User.ID.(protocol.URLEncodedBase64)) != p.UserID {
		t.Fatalf("options: %+v", opts.Response)
	}
	resp, c := f.auth.Create(t, opts.Response.Challenge.String(), []byte(p.UserID))
	k, err := f.svc.FinishRegistration(ctx, p, id, name, resp)
	if err != nil {
		t.Fatal(err)
	}
	return k, c
}

func (f *fixture) signIn(t *testing.T, email string, c *passkeytest.Credential) (tenancy.User, store.Passkey, error) {
	t.Helper()
	ctx := context.Background()
	id, opts, err := f.svc.BeginSignIn(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	return f.svc.FinishSignIn(ctx, id, f.auth.Get(t, c, opts.Response.Challenge.String()))
}

// TestPasskeys: registration, sign-in (discoverable and by e-mail), a
// second passkey, revocation, and every assertion that must be refused:
// replayed, forged, for another server, a counter that goes back, another
// user's ceremony, a deactivated user.
func TestPasskeys(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	k1, c1 := f.register(t, f.alice, "laptop")
	if k1.Name != "laptop" || k1.UserID != f.alice.UserID {
		t.Fatalf("passkey: %+v", k1)
	}
	k2, c2 := f.register(t, f.alice, "phone")

	t.Run("sign in", func(t *testing.T) {
		for _, c := range []struct {
			name, email string
			cred        *passkeytest.Credential
			key         store.Passkey
		}{
			{"discoverable", "", c1, k1},
			{"by e-mail", "ALICE@acme.example", c2, k2},
			{"unknown e-mail falls back to discoverable", "nobody@acme.example", c1, k1},
		} {
			u, k, err := f.signIn(t, c.email, c.cred)
			if err != nil || u.ID != f.alice.UserID || k.ID != c.key.ID {
				t.Errorf("%s: %+v %+v %v", c.name, u, k, err)
			}
		}
		keys, _ := f.svc.List(ctx, f.alice)
		if len(keys) != 2 || keys[0].LastUsedAt == nil || keys[1].LastUsedAt == nil {
			t.Errorf("use not recorded: %+v", keys)
		}
	})

	t.Run("by e-mail asks for that person's passkeys", func(t *testing.T) {
		_, opts, err := f.svc.BeginSignIn(ctx, "alice@acme.example")
		if err != nil || len(opts.Response.AllowedCredentials) != 2 {
			t.Fatalf("%+v %v", opts, err)
		}
		_, opts, _ = f.svc.BeginSignIn(ctx, "")
		if len(opts.Response.AllowedCredentials) != 0 {
			t.Fatalf("discoverable sign-in names credentials: %+v", opts.Response.AllowedCredentials)
		}
	})

	t.Run("refused", func(t *testing.T) {
		id, opts, _ := f.svc.BeginSignIn(ctx, "")
		good := f.auth.Get(t, c1, opts.Response.Challenge.String())
		if _, _, err := f.svc.FinishSignIn(ctx, id, good); err != nil {
			t.Fatal(err)
		}
		accepted := c1.Counter // the last counter the server saw
		// The same assertion again: its ceremony is used up.
		if _, _, err := f.svc.FinishSignIn(ctx, id, good); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("replayed to its ceremony: %v", err)
		}
		// …and a new ceremony has another challenge.
		id2, _, _ := f.svc.BeginSignIn(ctx, "")
		if _, _, err := f.svc.FinishSignIn(ctx, id2, good); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("replayed to a new ceremony: %v", err)
		}
		cases := []struct {
			name string
			make func(challenge string) []byte
		}{
			{"forged signature", func(ch string) []byte {
				c1.Counter++
				return f.auth.Assert(t, c1, ch, c1.Counter, func(sig []byte) []byte { sig[len(sig)-1] ^= 1; return sig })
			}},
			{"counter gone back", func(ch string) []byte { return f.auth.Assert(t, c1, ch, 1, nil) }},
			{"counter not increased", func(ch string) []byte { return f.auth.Assert(t, c1, ch, accepted, nil) }},
			{"other origin", func(ch string) []byte {
				evil := &passkeytest.Authenticator{Origin: "https://evil.example", RPID: "agents.example.com"}
				c1.Counter++
				return evil.Assert(t, c1, ch, c1.Counter, nil)
			}},
			{"other RP ID", func(ch string) []byte {
				evil := &passkeytest.Authenticator{Origin: "https://agents.example.com", RPID: "evil.example"}
				c1.Counter++
				return evil.Assert(t, c1, ch, c1.Counter, nil)
			}},
			{"unknown key under alice's user handle", func(ch string) []byte {
				other := &passkeytest.Authenticator{Origin: f.auth.Origin, RPID: f.auth.RPID}
				_, c := other.Create(t, "x", []byte(f.alice.UserID))
				return other.Get(t, c, ch)
			}},
			{"alice's key under bob's user handle", func(ch string) []byte {
				swapped := *c1
				swapped.UserHandle = []byte(f.bob.UserID)
				c1.Counter++
				swapped.Counter = c1.Counter
				return f.auth.Assert(t, &swapped, ch, swapped.Counter, nil)
			}},
			{"not JSON", func(string) []byte { return []byte("{") }},
		}
		for _, c := range cases {
			id, opts, _ := f.svc.BeginSignIn(ctx, "")
			_, _, err := f.svc.FinishSignIn(ctx, id, c.make(opts.Response.Challenge.String()))
			t.Logf("%s: %v", c.name, err)
			if !errors.Is(err, tenancy.ErrUnauthenticated) {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		// After all that, the real authenticator still signs in.
		if _, _, err := f.signIn(t, "", c1); err != nil {
			t.Errorf("the genuine passkey after refused attempts: %v", err)
		}
	})

	t.Run("registration refused", func(t *testing.T) {
		id, opts, _ := f.svc.BeginRegistration(ctx, f.alice)
		resp, _ := f.auth.Create(t, opts.Response.Challenge.String(), []byte(f.alice.UserID))
		if _, err := f.svc.FinishRegistration(ctx, f.bob, id, "stolen", resp); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("another user's ceremony: %v", err)
		}
		id, _, _ = f.svc.BeginRegistration(ctx, f.alice)
		resp, _ = f.auth.Create(t, "wrong-challenge", []byte(f.alice.UserID))
		if _, err := f.svc.FinishRegistration(ctx, f.alice, id, "x", resp); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("wrong challenge: %v", err)
		}
		id, opts, _ = f.svc.BeginRegistration(ctx, f.alice)
		if _, err := f.svc.FinishRegistration(ctx, f.alice, id, " ", resp); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("no name: %v", err)
		}
		if _, _, err := f.svc.BeginRegistration(ctx, tenancy.Principal{TenantID: "other", UserID: f.alice.UserID}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("principal of another tenant: %v", err)
		}
		if keys, _ := f.svc.List(ctx, f.alice); len(keys) != 2 {
			t.Errorf("refused registrations added passkeys: %+v", keys)
		}
		_ = opts
	})

	t.Run("revoked passkey signs in no more", func(t *testing.T) {
		if _, err := f.svc.Remove(ctx, f.bob, k1.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("bob removes alice's passkey: %v", err)
		}
		if _, err := f.svc.Remove(ctx, f.alice, k1.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.signIn(t, "", c1); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("revoked passkey: %v", err)
		}
		if _, _, err := f.signIn(t, "alice@acme.example", c1); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("revoked passkey by e-mail: %v", err)
		}
		if u, _, err := f.signIn(t, "", c2); err != nil || u.ID != f.alice.UserID {
			t.Errorf("the other passkey: %v", err)
		}
	})

	t.Run("deactivated person", func(t *testing.T) {
		if err := f.db.DeactivateUser(ctx, f.alice.TenantID, f.alice.UserID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.signIn(t, "", c2); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("deactivated: %v", err)
		}
		if err := f.db.ReactivateUser(ctx, f.alice.TenantID, f.alice.UserID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.signIn(t, "", c2); err != nil {
			t.Errorf("reactivated: %v", err)
		}
	})
}

// TestCeremonyExpiry: a ceremony finished after its time is refused.
func TestCeremonyExpiry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, c := f.register(t, f.alice, "laptop")
	svc, err := passkey.New(f.db, passkey.Config{PublicURL: "https://agents.example.com", CeremonyTTL: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id, opts, _ := svc.BeginSignIn(ctx, "")
	time.Sleep(100 * time.Millisecond)
	if _, _, err := svc.FinishSignIn(ctx, id, f.auth.Get(t, c, opts.Response.Challenge.String())); !errors.Is(err, tenancy.ErrUnauthenticated) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired ceremony: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, u := range []string{"", "agents.example.com", "ftp://x", "https://"} {
		if _, err := passkey.New(nil, passkey.Config{PublicURL: u}); err == nil {
			t.Errorf("public URL %q accepted", u)
		}
	}
	s, err := passkey.New(nil, passkey.Config{PublicURL: "http://localhost:8080/"})
	if err != nil || s.RPID() != "localhost" {
		t.Errorf("localhost: %v", err)
	}
}

// TestInvitation: a person follows an invitation link, registers a passkey
// and becomes the invited user with the invitation's roles; the passkey
// signs them in; the link works once and only with its own ceremony.
func TestInvitation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	admin, err := f.db.CreateUser(ctx, tenancy.User{TenantID: f.alice.TenantID, Email: "root@acme.example", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := f.db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: f.alice.TenantID, Name: "Desk"})
	ap := tenancy.Principal{TenantID: admin.TenantID, UserID: admin.ID, Admin: true}
	_, secret, err := f.db.CreateInvitation(ctx, ap, store.NewInvitation{Email: "erin@acme.example", TTL: time.Hour,
		Workspaces: []store.Grant{{WorkspaceID: ws.ID, Role: tenancy.RoleMember}}})
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := f.db.CreateInvitation(ctx, ap, store.NewInvitation{Email: "fred@acme.example", TTL: time.Hour})

	if _, _, _, err := f.svc.BeginInvitation(ctx, "ahi_nonsense"); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("unknown invitation: %v", err)
	}
	id, opts, email, err := f.svc.BeginInvitation(ctx, secret)
	if err != nil || email != "erin@acme.example" || opts.Response.User.Name != "erin@acme.example" {
		t.Fatalf("begin: %q %v", email, err)
	}
	handle := []byte(opts.Response.User.ID.(protocol.URLEncodedBase64))
	resp, _ := f.auth.Create(t, opts.Response.Challenge.String(), handle)
	// Another invitation's link cannot finish this ceremony (and uses it up).
	if _, _, err := f.svc.FinishInvitation(ctx, other, id, "laptop", resp); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("other invitation: %v", err)
	}
	id, opts, _, _ = f.svc.BeginInvitation(ctx, secret)
	handle = []byte(opts.Response.User.ID.(protocol.URLEncodedBase64))
	resp, c := f.auth.Create(t, opts.Response.Challenge.String(), handle)
	u, k, err := f.svc.FinishInvitation(ctx, secret, id, "laptop", resp)
	if err != nil || u.Email != "erin@acme.example" || u.TenantID != f.alice.TenantID || k.UserID != u.ID {
		t.Fatalf("finish: %+v %+v %v", u, k, err)
	}
	if p, err := f.db.Person(ctx, u.TenantID, u.ID); err != nil || len(p.Workspaces) != 1 || p.Workspaces[0].Role != tenancy.RoleMember {
		t.Errorf("invited roles: %+v %v", p, err)
	}
	if got, _, err := f.signIn(t, "", c); err != nil || got.ID != u.ID {
		t.Errorf("sign-in with the invitation's passkey: %+v %v", got, err)
	}
	if got, _, err := f.signIn(t, "erin@acme.example", c); err != nil || got.ID != u.ID {
		t.Errorf("sign-in by e-mail with the invitation's passkey: %+v %v", got, err)
	}
	// A second passkey of the same person keeps their handle.
	ep := tenancy.Principal{TenantID: u.TenantID, UserID: u.ID}
	rid, ropts, err := f.svc.BeginRegistration(ctx, ep)
	if err != nil || string(ropts.Response.User.ID.(protocol.URLEncodedBase64)) != string(handle) {
		t.Fatalf("second registration: %v", err)
	}
	resp2, c2 := f.auth.Create(t, ropts.Response.Challenge.String(), handle)
	if _, err := f.svc.FinishRegistration(ctx, ep, rid, "phone", resp2); err != nil {
		t.Fatal(err)
	}
	if got, _, err := f.signIn(t, "", c2); err != nil || got.ID != u.ID {
		t.Errorf("second passkey: %v", err)
	}
	// The link is used.
	if _, _, _, err := f.svc.BeginInvitation(ctx, secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("used invitation: %v", err)
	}
}

// TestSecondFactor: a second-factor ceremony is the person's own, narrowed
// to their passkeys, used once; a sign-in ceremony does not count, nor
// does another person's passkey or ceremony, nor a person without one.
func TestSecondFactor(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if _, _, err := f.svc.BeginSecondFactor(ctx, f.alice); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("without a passkey: %v", err)
	}
	k, c := f.register(t, f.alice, "laptop")
	_, cb := f.register(t, f.bob, "bob's")
	id, opts, err := f.svc.BeginSecondFactor(ctx, f.alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Response.AllowedCredentials) != 1 {
		t.Fatalf("not narrowed to the person's passkeys: %+v", opts.Response.AllowedCredentials)
	}
	answer := f.auth.Get(t, c, opts.Response.Challenge.String())
	if _, err := f.svc.FinishSecondFactor(ctx, f.bob, id, answer); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("another person's ceremony: %v", err)
	}
	// That try used the ceremony up.
	if _, err := f.svc.FinishSecondFactor(ctx, f.alice, id, answer); err == nil {
		t.Fatal("a used ceremony answered again")
	}
	id, opts, _ = f.svc.BeginSecondFactor(ctx, f.alice)
	if _, err := f.svc.FinishSecondFactor(ctx, f.alice, id, f.auth.Get(t, cb, opts.Response.Challenge.String())); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("another person's passkey: %v", err)
	}
	signInID, signInOpts, _ := f.svc.BeginSignIn(ctx, "alice@acme.example")
	if _, err := f.svc.FinishSecondFactor(ctx, f.alice, signInID, f.auth.Get(t, c, signInOpts.Response.Challenge.String())); err == nil {
		t.Fatal("a sign-in ceremony counted as a second factor")
	}
	id, opts, _ = f.svc.BeginSecondFactor(ctx, f.alice)
	got, err := f.svc.FinishSecondFactor(ctx, f.alice, id, f.auth.Get(t, c, opts.Response.Challenge.String()))
	if err != nil || got.ID != k.ID {
		t.Fatalf("own passkey: %+v %v", got, err)
	}
}
