package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// MCPSession is one MCP session as every host reads it (host/mcpserver):
// the workspace it serves, the principal that opened it, and the SDK's
// session state as JSON.
type MCPSession struct {
	ID          string
	WorkspaceID string
	Owner       tenancy.Principal
	State       []byte
	SeenAt      time.Time
}

// SaveMCPSession writes the session, replacing what was kept of it.
func (db *DB) SaveMCPSession(ctx context.Context, s MCPSession) error {
	_, err := db.conn().exec(ctx, `INSERT INTO mcp_sessions (id, workspace_id, tenant_id, user_id, state, seen_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, seen_at = excluded.seen_at`,
		s.ID, s.WorkspaceID, s.Owner.TenantID, s.Owner.UserID, string(s.State), s.SeenAt.Unix())
	if err != nil {
		return fmt.Errorf("store: saving mcp session: %w", err)
	}
	return nil
}

// MCPSession reads a session; ok is false when none has the id.
func (db *DB) MCPSession(ctx context.Context, id string) (_ MCPSession, ok bool, err error) {
	s := MCPSession{ID: id}
	var state string
	var seen int64
	err = db.conn().queryRow(ctx, `SELECT workspace_id, tenant_id, user_id, state, seen_at FROM mcp_sessions WHERE id = ?`, id).
		Scan(&s.WorkspaceID, &s.Owner.TenantID, &s.Owner.UserID, &state, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return MCPSession{}, false, nil
	}
	if err != nil {
		return MCPSession{}, false, fmt.Errorf("store: reading mcp session: %w", err)
	}
	s.State, s.SeenAt = []byte(state), time.Unix(seen, 0)
	return s, true, nil
}

// TouchMCPSession records a request of the session at t.
func (db *DB) TouchMCPSession(ctx context.Context, id string, t time.Time) error {
	if _, err := db.conn().exec(ctx, `UPDATE mcp_sessions SET seen_at = ? WHERE id = ? AND seen_at < ?`, t.Unix(), id, t.Unix()); err != nil {
		return fmt.Errorf("store: touching mcp session: %w", err)
	}
	return nil
}

// DeleteMCPSession forgets a session, and every session idle since before
// idleBefore (zero: none of them).
func (db *DB) DeleteMCPSession(ctx context.Context, id string, idleBefore time.Time) error {
	if _, err := db.conn().exec(ctx, `DELETE FROM mcp_sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: deleting mcp session: %w", err)
	}
	if !idleBefore.IsZero() {
		if _, err := db.conn().exec(ctx, `DELETE FROM mcp_sessions WHERE seen_at < ?`, idleBefore.Unix()); err != nil {
			return fmt.Errorf("store: deleting idle mcp sessions: %w", err)
		}
	}
	return nil
}
