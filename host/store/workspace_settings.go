package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// WorkspaceEntityCache returns whether the workspace turned the entity
// cache on or off for its rounds, or nil when it follows the host's
// default. Any member (and the tenant's admin) may read it.
func (db *DB) WorkspaceEntityCache(ctx context.Context, p tenancy.Principal, workspaceID string) (*bool, error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return nil, err
	}
	var v sql.NullBool
	if err := db.conn().queryRow(ctx, `SELECT entity_cache FROM workspaces WHERE id = ?`, workspaceID).Scan(&v); err != nil {
		return nil, fmt.Errorf("store: workspace entity cache: %w", err)
	}
	if !v.Valid {
		return nil, nil
	}
	return &v.Bool, nil
}

// SetWorkspaceEntityCache turns the entity cache of a workspace's rounds on
// or off, or (nil) back to the host's default. It is the workspace's
// configuration, so it takes a manager of the workspace or the tenant's
// admin: other members get ErrForbidden, outsiders ErrNotFound.
func (db *DB) SetWorkspaceEntityCache(ctx context.Context, p tenancy.Principal, workspaceID string, enabled *bool) error {
	return db.tx(ctx, func(c conn) error {
		_, write, err := workspaceLevels(ctx, c, p, workspaceID)
		if err != nil {
			return err
		}
		if write != tenancy.Group && write != tenancy.All {
			return fmt.Errorf("%w: only a manager of the workspace or the tenant's admin changes its agent settings", tenancy.ErrForbidden)
		}
		var v any // NULL: the host's default
		if enabled != nil {
			v = *enabled
		}
		if _, err := c.exec(ctx, `UPDATE workspaces SET entity_cache = ? WHERE id = ?`, v, workspaceID); err != nil {
			return fmt.Errorf("store: workspace entity cache: %w", err)
		}
		return nil
	})
}
