package store

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// WorkspaceMCPExternalTools says whether the workspace's MCP endpoint
// offers the tools of its external MCP servers (true unless a manager left
// them out). Any member (and the tenant's admin) may read it.
func (db *DB) WorkspaceMCPExternalTools(ctx context.Context, p tenancy.Principal, workspaceID string) (bool, error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return false, err
	}
	var v bool
	if err := db.conn().queryRow(ctx, `SELECT mcp_external_tools FROM workspaces WHERE id = ?`, workspaceID).Scan(&v); err != nil {
		return false, fmt.Errorf("store: workspace MCP external tools: %w", err)
	}
	return v, nil
}

// SetWorkspaceMCPExternalTools sets whether the workspace's MCP endpoint
// offers its external MCP servers' tools. Like the workspace's other
// settings it takes a manager of the workspace or the tenant's admin:
// other members get ErrForbidden, outsiders ErrNotFound.
func (db *DB) SetWorkspaceMCPExternalTools(ctx context.Context, p tenancy.Principal, workspaceID string, offered bool) error {
	return db.tx(ctx, func(c conn) error {
		_, write, err := workspaceLevels(ctx, c, p, workspaceID)
		if err != nil {
			return err
		}
		if write != tenancy.Group && write != tenancy.All {
			return fmt.Errorf("%w: only a manager of the workspace or the tenant's admin changes its MCP endpoint's settings", tenancy.ErrForbidden)
		}
		if _, err := c.exec(ctx, `UPDATE workspaces SET mcp_external_tools = ? WHERE id = ?`, offered, workspaceID); err != nil {
			return fmt.Errorf("store: workspace MCP external tools: %w", err)
		}
		return nil
	})
}
