package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// sessionPrefix marks session secrets, as TokenPrefix marks API tokens.
const sessionPrefix = "ahs_"

func newSecret(prefix string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("store: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

func sessionHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// OpenSession signs in with an API token: it checks the token as
// Authenticate does and opens a session acting as the token's user until
// ttl has passed or the token ends, whichever is first. It returns the
// session and its secret. A deactivated user's token opens nothing.
func (db *DB) OpenSession(ctx context.Context, tokenSecret string, ttl time.Duration) (tenancy.Session, string, error) {
	hash, err := tenancy.HashToken(tokenSecret)
	if err != nil {
		return tenancy.Session{}, "", err
	}
	var tokenID string
	var p tenancy.Principal
	var expires, revoked, deactivated sql.NullInt64
	err = db.conn().queryRow(ctx, `SELECT t.id, u.tenant_id, u.id, u.admin, t.expires_at, t.revoked_at, u.deactivated_at
		FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`, hash).
		Scan(&tokenID, &p.TenantID, &p.UserID, &p.Admin, &expires, &revoked, &deactivated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return tenancy.Session{}, "", fmt.Errorf("%w: unknown API token", tenancy.ErrUnauthenticated)
	case err != nil:
		return tenancy.Session{}, "", fmt.Errorf("store: open session: %w", err)
	case revoked.Valid:
		return tenancy.Session{}, "", fmt.Errorf("%w: API token revoked", tenancy.ErrUnauthenticated)
	case expires.Valid && expires.Int64 <= micros(now()):
		return tenancy.Session{}, "", fmt.Errorf("%w: API token expired", tenancy.ErrUnauthenticated)
	case deactivated.Valid:
		return tenancy.Session{}, "", fmt.Errorf("%w: the user is deactivated", tenancy.ErrUnauthenticated)
	}
	created := now()
	s := tenancy.Session{ID: newID(), Principal: p, CSRF: newSecret(""), CreatedAt: created, ExpiresAt: created.Add(ttl)}
	if expires.Valid && fromMicros(expires.Int64).Before(s.ExpiresAt) {
		s.ExpiresAt = fromMicros(expires.Int64)
	}
	secret := newSecret(sessionPrefix)
	err = db.tx(ctx, func(c conn) error {
		pending, err := secondFactorPending(ctx, c, p.TenantID, tenancy.MethodToken)
		if err != nil {
			return err
		}
		s.SecondFactorPending = pending
		if _, err := c.exec(ctx, `INSERT INTO sessions (id, hash, token_id, csrf, created_at, expires_at, second_factor_pending) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			s.ID, sessionHash(secret), tokenID, s.CSRF, micros(created), micros(s.ExpiresAt), pending); err != nil {
			return err
		}
		return recordSignIn(ctx, c, p.UserID, created)
	})
	if err != nil {
		return tenancy.Session{}, "", fmt.Errorf("store: open session: %w", err)
	}
	return s, secret, nil
}

// recordSignIn notes when a user last opened a session.
func recordSignIn(ctx context.Context, c conn, userID string, at time.Time) error {
	_, err := c.exec(ctx, `UPDATE users SET last_sign_in_at = ? WHERE id = ?`, micros(at), userID)
	return err
}

// SessionBySecret returns the live session a cookie's secret stands for. An
// unknown, ended or expired session, one whose API token was revoked or has
// expired, or one of a deactivated user is ErrUnauthenticated.
func (db *DB) SessionBySecret(ctx context.Context, secret string) (tenancy.Session, error) {
	if len(secret) != len(sessionPrefix)+43 || secret[:len(sessionPrefix)] != sessionPrefix {
		return tenancy.Session{}, fmt.Errorf("%w: malformed session", tenancy.ErrUnauthenticated)
	}
	var s tenancy.Session
	var createdAt, expiresAt int64
	var ended, tokExpires, revoked, deactivated sql.NullInt64
	// A session stands for its user directly (user_id) or through an API
	// token (token_id), whose end ends it.
	err := db.conn().queryRow(ctx, `SELECT s.id, s.csrf, s.created_at, s.expires_at, s.ended_at, t.expires_at, t.revoked_at, u.tenant_id, u.id, u.admin,
		u.deactivated_at, s.provider, s.subject, s.sid, s.id_token, s.second_factor_pending
		FROM sessions s LEFT JOIN api_tokens t ON t.id = s.token_id JOIN users u ON u.id = COALESCE(s.user_id, t.user_id) WHERE s.hash = ?`, sessionHash(secret)).
		Scan(&s.ID, &s.CSRF, &createdAt, &expiresAt, &ended, &tokExpires, &revoked, &s.Principal.TenantID, &s.Principal.UserID, &s.Principal.Admin,
			&deactivated, &s.Origin.Provider, &s.Origin.Subject, &s.Origin.SID, &s.Origin.IDToken, &s.SecondFactorPending)
	nowUS := micros(now())
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return tenancy.Session{}, fmt.Errorf("%w: unknown session", tenancy.ErrUnauthenticated)
	case err != nil:
		return tenancy.Session{}, fmt.Errorf("store: session: %w", err)
	case ended.Valid:
		return tenancy.Session{}, fmt.Errorf("%w: signed out", tenancy.ErrUnauthenticated)
	case expiresAt <= nowUS:
		return tenancy.Session{}, fmt.Errorf("%w: session expired", tenancy.ErrUnauthenticated)
	case deactivated.Valid:
		return tenancy.Session{}, fmt.Errorf("%w: the user is deactivated", tenancy.ErrUnauthenticated)
	case revoked.Valid:
		return tenancy.Session{}, fmt.Errorf("%w: the session's API token was revoked", tenancy.ErrUnauthenticated)
	case tokExpires.Valid && tokExpires.Int64 <= nowUS:
		return tenancy.Session{}, fmt.Errorf("%w: the session's API token expired", tenancy.ErrUnauthenticated)
	}
	s.CreatedAt, s.ExpiresAt = fromMicros(createdAt), fromMicros(expiresAt)
	return s, nil
}

// EndSession signs a session out; ending an unknown or ended one is not an
// error (signing out twice is fine).
func (db *DB) EndSession(ctx context.Context, secret string) error {
	_, err := db.conn().exec(ctx, `UPDATE sessions SET ended_at = ? WHERE hash = ? AND ended_at IS NULL`, micros(now()), sessionHash(secret))
	if err != nil {
		return fmt.Errorf("store: end session: %w", err)
	}
	return nil
}

// Tenant returns the principal's own tenant.
func (db *DB) Tenant(ctx context.Context, p tenancy.Principal) (tenancy.Tenant, error) {
	var t tenancy.Tenant
	var created int64
	err := db.conn().queryRow(ctx, `SELECT id, name, created_at FROM tenants WHERE id = ?`, p.TenantID).Scan(&t.ID, &t.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return tenancy.Tenant{}, fmt.Errorf("%w: tenant", tenancy.ErrNotFound)
	}
	if err != nil {
		return tenancy.Tenant{}, fmt.Errorf("store: tenant: %w", err)
	}
	t.CreatedAt = fromMicros(created)
	return t, nil
}

// User returns the principal's own user record.
func (db *DB) User(ctx context.Context, p tenancy.Principal) (tenancy.User, error) {
	var u tenancy.User
	var created int64
	var deactivated, lastSignIn sql.NullInt64
	err := db.conn().queryRow(ctx, `SELECT id, tenant_id, email, name, admin, created_at, deactivated_at, last_sign_in_at FROM users WHERE id = ? AND tenant_id = ?`,
		p.UserID, p.TenantID).Scan(&u.ID, &u.TenantID, &u.Email, &u.Name, &u.Admin, &created, &deactivated, &lastSignIn)
	if errors.Is(err, sql.ErrNoRows) {
		return tenancy.User{}, fmt.Errorf("%w: user", tenancy.ErrNotFound)
	}
	if err != nil {
		return tenancy.User{}, fmt.Errorf("store: user: %w", err)
	}
	u.CreatedAt, u.DeactivatedAt, u.LastSignInAt = fromMicros(created), fromNullMicros(deactivated), fromNullMicros(lastSignIn)
	return u, nil
}
