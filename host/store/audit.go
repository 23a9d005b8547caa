package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
)

const auditColumns = `id, tenant_id, at, actor_kind, actor_id, actor_via, ip, user_agent, action, target_type, target_id, workspace_id, detail`

// AppendAudit appends e (normalized by host/audit) to its tenant's audit
// log; its id and time are the store's. There is no way to change an entry
// afterwards: the tables' triggers refuse updates.
func (db *DB) AppendAudit(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	if e.TenantID == "" || e.Action == "" || e.Actor.Kind == "" {
		return audit.Entry{}, fmt.Errorf("store: an audit entry needs a tenant, an action and an actor")
	}
	if len(e.Detail) == 0 {
		e.Detail = []byte(`{}`)
	}
	e.ID, e.At = newID(), now()
	_, err := db.conn().exec(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.TenantID, micros(e.At), string(e.Actor.Kind), e.Actor.ID, e.Actor.Via, e.IP, e.UserAgent, e.Action,
		e.TargetType, e.TargetID, e.WorkspaceID, string(e.Detail))
	if isForeignKey(err) {
		return audit.Entry{}, fmt.Errorf("store: audit entry: tenant %q does not exist", e.TenantID)
	}
	if err != nil {
		return audit.Entry{}, fmt.Errorf("store: append audit entry: %w", err)
	}
	return e, nil
}

// SearchAudit returns a page of q's tenant's entries, newest first.
func (db *DB) SearchAudit(ctx context.Context, q audit.Query) (audit.Page, error) {
	q, err := q.Check()
	if err != nil {
		return audit.Page{}, err
	}
	where := []string{`tenant_id = ?`}
	args := []any{q.TenantID}
	switch {
	case strings.HasSuffix(q.Action, ".*"):
		where, args = append(where, `action LIKE ? ESCAPE '\'`), append(args, likeEscape(strings.TrimSuffix(q.Action, "*"))+"%")
	case strings.HasSuffix(q.Action, "."):
		where, args = append(where, `action LIKE ? ESCAPE '\'`), append(args, likeEscape(q.Action)+"%")
	case q.Action != "":
		where, args = append(where, `action = ?`), append(args, q.Action)
	}
	if q.Actor != "" {
		where, args = append(where, `actor_id = ?`), append(args, q.Actor)
	}
	if q.Target != "" {
		where, args = append(where, `target_id = ?`), append(args, q.Target)
	}
	if !q.Since.IsZero() {
		where, args = append(where, `at >= ?`), append(args, micros(q.Since))
	}
	if !q.Until.IsZero() {
		where, args = append(where, `at < ?`), append(args, micros(q.Until))
	}
	if q.Text != "" {
		pat := "%" + likeEscape(strings.ToLower(q.Text)) + "%"
		where = append(where, `(LOWER(action) LIKE ? ESCAPE '\' OR LOWER(target_id) LIKE ? ESCAPE '\' OR LOWER(actor_id) LIKE ? ESCAPE '\'
			OR LOWER(ip) LIKE ? ESCAPE '\' OR LOWER(detail) LIKE ? ESCAPE '\')`)
		args = append(args, pat, pat, pat, pat, pat)
	}
	if c, ok, _ := audit.DecodeCursor(q.After); ok {
		where = append(where, `(at < ? OR (at = ? AND id < ?))`)
		args = append(args, micros(c.At), micros(c.At), c.ID)
	}
	// One more than the page says whether there is a next one.
	args = append(args, q.Limit+1)
	list, err := queryAll(ctx, db.conn(), "audit search", scanAudit,
		`SELECT `+auditColumns+` FROM audit_log WHERE `+strings.Join(where, ` AND `)+` ORDER BY at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return audit.Page{}, err
	}
	p := audit.Page{Entries: list}
	if len(list) > q.Limit {
		p.Entries = list[:q.Limit]
		p.Next = audit.EncodeCursor(p.Entries[q.Limit-1])
	}
	return p, nil
}

// PurgeAudit deletes every tenant's entries older than before: the
// retention sweep's, and the only delete of the log.
func (db *DB) PurgeAudit(ctx context.Context, before time.Time) (int64, error) {
	n, err := execCount(ctx, db.conn(), `DELETE FROM audit_log WHERE at < ?`, micros(before))
	if err != nil {
		return n, fmt.Errorf("store: purge audit log: %w", err)
	}
	return n, nil
}

func scanAudit(row interface{ Scan(...any) error }) (audit.Entry, error) {
	var e audit.Entry
	var at int64
	var kind, detail string
	if err := row.Scan(&e.ID, &e.TenantID, &at, &kind, &e.Actor.ID, &e.Actor.Via, &e.IP, &e.UserAgent, &e.Action,
		&e.TargetType, &e.TargetID, &e.WorkspaceID, &detail); err != nil {
		return e, err
	}
	e.At, e.Actor.Kind, e.Detail = fromMicros(at), audit.ActorKind(kind), []byte(detail)
	return e, nil
}

// TenantOf returns the tenant of a user, workspace or API token (kind
// "user", "workspace", "token"): what the operator's command line needs
// to record its changes in the right tenant's log.
func (db *DB) TenantOf(ctx context.Context, kind, id string) (string, error) {
	var q string
	switch kind {
	case "user":
		q = `SELECT tenant_id FROM users WHERE id = ?`
	case "workspace":
		q = `SELECT tenant_id FROM workspaces WHERE id = ?`
	case "token":
		q = `SELECT u.tenant_id FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?`
	default:
		return "", fmt.Errorf("store: TenantOf: unknown kind %q", kind)
	}
	var tenant string
	err := db.conn().queryRow(ctx, q, id).Scan(&tenant)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: %s %q", tenancy.ErrNotFound, kind, id)
	}
	if err != nil {
		return "", fmt.Errorf("store: tenant of %s: %w", kind, err)
	}
	return tenant, nil
}

// MembershipRole returns a user's role in a workspace ("" when none).
func (db *DB) MembershipRole(ctx context.Context, workspaceID, userID string) (tenancy.Role, error) {
	var role string
	err := db.conn().queryRow(ctx, `SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: membership role: %w", err)
	}
	return tenancy.Role(role), nil
}

// TokenOwner returns the tenant and user of an API token secret whatever
// its state (revoked, expired, its user deactivated): a failed sign-in
// with it is recorded in that tenant's audit log. An unknown or malformed
// secret has none.
func (db *DB) TokenOwner(ctx context.Context, secret string) (tenantID, userID string, ok bool) {
	hash, err := tenancy.HashToken(secret)
	if err != nil {
		return "", "", false
	}
	err = db.conn().queryRow(ctx, `SELECT u.tenant_id, u.id FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`, hash).Scan(&tenantID, &userID)
	return tenantID, userID, err == nil
}
