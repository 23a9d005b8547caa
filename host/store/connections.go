package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/tenancy"
)

// connectionAuths are the auth schemes the table accepts.
var connectionAuths = map[string]bool{"oauth2": true, "token": true, "basic": true}

// CreateConnection stores a new connection owned by p. r.ID, when set, must
// be the id the secret was sealed for (the seal binds it); otherwise one is
// chosen. A second connection with the same provider and label is a conflict.
func (db *DB) CreateConnection(ctx context.Context, p tenancy.Principal, r connrecord.ConnectionRecord) (connrecord.ConnectionRecord, error) {
	if p.UserID == "" || p.TenantID == "" {
		return connrecord.ConnectionRecord{}, fmt.Errorf("%w: a connection needs a signed-in user", tenancy.ErrForbidden)
	}
	if r.Provider == "" || strings.TrimSpace(r.Label) == "" {
		return connrecord.ConnectionRecord{}, fmt.Errorf("%w: a connection needs a provider and a label", tenancy.ErrInvalid)
	}
	if !connectionAuths[r.Auth] {
		return connrecord.ConnectionRecord{}, fmt.Errorf("%w: unknown auth scheme %q (want oauth2, token or basic)", tenancy.ErrInvalid, r.Auth)
	}
	if len(r.Secret) == 0 {
		return connrecord.ConnectionRecord{}, fmt.Errorf("%w: a connection needs its sealed secret", tenancy.ErrInvalid)
	}
	if r.ID == "" {
		r.ID = newID()
	}
	r.TenantID, r.UserID = p.TenantID, p.UserID
	r.Version = 1
	r.CreatedAt = now()
	r.UpdatedAt = r.CreatedAt
	r.RevokedAt = time.Time{}
	_, err := db.conn().exec(ctx, `INSERT INTO connections (id, tenant_id, user_id, provider, label, auth, base_url, account, scopes, secret, expires_at, version, created_at, updated_at, deployment)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.TenantID, r.UserID, r.Provider, r.Label, r.Auth, r.BaseURL, r.Account, strings.Join(r.Scopes, " "),
		r.Secret, optMicros(r.ExpiresAt), r.Version, micros(r.CreatedAt), micros(r.UpdatedAt), r.Deployment)
	if isUnique(err) {
		return connrecord.ConnectionRecord{}, fmt.Errorf("%w: you already have a %s connection labelled %q", tenancy.ErrConflict, r.Provider, r.Label)
	}
	if err != nil {
		return connrecord.ConnectionRecord{}, fmt.Errorf("store: create connection: %w", err)
	}
	return r, nil
}

func optMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
}

const connectionCols = `id, tenant_id, user_id, provider, label, auth, base_url, account, scopes, secret, expires_at, version, revoked_at, created_at, updated_at, checked_at, last_error, deployment`

func scanConnection(s interface{ Scan(...any) error }) (connrecord.ConnectionRecord, error) {
	var r connrecord.ConnectionRecord
	var scopes string
	var expires, revoked, checked sql.NullInt64
	var created, updated int64
	if err := s.Scan(&r.ID, &r.TenantID, &r.UserID, &r.Provider, &r.Label, &r.Auth, &r.BaseURL, &r.Account, &scopes,
		&r.Secret, &expires, &r.Version, &revoked, &created, &updated, &checked, &r.LastError, &r.Deployment); err != nil {
		return connrecord.ConnectionRecord{}, err
	}
	if checked.Valid {
		r.CheckedAt = fromMicros(checked.Int64)
	}
	r.Scopes = strings.Fields(scopes)
	if expires.Valid {
		r.ExpiresAt = fromMicros(expires.Int64)
	}
	if revoked.Valid {
		r.RevokedAt = fromMicros(revoked.Int64)
	}
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	return r, nil
}

// Connection returns the connection id if p owns it. Nobody else, the
// tenant's admin included, gets another user's connection: it carries that
// user's remote identity. Others get ErrNotFound.
func (db *DB) Connection(ctx context.Context, p tenancy.Principal, id string) (connrecord.ConnectionRecord, error) {
	r, err := scanConnection(db.conn().queryRow(ctx, `SELECT `+connectionCols+` FROM connections WHERE id = ? AND tenant_id = ? AND user_id = ?`,
		id, p.TenantID, p.UserID))
	if errors.Is(err, sql.ErrNoRows) {
		return connrecord.ConnectionRecord{}, fmt.Errorf("%w: connection %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return connrecord.ConnectionRecord{}, fmt.Errorf("store: connection: %w", err)
	}
	return r, nil
}

// Connections lists p's connections (revoked ones included), oldest first.
func (db *DB) Connections(ctx context.Context, p tenancy.Principal) ([]connrecord.ConnectionRecord, error) {
	return queryAll(ctx, db.conn(), "connections", scanConnection, `SELECT `+connectionCols+` FROM connections WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, id`,
		p.TenantID, p.UserID)
}

// SetConnectionCheck records that p's connection id was tried at at, and
// the error then ("" when the provider answered). It leaves the secret and
// its version alone: a check is not a refresh.
func (db *DB) SetConnectionCheck(ctx context.Context, p tenancy.Principal, id string, at time.Time, lastError string) error {
	res, err := db.conn().exec(ctx, `UPDATE connections SET checked_at = ?, last_error = ? WHERE id = ? AND tenant_id = ? AND user_id = ?`,
		micros(at), lastError, id, p.TenantID, p.UserID)
	if err != nil {
		return fmt.Errorf("store: connection check: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: connection %q", tenancy.ErrNotFound, id)
	}
	return nil
}

// UpdateConnectionSecret replaces the sealed secret of p's connection id
// (a refresh) if its version is still version, and returns the new version.
// A concurrent change gives ErrConflict (the caller reads the connection
// again: the other refresh's token serves); a revoked connection gives
// ErrForbidden.
func (db *DB) UpdateConnectionSecret(ctx context.Context, p tenancy.Principal, id string, version int64, secret []byte, expiresAt time.Time) (int64, error) {
	if len(secret) == 0 {
		return 0, fmt.Errorf("%w: empty sealed secret", tenancy.ErrInvalid)
	}
	var next int64
	err := db.tx(ctx, func(c conn) error {
		var cur int64
		var revoked sql.NullInt64
		err := c.queryRow(ctx, `SELECT version, revoked_at FROM connections WHERE id = ? AND tenant_id = ? AND user_id = ?`, id, p.TenantID, p.UserID).Scan(&cur, &revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: connection %q", tenancy.ErrNotFound, id)
		}
		if err != nil {
			return fmt.Errorf("store: update connection: %w", err)
		}
		if revoked.Valid {
			return fmt.Errorf("%w: connection %q was revoked", tenancy.ErrForbidden, id)
		}
		if cur != version {
			return fmt.Errorf("%w: connection %q changed meanwhile (version %d, not %d)", tenancy.ErrConflict, id, cur, version)
		}
		next = cur + 1
		res, err := c.exec(ctx, `UPDATE connections SET secret = ?, expires_at = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
			secret, optMicros(expiresAt), next, micros(now()), id, cur)
		if err != nil {
			return fmt.Errorf("store: update connection: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: connection %q changed meanwhile", tenancy.ErrConflict, id)
		}
		return nil
	})
	return next, err
}

// RevokeConnection marks p's connection id revoked and wipes its secret:
// nothing can use it again. The owner revokes; so may the tenant's admin
// (revoking uses nothing of the connection). Revoking twice is a no-op.
func (db *DB) RevokeConnection(ctx context.Context, p tenancy.Principal, id string) error {
	q := `UPDATE connections SET revoked_at = ?, secret = ?, version = version + 1, updated_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL`
	args := []any{micros(now()), []byte{0}, micros(now()), id, p.TenantID}
	if !p.Admin {
		q += ` AND user_id = ?`
		args = append(args, p.UserID)
	}
	res, err := db.conn().exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: revoke connection: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	// Already revoked (no-op) or not p's to revoke.
	var owner string
	err = db.conn().queryRow(ctx, `SELECT user_id FROM connections WHERE id = ? AND tenant_id = ? AND revoked_at IS NOT NULL`, id, p.TenantID).Scan(&owner)
	if err == nil && (p.Admin || owner == p.UserID) {
		return nil
	}
	return fmt.Errorf("%w: connection %q", tenancy.ErrNotFound, id)
}

// SaveConnectionAuthState records an OAuth authorisation p started.
func (db *DB) SaveConnectionAuthState(ctx context.Context, p tenancy.Principal, s connrecord.ConnectionAuthState) error {
	if s.State == "" || len(s.Verifier) == 0 || s.Provider == "" || s.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: an authorisation state needs its state, verifier, provider and expiry", tenancy.ErrInvalid)
	}
	_, err := db.conn().exec(ctx, `INSERT INTO connection_auth_states (state, tenant_id, user_id, provider, label, verifier, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.State, p.TenantID, p.UserID, s.Provider, s.Label, s.Verifier, micros(s.ExpiresAt), micros(now()))
	if err != nil {
		return fmt.Errorf("store: save authorisation state: %w", err)
	}
	return nil
}

// TakeConnectionAuthState returns and deletes the authorisation state, once:
// only for the principal who started it and before it expires. Otherwise
// ErrNotFound (an unknown, used, expired or someone else's state).
func (db *DB) TakeConnectionAuthState(ctx context.Context, p tenancy.Principal, state string) (connrecord.ConnectionAuthState, error) {
	var s connrecord.ConnectionAuthState
	err := db.tx(ctx, func(c conn) error {
		var expires int64
		err := c.queryRow(ctx, `SELECT state, tenant_id, user_id, provider, label, verifier, expires_at FROM connection_auth_states WHERE state = ? AND tenant_id = ? AND user_id = ?`,
			state, p.TenantID, p.UserID).Scan(&s.State, &s.TenantID, &s.UserID, &s.Provider, &s.Label, &s.Verifier, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: unknown or used authorisation state", tenancy.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: authorisation state: %w", err)
		}
		res, err := c.exec(ctx, `DELETE FROM connection_auth_states WHERE state = ?`, state)
		if err != nil {
			return fmt.Errorf("store: authorisation state: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: authorisation state used meanwhile", tenancy.ErrNotFound)
		}
		s.ExpiresAt = fromMicros(expires)
		return nil
	})
	if err != nil {
		return connrecord.ConnectionAuthState{}, err
	}
	if !now().Before(s.ExpiresAt) {
		return connrecord.ConnectionAuthState{}, fmt.Errorf("%w: the authorisation expired; start it again", tenancy.ErrNotFound)
	}
	return s, nil
}
