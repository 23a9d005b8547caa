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

// Administrative operations: they make tenants, users and workspaces and are
// called by operators' tooling (CLI, admin API), not on a user's behalf.

// CreateTenant makes a tenant.
func (db *DB) CreateTenant(ctx context.Context, name string) (tenancy.Tenant, error) {
	return createTenant(ctx, db.conn(), name)
}

func createTenant(ctx context.Context, c conn, name string) (tenancy.Tenant, error) {
	if strings.TrimSpace(name) == "" {
		return tenancy.Tenant{}, fmt.Errorf("%w: tenant name is empty", tenancy.ErrInvalid)
	}
	t := tenancy.Tenant{ID: newID(), Name: name, CreatedAt: now()}
	_, err := c.exec(ctx, `INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)`, t.ID, t.Name, micros(t.CreatedAt))
	if err != nil {
		return tenancy.Tenant{}, fmt.Errorf("store: create tenant: %w", err)
	}
	return t, nil
}

// CreateUser makes a user of a tenant; the e-mail address is unique per tenant.
func (db *DB) CreateUser(ctx context.Context, u tenancy.User) (tenancy.User, error) {
	return createUser(ctx, db.conn(), u)
}

func createUser(ctx context.Context, c conn, u tenancy.User) (tenancy.User, error) {
	if strings.TrimSpace(u.Email) == "" {
		return tenancy.User{}, fmt.Errorf("%w: user e-mail is empty", tenancy.ErrInvalid)
	}
	u.ID, u.CreatedAt = newID(), now()
	_, err := c.exec(ctx, `INSERT INTO users (id, tenant_id, email, name, admin, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		u.ID, u.TenantID, u.Email, u.Name, u.Admin, micros(u.CreatedAt))
	switch {
	case isUnique(err):
		return tenancy.User{}, fmt.Errorf("%w: a user with e-mail %q exists in this tenant", tenancy.ErrConflict, u.Email)
	case isForeignKey(err):
		return tenancy.User{}, fmt.Errorf("%w: tenant %q", tenancy.ErrNotFound, u.TenantID)
	case err != nil:
		return tenancy.User{}, fmt.Errorf("store: create user: %w", err)
	}
	return u, nil
}

// CreateWorkspace makes a workspace of a tenant.
func (db *DB) CreateWorkspace(ctx context.Context, w tenancy.Workspace) (tenancy.Workspace, error) {
	return createWorkspace(ctx, db.conn(), w)
}

func createWorkspace(ctx context.Context, c conn, w tenancy.Workspace) (tenancy.Workspace, error) {
	if strings.TrimSpace(w.Name) == "" {
		return tenancy.Workspace{}, fmt.Errorf("%w: workspace name is empty", tenancy.ErrInvalid)
	}
	w.ID, w.CreatedAt = newID(), now()
	_, err := c.exec(ctx, `INSERT INTO workspaces (id, tenant_id, name, kind, created_at) VALUES (?, ?, ?, ?, ?)`,
		w.ID, w.TenantID, w.Name, w.Kind, micros(w.CreatedAt))
	switch {
	case isForeignKey(err):
		return tenancy.Workspace{}, fmt.Errorf("%w: tenant %q", tenancy.ErrNotFound, w.TenantID)
	case err != nil:
		return tenancy.Workspace{}, fmt.Errorf("store: create workspace: %w", err)
	}
	return w, nil
}

// SetMembership gives a user a role in a workspace of the same tenant,
// replacing any role it had; role "" removes the membership.
func (db *DB) SetMembership(ctx context.Context, m tenancy.Membership) error {
	return setMembership(ctx, db.conn(), m)
}

func setMembership(ctx context.Context, c conn, m tenancy.Membership) error {
	if m.Role == "" {
		_, err := c.exec(ctx, `DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?`, m.WorkspaceID, m.UserID)
		return err
	}
	if err := m.Role.Validate(); err != nil {
		return err
	}
	// The user and the workspace must share a tenant: a membership is never a
	// bridge between tenants.
	var n int
	err := c.queryRow(ctx, `SELECT COUNT(*) FROM users u JOIN workspaces w ON w.tenant_id = u.tenant_id WHERE u.id = ? AND w.id = ?`,
		m.UserID, m.WorkspaceID).Scan(&n)
	if err != nil {
		return fmt.Errorf("store: membership: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: user %q or workspace %q (they must exist in the same tenant)", tenancy.ErrNotFound, m.UserID, m.WorkspaceID)
	}
	_, err = c.exec(ctx, `INSERT INTO memberships (workspace_id, user_id, role) VALUES (?, ?, ?)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role`, m.WorkspaceID, m.UserID, string(m.Role))
	if err != nil {
		return fmt.Errorf("store: membership: %w", err)
	}
	return nil
}

// CreateToken issues an API token for a user and returns its record and the
// secret, which is not kept and cannot be shown again.
func (db *DB) CreateToken(ctx context.Context, userID, name string, expires *time.Time) (tenancy.Token, string, error) {
	return createToken(ctx, db.conn(), userID, name, expires)
}

func createToken(ctx context.Context, c conn, userID, name string, expires *time.Time) (tenancy.Token, string, error) {
	secret := tenancy.NewTokenSecret()
	hash, err := tenancy.HashToken(secret)
	if err != nil {
		return tenancy.Token{}, "", err
	}
	t := tenancy.Token{ID: newID(), UserID: userID, Name: name, CreatedAt: now(), ExpiresAt: expires}
	_, err = c.exec(ctx, `INSERT INTO api_tokens (id, user_id, name, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.UserID, t.Name, hash, micros(t.CreatedAt), nullMicros(expires))
	switch {
	case isForeignKey(err):
		return tenancy.Token{}, "", fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
	case err != nil:
		return tenancy.Token{}, "", fmt.Errorf("store: create token: %w", err)
	}
	return t, secret, nil
}

// RevokeToken ends a token of the principal's own (or, for an admin, of any
// user of the tenant).
func (db *DB) RevokeToken(ctx context.Context, p tenancy.Principal, tokenID string) error {
	res, err := db.conn().exec(ctx, `UPDATE api_tokens SET revoked_at = ?
		WHERE id = ? AND revoked_at IS NULL AND user_id IN (SELECT id FROM users WHERE tenant_id = ? AND (id = ? OR ?))`,
		micros(now()), tokenID, p.TenantID, p.UserID, p.Admin)
	if err != nil {
		return fmt.Errorf("store: revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: token %q", tenancy.ErrNotFound, tokenID)
	}
	return nil
}

// ListTokens lists the API tokens the principal may see and revoke: its
// own, or every token of the tenant's users for a tenant admin. Revoked and
// expired tokens are listed too (with their times), newest first; secrets
// are never kept, so never listed.
func (db *DB) ListTokens(ctx context.Context, p tenancy.Principal) ([]tenancy.Token, error) {
	return db.listTokens(ctx, `SELECT t.id, t.user_id, t.name, t.created_at, t.expires_at, t.revoked_at
		FROM api_tokens t JOIN users u ON u.id = t.user_id
		WHERE u.tenant_id = ? AND (t.user_id = ? OR ?) ORDER BY t.created_at DESC, t.id`, p.TenantID, p.UserID, p.Admin)
}

// UserTokens lists a user's API tokens, newest first: the operator's
// (CLI) path, outside any principal's scope.
func (db *DB) UserTokens(ctx context.Context, userID string) ([]tenancy.Token, error) {
	return db.listTokens(ctx, `SELECT id, user_id, name, created_at, expires_at, revoked_at
		FROM api_tokens WHERE user_id = ? ORDER BY created_at DESC, id`, userID)
}

func (db *DB) listTokens(ctx context.Context, query string, args ...any) ([]tenancy.Token, error) {
	rows, err := db.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	defer rows.Close()
	out := []tenancy.Token{}
	for rows.Next() {
		var t tenancy.Token
		var created int64
		var expires, revoked sql.NullInt64
		if err := rows.Scan(&t.ID, &t.UserID, &t.Name, &created, &expires, &revoked); err != nil {
			return nil, fmt.Errorf("store: list tokens: %w", err)
		}
		t.CreatedAt, t.ExpiresAt, t.RevokedAt = fromMicros(created), fromNullMicros(expires), fromNullMicros(revoked)
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeAnyToken ends any token by its id: the operator's (CLI) path,
// outside any principal's scope. An unknown or already revoked token is
// ErrNotFound.
func (db *DB) RevokeAnyToken(ctx context.Context, tokenID string) error {
	res, err := db.conn().exec(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, micros(now()), tokenID)
	if err != nil {
		return fmt.Errorf("store: revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: token %q (unknown or already revoked)", tenancy.ErrNotFound, tokenID)
	}
	return nil
}

// Authenticate returns the principal an API token secret stands for. A
// malformed, unknown, expired or revoked token, or one of a deactivated
// user, is ErrUnauthenticated.
func (db *DB) Authenticate(ctx context.Context, secret string) (tenancy.Principal, error) {
	hash, err := tenancy.HashToken(secret)
	if err != nil {
		return tenancy.Principal{}, err
	}
	// Lookups arriving together share one query (tokenlookup.go).
	r, err := db.tokens.lookup(ctx, hash)
	p, expires, revoked := r.p, r.expires, r.revoked
	switch {
	case err != nil:
		return tenancy.Principal{}, err
	case !r.found:
		return tenancy.Principal{}, fmt.Errorf("%w: unknown API token", tenancy.ErrUnauthenticated)
	case revoked.Valid:
		return tenancy.Principal{}, fmt.Errorf("%w: API token revoked", tenancy.ErrUnauthenticated)
	case expires.Valid && expires.Int64 <= micros(now()):
		return tenancy.Principal{}, fmt.Errorf("%w: API token expired", tenancy.ErrUnauthenticated)
	case r.deactivated.Valid:
		return tenancy.Principal{}, fmt.Errorf("%w: the token's user is deactivated", tenancy.ErrUnauthenticated)
	}
	return p, nil
}

// Workspaces lists the workspaces the principal belongs to (all of the tenant
// for an admin).
func (db *DB) Workspaces(ctx context.Context, p tenancy.Principal) ([]tenancy.Workspace, error) {
	rows, err := db.conn().query(ctx, `SELECT id, tenant_id, name, kind, created_at FROM workspaces
		WHERE tenant_id = ? AND (? OR id IN (SELECT workspace_id FROM memberships WHERE user_id = ?)) ORDER BY name, id`,
		p.TenantID, p.Admin, p.UserID)
	if err != nil {
		return nil, fmt.Errorf("store: workspaces: %w", err)
	}
	defer rows.Close()
	var out []tenancy.Workspace
	for rows.Next() {
		var w tenancy.Workspace
		var created int64
		if err := rows.Scan(&w.ID, &w.TenantID, &w.Name, &w.Kind, &created); err != nil {
			return nil, err
		}
		w.CreatedAt = fromMicros(created)
		out = append(out, w)
	}
	return out, rows.Err()
}

// Levels returns the principal's read and write levels in a workspace:
// ALL for a tenant admin, the role's levels for a member, and ErrNotFound
// when the workspace is not the principal's to see.
func (db *DB) Levels(ctx context.Context, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error) {
	return workspaceLevels(ctx, db.conn(), p, workspaceID)
}

// workspaceLevels is Levels on any connection (a transaction's too): the one
// place a principal's membership becomes access levels.
func workspaceLevels(ctx context.Context, c conn, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error) {
	var tenant string
	var role sql.NullString
	err = c.queryRow(ctx, `SELECT w.tenant_id, m.role FROM workspaces w
		LEFT JOIN memberships m ON m.workspace_id = w.id AND m.user_id = ? WHERE w.id = ?`, p.UserID, workspaceID).Scan(&tenant, &role)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (tenant != p.TenantID || (!p.Admin && !role.Valid))) {
		return tenancy.None, tenancy.None, fmt.Errorf("%w: workspace %q", tenancy.ErrNotFound, workspaceID)
	}
	if err != nil {
		return tenancy.None, tenancy.None, fmt.Errorf("store: workspace levels: %w", err)
	}
	if p.Admin {
		return tenancy.All, tenancy.All, nil
	}
	read, write = tenancy.Role(role.String).Levels()
	return read, write, nil
}

// WorkspaceTools returns the tool set and extra tools of a workspace the
// principal belongs to.
func (db *DB) WorkspaceTools(ctx context.Context, p tenancy.Principal, workspaceID string) (set string, extra []string, err error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return "", nil, err
	}
	var extras string
	if err := db.conn().queryRow(ctx, `SELECT tool_set, extra_tools FROM workspaces WHERE id = ?`, workspaceID).Scan(&set, &extras); err != nil {
		return "", nil, fmt.Errorf("store: workspace tools: %w", err)
	}
	for _, t := range strings.Split(extras, ",") {
		if t = strings.TrimSpace(t); t != "" {
			extra = append(extra, t)
		}
	}
	return set, extra, nil
}

// SetWorkspaceTools sets a workspace's tool set and extra tools
// (administrative).
func (db *DB) SetWorkspaceTools(ctx context.Context, workspaceID, set string, extra []string) error {
	for _, t := range extra {
		if t == "" || strings.ContainsAny(t, ", \t\n") {
			return fmt.Errorf("%w: tool name %q", tenancy.ErrInvalid, t)
		}
	}
	if set == "" {
		set = "core"
	}
	res, err := db.conn().exec(ctx, `UPDATE workspaces SET tool_set = ?, extra_tools = ? WHERE id = ?`, set, strings.Join(extra, ","), workspaceID)
	if err != nil {
		return fmt.Errorf("store: workspace tools: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: workspace %q", tenancy.ErrNotFound, workspaceID)
	}
	return nil
}
