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
		if _, err := c.exec(ctx, `UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL
			AND (user_id = ? OR token_id IN (SELECT id FROM api_tokens WHERE user_id = ?))`, t, userID, userID); err != nil {
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

// Person is a user of a tenant as the tenant's admins see them: the user
// record and the workspaces they belong to with their roles.
type Person struct {
	tenancy.User
	Workspaces []PersonWorkspace `json:"workspaces"`
	// Passkeys counts their passkeys.
	Passkeys int `json:"passkeys"`
}

// PersonWorkspace is one workspace membership of a person.
type PersonWorkspace struct {
	WorkspaceID string       `json:"workspaceId"`
	Name        string       `json:"name"`
	Role        tenancy.Role `json:"role"`
}

// People lists the users of a tenant with their memberships, by e-mail.
func (db *DB) People(ctx context.Context, tenantID string) ([]Person, error) {
	users, err := db.users(ctx, `WHERE tenant_id = ? ORDER BY email, id`, tenantID)
	if err != nil {
		return nil, err
	}
	out := make([]Person, len(users))
	byID := make(map[string]*Person, len(users))
	for i, u := range users {
		out[i] = Person{User: u, Workspaces: []PersonWorkspace{}}
		byID[u.ID] = &out[i]
	}
	rows, err := db.conn().query(ctx, `SELECT m.user_id, w.id, w.name, m.role FROM memberships m
		JOIN workspaces w ON w.id = m.workspace_id JOIN users u ON u.id = m.user_id
		WHERE u.tenant_id = ? AND w.tenant_id = ? ORDER BY w.name, w.id`, tenantID, tenantID)
	if err != nil {
		return nil, fmt.Errorf("store: people: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var userID string
		var w PersonWorkspace
		if err := rows.Scan(&userID, &w.WorkspaceID, &w.Name, &w.Role); err != nil {
			return nil, fmt.Errorf("store: people: %w", err)
		}
		if p := byID[userID]; p != nil {
			p.Workspaces = append(p.Workspaces, w)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: people: %w", err)
	}
	counts, err := db.conn().query(ctx, `SELECT k.user_id, COUNT(*) FROM passkeys k JOIN users u ON u.id = k.user_id
		WHERE u.tenant_id = ? GROUP BY k.user_id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("store: people: %w", err)
	}
	defer counts.Close()
	for counts.Next() {
		var userID string
		var n int
		if err := counts.Scan(&userID, &n); err != nil {
			return nil, fmt.Errorf("store: people: %w", err)
		}
		if p := byID[userID]; p != nil {
			p.Passkeys = n
		}
	}
	return out, counts.Err()
}

// Person returns one user of a tenant with their memberships; a user of
// another tenant is ErrNotFound.
func (db *DB) Person(ctx context.Context, tenantID, userID string) (Person, error) {
	people, err := db.People(ctx, tenantID)
	if err != nil {
		return Person{}, err
	}
	for _, p := range people {
		if p.ID == userID {
			return p, nil
		}
	}
	return Person{}, fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
}

// SetAdmin makes a user of the tenant a tenant admin or not. The change
// takes effect on the user's next request: sessions and tokens read the
// flag at each authentication.
func (db *DB) SetAdmin(ctx context.Context, tenantID, userID string, admin bool) error {
	res, err := db.conn().exec(ctx, `UPDATE users SET admin = ? WHERE id = ? AND tenant_id = ?`, admin, userID, tenantID)
	if err != nil {
		return fmt.Errorf("store: set admin: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
	}
	return nil
}

// ActiveAdmins counts the tenant's admins that are not deactivated, so the
// admin API can refuse to leave a tenant with none.
func (db *DB) ActiveAdmins(ctx context.Context, tenantID string) (int, error) {
	var n int
	err := db.conn().queryRow(ctx, `SELECT COUNT(*) FROM users WHERE tenant_id = ? AND admin = ? AND deactivated_at IS NULL`, tenantID, true).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: admins: %w", err)
	}
	return n, nil
}

// SetTenantMembership is SetMembership for a tenant's admin: the user and
// the workspace must both be the tenant's, else ErrNotFound.
func (db *DB) SetTenantMembership(ctx context.Context, tenantID string, m tenancy.Membership) error {
	return db.tx(ctx, func(c conn) error {
		var n int
		err := c.queryRow(ctx, `SELECT COUNT(*) FROM users u JOIN workspaces w ON w.tenant_id = u.tenant_id
			WHERE u.id = ? AND w.id = ? AND u.tenant_id = ?`, m.UserID, m.WorkspaceID, tenantID).Scan(&n)
		if err != nil {
			return fmt.Errorf("store: membership: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: user %q or workspace %q", tenancy.ErrNotFound, m.UserID, m.WorkspaceID)
		}
		return setMembership(ctx, c, m)
	})
}

// UserSessions lists a user's live sessions (not ended, not expired, not
// ended by their API token), newest first, however they were opened.
func (db *DB) UserSessions(ctx context.Context, userID string) ([]tenancy.Session, error) {
	t := micros(now())
	rows, err := db.conn().query(ctx, `SELECT s.id, s.provider, s.created_at, s.expires_at, u.tenant_id, u.id, u.admin
		FROM sessions s LEFT JOIN api_tokens t ON t.id = s.token_id JOIN users u ON u.id = COALESCE(s.user_id, t.user_id)
		WHERE u.id = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.deactivated_at IS NULL
		AND (s.token_id IS NULL OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?)))
		ORDER BY s.created_at DESC, s.id DESC`, userID, t, t)
	if err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	defer rows.Close()
	out := []tenancy.Session{}
	for rows.Next() {
		var s tenancy.Session
		var created, expires int64
		if err := rows.Scan(&s.ID, &s.Origin.Provider, &created, &expires, &s.Principal.TenantID, &s.Principal.UserID, &s.Principal.Admin); err != nil {
			return nil, fmt.Errorf("store: sessions: %w", err)
		}
		s.CreatedAt, s.ExpiresAt = fromMicros(created), fromMicros(expires)
		out = append(out, s)
	}
	return out, rows.Err()
}

// ownSession is the condition that a session (s) is the user's, opened
// directly or with one of their API tokens.
const ownSession = `(sessions.user_id = ? OR sessions.token_id IN (SELECT id FROM api_tokens WHERE user_id = ?))`

// EndUserSession ends one of the user's sessions by its id; another user's
// session, or an ended or unknown one, is ErrNotFound.
func (db *DB) EndUserSession(ctx context.Context, userID, sessionID string) error {
	res, err := db.conn().exec(ctx, `UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL AND `+ownSession,
		micros(now()), sessionID, userID, userID)
	if err != nil {
		return fmt.Errorf("store: end session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: session %q", tenancy.ErrNotFound, sessionID)
	}
	return nil
}

// EndOtherSessions ends every session of the user but keepID (the one
// asking) and returns how many it ended.
func (db *DB) EndOtherSessions(ctx context.Context, userID, keepID string) (int, error) {
	res, err := db.conn().exec(ctx, `UPDATE sessions SET ended_at = ? WHERE id <> ? AND ended_at IS NULL AND `+ownSession,
		micros(now()), keepID, userID, userID)
	if err != nil {
		return 0, fmt.Errorf("store: end sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
