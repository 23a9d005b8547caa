package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// People management of a tenant. These functions are scoped by tenant, not
// by principal: the caller (the admin API, SCIM provisioning) has decided
// that it may manage the tenant's people.

// DeactivateUser deactivates a user of the tenant: their sessions end for
// good and their API tokens stop working at once (Authenticate and
// SessionBySecret refuse them); their data, memberships and tokens stay, so
// ReactivateUser gives them back. Deactivating a deactivated user changes
// nothing; a user of another tenant is ErrNotFound.
func (db *DB) DeactivateUser(ctx context.Context, tenantID, userID string) error {
	return db.tx(ctx, func(c conn) error {
		t := micros(now())
		if err := userInTenant(ctx, c, tenantID, userID); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `UPDATE users SET deactivated_at = ? WHERE id = ? AND tenant_id = ? AND deactivated_at IS NULL`,
			t, userID, tenantID); err != nil {
			return fmt.Errorf("store: deactivate user: %w", err)
		}
		if _, err := c.exec(ctx, `UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL`, t, userID); err != nil {
			return fmt.Errorf("store: deactivate user: %w", err)
		}
		return nil
	})
}

// ReactivateUser lets a deactivated user of the tenant sign in again; their
// API tokens that are neither revoked nor expired work again, their ended
// sessions stay ended. Reactivating an active user changes nothing; a user
// of another tenant is ErrNotFound.
func (db *DB) ReactivateUser(ctx context.Context, tenantID, userID string) error {
	return db.tx(ctx, func(c conn) error {
		if err := userInTenant(ctx, c, tenantID, userID); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `UPDATE users SET deactivated_at = NULL WHERE id = ? AND tenant_id = ?`, userID, tenantID); err != nil {
			return fmt.Errorf("store: reactivate user: %w", err)
		}
		return nil
	})
}

// userInTenant is ErrNotFound unless userID is a user of tenantID.
func userInTenant(ctx context.Context, c conn, tenantID, userID string) error {
	var one int
	err := c.queryRow(ctx, `SELECT 1 FROM users WHERE id = ? AND tenant_id = ?`, userID, tenantID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
	}
	if err != nil {
		return fmt.Errorf("store: user: %w", err)
	}
	return nil
}
