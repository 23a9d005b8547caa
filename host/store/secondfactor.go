package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// ErrSecondFactorRequired is a session that is pending its second factor
// (a passkey of its person's): it may only complete or cancel that step.
// It is an ErrUnauthenticated.
var ErrSecondFactorRequired = fmt.Errorf("%w: a second factor is required: prove a passkey (POST /api/v1/session/second-factor) or sign out", tenancy.ErrUnauthenticated)

// PasskeySecondFactor reports whether tenantID requires a passkey as the
// second factor of browser sign-ins by API token or identity provider.
func (db *DB) PasskeySecondFactor(ctx context.Context, tenantID string) (bool, error) {
	var on bool
	err := db.conn().queryRow(ctx, `SELECT passkey_second_factor FROM tenants WHERE id = ?`, tenantID).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w: tenant", tenancy.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("store: second factor setting: %w", err)
	}
	return on, nil
}

// SetPasskeySecondFactor turns the principal's tenant's requirement on or
// off; only a tenant admin may. Sessions already open keep the state they
// were opened with (turning it on does not sign anyone out).
func (db *DB) SetPasskeySecondFactor(ctx context.Context, p tenancy.Principal, on bool) error {
	if !p.Admin {
		return fmt.Errorf("%w: only a tenant admin may change the second factor setting", tenancy.ErrForbidden)
	}
	res, err := db.conn().exec(ctx, `UPDATE tenants SET passkey_second_factor = ? WHERE id = ?`, on, p.TenantID)
	if err != nil {
		return fmt.Errorf("store: set second factor setting: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: tenant", tenancy.ErrNotFound)
	}
	return nil
}

// CompleteSecondFactor marks a pending session as having passed its second
// factor. A session that is not pending, ended or unknown is
// ErrUnauthenticated: a second factor is completed once.
func (db *DB) CompleteSecondFactor(ctx context.Context, sessionID string) error {
	res, err := db.conn().exec(ctx, `UPDATE sessions SET second_factor_pending = ? WHERE id = ? AND second_factor_pending = ? AND ended_at IS NULL AND expires_at > ?`,
		false, sessionID, true, micros(now()))
	if err != nil {
		return fmt.Errorf("store: complete second factor: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: complete second factor: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: the session is not waiting for a second factor", tenancy.ErrUnauthenticated)
	}
	return nil
}

// secondFactorPending is whether a new session of the tenant opened by
// method needs a second factor: a passkey sign-in is both factors itself.
func secondFactorPending(ctx context.Context, c conn, tenantID, method string) (bool, error) {
	if method == tenancy.MethodPasskey {
		return false, nil
	}
	var on bool
	if err := c.queryRow(ctx, `SELECT passkey_second_factor FROM tenants WHERE id = ?`, tenantID).Scan(&on); err != nil {
		return false, err
	}
	return on, nil
}
