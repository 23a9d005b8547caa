package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
)

// notificationVisible keeps a person's notifications of workspaces they
// are still a member of (and those of no workspace).
const notificationVisible = `n.user_id = ? AND n.tenant_id = ? AND (n.workspace_id = '' OR EXISTS (
	SELECT 1 FROM memberships m WHERE m.workspace_id = n.workspace_id AND m.user_id = n.user_id))`

// AddNotification records n for its user if the user is in n's tenant; a
// subject already recorded for the user stays as it was (false).
func (db *DB) AddNotification(ctx context.Context, n notifications.Notification) (bool, error) {
	res, err := db.conn().exec(ctx, `INSERT INTO notifications (id, tenant_id, user_id, workspace_id, kind, subject_id, status, title, detail, workflow_id, created_at)
		SELECT ?, tenant_id, id, ?, ?, ?, ?, ?, ?, ?, ? FROM users WHERE id = ? AND tenant_id = ?
		ON CONFLICT (user_id, kind, subject_id) DO NOTHING`,
		newID(), n.WorkspaceID, string(n.Kind), n.SubjectID, n.Status, n.Name, n.Detail, n.WorkflowID, micros(now()), n.UserID, n.TenantID)
	if err != nil {
		return false, fmt.Errorf("store: add notification: %w", err)
	}
	if k, err := res.RowsAffected(); err == nil && k > 0 {
		return true, nil
	}
	// Nothing inserted: either the subject was recorded before or the
	// user is no one of the tenant.
	var one int
	err = db.conn().queryRow(ctx, `SELECT 1 FROM users WHERE id = ? AND tenant_id = ?`, n.UserID, n.TenantID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w: user %q", tenancy.ErrNotFound, n.UserID)
	}
	if err != nil {
		return false, fmt.Errorf("store: add notification: %w", err)
	}
	return false, nil
}

// Notifications returns p's own notifications, newest first, and how many
// of them are unread.
func (db *DB) Notifications(ctx context.Context, p tenancy.Principal, limit int) (notifications.Page, error) {
	var pg notifications.Page
	if err := db.conn().queryRow(ctx, `SELECT COUNT(*) FROM notifications n WHERE `+notificationVisible+` AND n.read_at IS NULL`,
		p.UserID, p.TenantID).Scan(&pg.Unread); err != nil {
		return pg, fmt.Errorf("store: unread notifications: %w", err)
	}
	rows, err := db.conn().query(ctx, `SELECT n.id, n.workspace_id, n.kind, n.subject_id, n.status, n.title, n.detail, n.workflow_id, n.created_at, n.read_at
		FROM notifications n WHERE `+notificationVisible+` ORDER BY n.created_at DESC, n.id DESC LIMIT ?`, p.UserID, p.TenantID, limit)
	if err != nil {
		return pg, fmt.Errorf("store: notifications: %w", err)
	}
	defer rows.Close()
	pg.Items = []notifications.Notification{}
	for rows.Next() {
		n := notifications.Notification{TenantID: p.TenantID, UserID: p.UserID}
		var kind string
		var created int64
		var read sql.NullInt64
		if err := rows.Scan(&n.ID, &n.WorkspaceID, &kind, &n.SubjectID, &n.Status, &n.Name, &n.Detail, &n.WorkflowID, &created, &read); err != nil {
			return pg, fmt.Errorf("store: notifications: %w", err)
		}
		n.Kind, n.CreatedAt = notifications.Kind(kind), fromMicros(created)
		if read.Valid {
			t := fromMicros(read.Int64)
			n.ReadAt = &t
		}
		pg.Items = append(pg.Items, n)
	}
	if err := rows.Err(); err != nil {
		return pg, fmt.Errorf("store: notifications: %w", err)
	}
	return pg, nil
}

// MarkNotificationsRead marks p's listed notifications read (all of p's
// when ids is empty); others' ids change nothing.
func (db *DB) MarkNotificationsRead(ctx context.Context, p tenancy.Principal, ids []string) (int, error) {
	q := `UPDATE notifications SET read_at = ? WHERE user_id = ? AND tenant_id = ? AND read_at IS NULL`
	args := []any{micros(now()), p.UserID, p.TenantID}
	if len(ids) > 0 {
		q += ` AND id IN (` + placeholders(len(ids)) + `)`
		for _, id := range ids {
			args = append(args, id)
		}
	}
	res, err := db.conn().exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("store: mark notifications read: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: mark notifications read: %w", err)
	}
	return int(n), nil
}
