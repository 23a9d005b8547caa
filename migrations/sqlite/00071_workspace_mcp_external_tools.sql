-- +goose Up
-- Whether a workspace's MCP endpoint offers the tools of its external MCP
-- servers beside its own (they are in its agent runs either way); a
-- manager may leave them out (docs/mcp.md).
ALTER TABLE workspaces ADD COLUMN mcp_external_tools INTEGER NOT NULL DEFAULT 1 CHECK (mcp_external_tools IN (0, 1));
