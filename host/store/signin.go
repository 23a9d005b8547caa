package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Sign-in without an API token: an identity provider (OpenID Connect) or a
// passkey proves who a person is, and the caller opens a session for the
// user directly. Identities link a provider's subject to a user.

// OpenUserSession opens a session acting as a user, until ttl has passed;
// the caller has authenticated the person. It returns the session and its
// secret. An unknown user is ErrNotFound; a deactivated one
// ErrUnauthenticated. The user's last sign-in is recorded.
func (db *DB) OpenUserSession(ctx context.Context, userID string, ttl time.Duration, o tenancy.SessionOrigin) (tenancy.Session, string, error) {
	if ttl <= 0 {
		return tenancy.Session{}, "", fmt.Errorf("%w: a session needs a positive lifetime", tenancy.ErrInvalid)
	}
	var p tenancy.Principal
	var deactivated sql.NullInt64
	err := db.conn().queryRow(ctx, `SELECT tenant_id, id, admin, deactivated_at FROM users WHERE id = ?`, userID).
		Scan(&p.TenantID, &p.UserID, &p.Admin, &deactivated)
	if errors.Is(err, sql.ErrNoRows) {
		return tenancy.Session{}, "", fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
	}
	if err != nil {
		return tenancy.Session{}, "", fmt.Errorf("store: open session: %w", err)
	}
	if deactivated.Valid {
		return tenancy.Session{}, "", fmt.Errorf("%w: the user is deactivated", tenancy.ErrUnauthenticated)
	}
	created := now()
	s := tenancy.Session{ID: newID(), Principal: p, CSRF: newSecret(""), CreatedAt: created, ExpiresAt: created.Add(ttl), Origin: o}
	secret := newSecret(sessionPrefix)
	err = db.tx(ctx, func(c conn) error {
		pending, err := secondFactorPending(ctx, c, p.TenantID, s.Method())
		if err != nil {
			return err
		}
		s.SecondFactorPending = pending
		if _, err := c.exec(ctx, `INSERT INTO sessions (id, hash, user_id, csrf, created_at, expires_at, provider, subject, sid, id_token, second_factor_pending)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, sessionHash(secret), userID, s.CSRF, micros(created), micros(s.ExpiresAt),
			o.Provider, o.Subject, o.SID, o.IDToken, pending); err != nil {
			return err
		}
		return recordSignIn(ctx, c, userID, created)
	})
	if err != nil {
		return tenancy.Session{}, "", fmt.Errorf("store: open session: %w", err)
	}
	return s, secret, nil
}

// EndProviderSessions ends the live sessions a provider's logout names: of
// provider, with the provider's session id sid and/or its subject (at least
// one must be given; with both, a session must match both). It returns how
// many sessions it ended.
func (db *DB) EndProviderSessions(ctx context.Context, provider, subject, sid string) (int64, error) {
	if provider == "" || (subject == "" && sid == "") {
		return 0, fmt.Errorf("%w: a provider and its subject or session id are required", tenancy.ErrInvalid)
	}
	res, err := db.conn().exec(ctx, `UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL AND provider = ?
		AND (? = '' OR subject = ?) AND (? = '' OR sid = ?)`, micros(now()), provider, subject, subject, sid, sid)
	if err != nil {
		return 0, fmt.Errorf("store: end provider sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// IdentitySignIn is a person an identity provider vouched for, signing in
// to the provider's tenant.
type IdentitySignIn struct {
	// TenantID is the tenant the provider is bound to.
	TenantID string
	// Provider and Subject identify the person at the provider.
	Provider, Subject string
	// Email and Name are what the provider says; EmailVerified whether it
	// vouches for the address (only then is an existing user with that
	// address linked).
	Email, Name   string
	EmailVerified bool
	// Invitation is an invitation link's secret the person follows, or "".
	Invitation string
	// JustInTime provisions a person who is neither known nor invited.
	JustInTime bool
	// Admin and Grants are mapped from the provider's claims; they are
	// added to what the user has (a sign-in never takes a role away).
	Admin  bool
	Grants []Grant
}

// SignInOutcome says what SignInIdentity did.
type SignInOutcome struct {
	User tenancy.User
	// Created is true when the user was made by this sign-in.
	Created bool
	// Invitation is the invitation accepted, if any.
	Invitation *Invitation
}

// SignInIdentity resolves who a provider's person is, in one transaction:
// the user linked to the identity; else, with an invitation of the tenant,
// the invited user (created, or the existing user with the verified
// address); else the tenant's user with that verified address; else, with
// JustInTime, a new user. It links the identity, adds the mapped roles and
// returns the user. A person who is none of these is ErrForbidden; an
// identity linked to a user of another tenant is ErrForbidden (never
// across tenants). Nothing is half-made: on any error the store is as it
// was.
func (db *DB) SignInIdentity(ctx context.Context, in IdentitySignIn) (SignInOutcome, error) {
	if in.TenantID == "" || in.Provider == "" || in.Subject == "" {
		return SignInOutcome{}, fmt.Errorf("%w: tenant, provider and subject are required", tenancy.ErrInvalid)
	}
	email := normalEmail(in.Email)
	var out SignInOutcome
	err := db.tx(ctx, func(c conn) error {
		out = SignInOutcome{}
		var userID, userTenant string
		err := c.queryRow(ctx, `SELECT u.id, u.tenant_id FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider = ? AND i.subject = ?`,
			in.Provider, in.Subject).Scan(&userID, &userTenant)
		linked := err == nil
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("store: sign in: %w", err)
		case userTenant != in.TenantID:
			return fmt.Errorf("%w: this account belongs to another organisation", tenancy.ErrForbidden)
		}
		if !linked && in.EmailVerified && email != "" {
			err := c.queryRow(ctx, `SELECT id FROM users WHERE tenant_id = ? AND lower(email) = ?`, in.TenantID, email).Scan(&userID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("store: sign in: %w", err)
			}
		}
		if in.Invitation != "" {
			inv, err := invitationBySecret(ctx, c, in.Invitation)
			if err != nil {
				return err
			}
			if inv.TenantID != in.TenantID {
				return fmt.Errorf("%w: the invitation is to another organisation", tenancy.ErrForbidden)
			}
			if !in.EmailVerified {
				return fmt.Errorf("%w: the provider does not vouch for the address %s", tenancy.ErrForbidden, in.Email)
			}
			u, accepted, err := acceptInvitation(ctx, c, in.Invitation, tenancy.User{ID: userID, Email: email, Name: in.Name})
			if err != nil {
				return err
			}
			out.Created, userID, out.Invitation = userID == "", u.ID, &accepted
		}
		if userID == "" {
			if !in.JustInTime {
				return fmt.Errorf("%w: %s has no account here; ask an admin of the organisation for an invitation", tenancy.ErrForbidden, in.Email)
			}
			if email == "" {
				return fmt.Errorf("%w: the provider gave no e-mail address", tenancy.ErrForbidden)
			}
			name := strings.TrimSpace(in.Name)
			if name == "" {
				name = email
			}
			u, err := createUser(ctx, c, tenancy.User{TenantID: in.TenantID, Email: email, Name: name})
			if err != nil {
				return err
			}
			userID, out.Created = u.ID, true
		}
		if in.Admin {
			if _, err := c.exec(ctx, `UPDATE users SET admin = ? WHERE id = ? AND tenant_id = ?`, true, userID, in.TenantID); err != nil {
				return fmt.Errorf("store: sign in: %w", err)
			}
		}
		for _, g := range in.Grants {
			if err := addGrant(ctx, c, in.TenantID, userID, g); err != nil {
				return err
			}
		}
		t := micros(now())
		if linked {
			_, err = c.exec(ctx, `UPDATE identities SET last_seen_at = ?, email = ? WHERE provider = ? AND subject = ?`, t, email, in.Provider, in.Subject)
		} else {
			_, err = c.exec(ctx, `INSERT INTO identities (provider, subject, user_id, email, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)`,
				in.Provider, in.Subject, userID, email, t, t)
		}
		if err != nil {
			return fmt.Errorf("store: sign in: %w", err)
		}
		var created int64
		u := tenancy.User{ID: userID}
		if err := c.queryRow(ctx, `SELECT tenant_id, email, name, admin, created_at FROM users WHERE id = ?`, userID).
			Scan(&u.TenantID, &u.Email, &u.Name, &u.Admin, &created); err != nil {
			return fmt.Errorf("store: sign in: %w", err)
		}
		u.CreatedAt = fromMicros(created)
		out.User = u
		return nil
	})
	if err != nil {
		return SignInOutcome{}, err
	}
	return out, nil
}

// roleRank orders roles by what they allow, so a mapped role only ever
// raises a membership.
func roleRank(r tenancy.Role) int {
	read, write := r.Levels()
	return int(read)*10 + int(write)
}

// addGrant gives a user a workspace role unless they hold one that allows
// at least as much; the workspace must be the tenant's.
func addGrant(ctx context.Context, c conn, tenantID, userID string, g Grant) error {
	if err := g.Role.Validate(); err != nil {
		return err
	}
	var n int
	if err := c.queryRow(ctx, `SELECT COUNT(*) FROM workspaces WHERE id = ? AND tenant_id = ?`, g.WorkspaceID, tenantID).Scan(&n); err != nil {
		return fmt.Errorf("store: grant: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: workspace %q of the organisation (check the role mapping)", tenancy.ErrNotFound, g.WorkspaceID)
	}
	var cur string
	err := c.queryRow(ctx, `SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?`, g.WorkspaceID, userID).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: grant: %w", err)
	}
	if err == nil && roleRank(tenancy.Role(cur)) >= roleRank(g.Role) {
		return nil
	}
	return setMembership(ctx, c, tenancy.Membership{WorkspaceID: g.WorkspaceID, UserID: userID, Role: g.Role})
}

// SignInFlow is a sign-in under way at a provider, kept between the
// redirect there and the callback.
type SignInFlow struct {
	// State is the secret the provider hands back (kept as its hash).
	State    string
	Provider string
	Nonce    string
	// Verifier is the PKCE code verifier.
	Verifier string
	// Invitation is the invitation secret followed, or "".
	Invitation string
	// Return is the local path the browser goes to once signed in (an MCP
	// client's authorization request); "": the UI's home.
	Return    string
	ExpiresAt time.Time
}

// StartSignInFlow keeps a flow until its callback takes it or it expires;
// expired flows are removed on the way.
func (db *DB) StartSignInFlow(ctx context.Context, f SignInFlow) error {
	if f.State == "" || f.Provider == "" || f.Nonce == "" || f.Verifier == "" {
		return fmt.Errorf("%w: a sign-in flow needs state, provider, nonce and verifier", tenancy.ErrInvalid)
	}
	t := micros(now())
	return db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM signin_flows WHERE expires_at <= ?`, t); err != nil {
			return fmt.Errorf("store: sign-in flow: %w", err)
		}
		_, err := c.exec(ctx, `INSERT INTO signin_flows (state_hash, provider, nonce, verifier, invitation, return_to, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sessionHash(f.State), f.Provider, f.Nonce, f.Verifier, f.Invitation, f.Return, t, micros(f.ExpiresAt))
		if err != nil {
			return fmt.Errorf("store: sign-in flow: %w", err)
		}
		return nil
	})
}

// TakeSignInFlow returns the flow of a state and removes it, so a state
// (and the code that came with it) is good once. An unknown, taken or
// expired state is ErrUnauthenticated.
func (db *DB) TakeSignInFlow(ctx context.Context, state string) (SignInFlow, error) {
	var f SignInFlow
	err := db.tx(ctx, func(c conn) error {
		var expires int64
		err := c.queryRow(ctx, `SELECT provider, nonce, verifier, invitation, return_to, expires_at FROM signin_flows WHERE state_hash = ?`, sessionHash(state)).
			Scan(&f.Provider, &f.Nonce, &f.Verifier, &f.Invitation, &f.Return, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: this sign-in is unknown, finished or too old; start again", tenancy.ErrUnauthenticated)
		}
		if err != nil {
			return fmt.Errorf("store: sign-in flow: %w", err)
		}
		res, err := c.exec(ctx, `DELETE FROM signin_flows WHERE state_hash = ?`, sessionHash(state))
		if err != nil {
			return fmt.Errorf("store: sign-in flow: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: this sign-in was finished already", tenancy.ErrUnauthenticated)
		}
		f.State, f.ExpiresAt = state, fromMicros(expires)
		return nil
	})
	if err != nil {
		return SignInFlow{}, err
	}
	// Checked after the flow is removed: an expired one goes too.
	if !now().Before(f.ExpiresAt) {
		return SignInFlow{}, fmt.Errorf("%w: this sign-in took too long; start again", tenancy.ErrUnauthenticated)
	}
	return f, nil
}

// TenantByRef finds a tenant by its id or, failing that, its exact name
// (how the operator's configuration names it). A name two tenants share
// is ErrConflict; none is ErrNotFound.
func (db *DB) TenantByRef(ctx context.Context, ref string) (tenancy.Tenant, error) {
	rows, err := db.conn().query(ctx, `SELECT id, name, created_at FROM tenants WHERE id = ? OR name = ? ORDER BY (id = ?) DESC, id LIMIT 2`, ref, ref, ref)
	if err != nil {
		return tenancy.Tenant{}, fmt.Errorf("store: tenant: %w", err)
	}
	defer rows.Close()
	var found []tenancy.Tenant
	for rows.Next() {
		var t tenancy.Tenant
		var created int64
		if err := rows.Scan(&t.ID, &t.Name, &created); err != nil {
			return tenancy.Tenant{}, fmt.Errorf("store: tenant: %w", err)
		}
		t.CreatedAt = fromMicros(created)
		found = append(found, t)
	}
	if err := rows.Err(); err != nil {
		return tenancy.Tenant{}, fmt.Errorf("store: tenant: %w", err)
	}
	switch {
	case len(found) == 0:
		return tenancy.Tenant{}, fmt.Errorf("%w: tenant %q", tenancy.ErrNotFound, ref)
	case found[0].ID == ref:
		return found[0], nil
	case len(found) > 1:
		return tenancy.Tenant{}, fmt.Errorf("%w: two tenants are named %q; name the tenant by its id", tenancy.ErrConflict, ref)
	}
	return found[0], nil
}
