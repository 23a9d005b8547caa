-- +goose Up
-- MCP sessions (Streamable HTTP, protocol revisions before 2026-07-28) kept
-- where every host reads them, so a restarted host or another host serves a
-- session (issue 30 item 6). state is the SDK's ServerSessionState as JSON
-- (initialize parameters, initialized, negotiated version, log level);
-- tenant_id and user_id bind the session to the principal that opened it;
-- seen_at (unix seconds) is the last request, for the idle timeout.
CREATE TABLE mcp_sessions (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    state TEXT NOT NULL,
    seen_at INTEGER NOT NULL
);
CREATE INDEX mcp_sessions_seen ON mcp_sessions (seen_at);

-- +goose Down
DROP TABLE mcp_sessions;
