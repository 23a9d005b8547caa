-- +goose Up
-- External MCP servers (issue 12): a tenant's admin adds a server to one
-- workspace's tool set, or (workspace_id '') to every workspace of the
-- tenant. config is its configuration in the clear (JSON: transport,
-- command or URL, plain variables, names of the secrets, limits); secrets
-- are its headers and secret variables sealed with AES-256-GCM under the
-- host's key (host/mcpclient), never returned. Names prefix the server's
-- tools, so they are unique in the tenant. Times are Unix microseconds.
CREATE TABLE mcp_servers (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL DEFAULT '',
    name         TEXT NOT NULL,
    config       TEXT NOT NULL,
    secrets      BYTEA,
    created_at   BIGINT NOT NULL,
    UNIQUE (tenant_id, name)
);
CREATE INDEX mcp_servers_workspace ON mcp_servers (tenant_id, workspace_id);
