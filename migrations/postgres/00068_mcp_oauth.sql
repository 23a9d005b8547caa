-- +goose Up
-- The authorization server of MCP clients that sign in like people
-- (issue 30, item 5; docs/mcp.md). Codes and tokens are kept as their
-- SHA-256 only.

-- oauth_clients are the clients known to this server: registered by
-- dynamic client registration (RFC 7591; kind 'registered', id generated)
-- or described by a client ID metadata document (kind 'document'; the id is
-- the document's https URL, and the row is the cached document, fetched
-- again once fetched_at is older than the cache time).
CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('registered', 'document')),
    name          TEXT NOT NULL,
    client_uri    TEXT NOT NULL DEFAULT '',
    redirect_uris TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    fetched_at    BIGINT NOT NULL
);

-- oauth_grants are a person's consents: one client acting as that person in
-- one workspace with the scopes the person chose, for the resource (the
-- workspace's MCP endpoint) the client named. used_at is set when the
-- grant's first tokens are issued (a grant whose code was never exchanged
-- is not listed) and moved on every refresh. Revoking one ends its tokens.
CREATE TABLE oauth_grants (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    client_id    TEXT NOT NULL,
    client_name  TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    resource     TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    used_at      BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id, created_at);

-- oauth_codes are authorization codes: single-use (taken_at), short-lived,
-- bound to the redirect URI and the PKCE challenge (S256) of their request.
CREATE TABLE oauth_codes (
    hash         BYTEA PRIMARY KEY,
    grant_id     TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    challenge    TEXT NOT NULL,
    expires_at   BIGINT NOT NULL,
    taken_at     BIGINT
);
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);

-- oauth_tokens are access and refresh tokens. A refresh token is good once:
-- rotated_at is set when it is exchanged, and presenting it again is taken
-- for theft and revokes the whole grant.
CREATE TABLE oauth_tokens (
    hash       BYTEA PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    rotated_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);

-- A sign-in through a provider may return to where it started (the
-- authorization endpoint of an MCP client's sign-in); '' is the UI's home.
ALTER TABLE signin_flows ADD COLUMN return_to TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE signin_flows DROP COLUMN return_to;
DROP TABLE oauth_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
