package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
)

// requireAdmin refuses a principal who is not the tenant's admin.
func requireAdmin(p tenancy.Principal, what string) error {
	if !p.Admin || p.TenantID == "" {
		return fmt.Errorf("%w: only the tenant's admin %s", tenancy.ErrForbidden, what)
	}
	return nil
}

const mcpServerColumns = `id, tenant_id, workspace_id, name, config, secrets, created_at`

// CreateMCPServer registers an external MCP server for the admin's tenant:
// for one workspace of it, or (WorkspaceID "") for all. The caller has
// validated the configuration and sealed the secrets (host/mcpclient); a
// name the tenant already uses is ErrConflict.
func (db *DB) CreateMCPServer(ctx context.Context, p tenancy.Principal, s mcpconfig.Server) (mcpconfig.Server, error) {
	if err := requireAdmin(p, "adds MCP servers"); err != nil {
		return mcpconfig.Server{}, err
	}
	if s.Name == "" {
		return mcpconfig.Server{}, fmt.Errorf("%w: an MCP server needs a name", tenancy.ErrInvalid)
	}
	cfg, err := json.Marshal(s.Config)
	if err != nil {
		return mcpconfig.Server{}, fmt.Errorf("store: mcp server config: %w", err)
	}
	s.ID, s.TenantID, s.CreatedAt = newID(), p.TenantID, now()
	err = db.tx(ctx, func(c conn) error {
		if s.WorkspaceID != "" {
			if _, _, err := workspaceLevels(ctx, c, p, s.WorkspaceID); err != nil {
				return err
			}
		}
		_, err := c.exec(ctx, `INSERT INTO mcp_servers (`+mcpServerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.TenantID, s.WorkspaceID, s.Name, string(cfg), s.Secrets, micros(s.CreatedAt))
		if isUnique(err) {
			return fmt.Errorf("%w: the tenant already has an MCP server named %q", tenancy.ErrConflict, s.Name)
		}
		if err != nil {
			return fmt.Errorf("store: create mcp server: %w", err)
		}
		return nil
	})
	if err != nil {
		return mcpconfig.Server{}, err
	}
	return s, nil
}

// MCPServers lists the admin's tenant's MCP servers by name.
func (db *DB) MCPServers(ctx context.Context, p tenancy.Principal) ([]mcpconfig.Server, error) {
	if err := requireAdmin(p, "lists MCP servers"); err != nil {
		return nil, err
	}
	return db.mcpServers(ctx, `SELECT `+mcpServerColumns+` FROM mcp_servers WHERE tenant_id = ? ORDER BY name`, p.TenantID)
}

// MCPServer returns one of the admin's tenant's MCP servers.
func (db *DB) MCPServer(ctx context.Context, p tenancy.Principal, id string) (mcpconfig.Server, error) {
	if err := requireAdmin(p, "reads MCP servers"); err != nil {
		return mcpconfig.Server{}, err
	}
	list, err := db.mcpServers(ctx, `SELECT `+mcpServerColumns+` FROM mcp_servers WHERE tenant_id = ? AND id = ?`, p.TenantID, id)
	if err != nil {
		return mcpconfig.Server{}, err
	}
	if len(list) == 0 {
		return mcpconfig.Server{}, fmt.Errorf("%w: MCP server %q", tenancy.ErrNotFound, id)
	}
	return list[0], nil
}

// DeleteMCPServer removes one of the admin's tenant's MCP servers.
func (db *DB) DeleteMCPServer(ctx context.Context, p tenancy.Principal, id string) error {
	if err := requireAdmin(p, "removes MCP servers"); err != nil {
		return err
	}
	res, err := db.conn().exec(ctx, `DELETE FROM mcp_servers WHERE tenant_id = ? AND id = ?`, p.TenantID, id)
	if err != nil {
		return fmt.Errorf("store: delete mcp server: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: MCP server %q", tenancy.ErrNotFound, id)
	}
	return nil
}

// WorkspaceMCPServers returns the MCP servers a workspace's tool set gets
// (its own and its tenant's), for a principal who may see the workspace.
func (db *DB) WorkspaceMCPServers(ctx context.Context, p tenancy.Principal, workspaceID string) ([]mcpconfig.Server, error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return nil, err
	}
	return db.mcpServers(ctx, `SELECT `+mcpServerColumns+` FROM mcp_servers
		WHERE tenant_id = ? AND (workspace_id = '' OR workspace_id = ?) ORDER BY name`, p.TenantID, workspaceID)
}

func (db *DB) mcpServers(ctx context.Context, query string, args ...any) ([]mcpconfig.Server, error) {
	rows, err := db.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: mcp servers: %w", err)
	}
	defer rows.Close()
	var out []mcpconfig.Server
	for rows.Next() {
		var s mcpconfig.Server
		var cfg string
		var created int64
		if err := rows.Scan(&s.ID, &s.TenantID, &s.WorkspaceID, &s.Name, &cfg, &s.Secrets, &created); err != nil {
			return nil, fmt.Errorf("store: mcp servers: %w", err)
		}
		if err := json.Unmarshal([]byte(cfg), &s.Config); err != nil {
			return nil, fmt.Errorf("store: mcp server %q: config: %w", s.ID, err)
		}
		s.CreatedAt = fromMicros(created)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: mcp servers: %w", err)
	}
	return out, nil
}
