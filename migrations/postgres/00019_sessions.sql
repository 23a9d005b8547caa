-- +goose Up
-- Browser sessions of the workspace UI. A session is opened by signing in
-- with an API token and acts as that token's user for as long as the token
-- lives: revoking or expiring the token ends its sessions. The cookie's
-- secret is kept only as its SHA-256; csrf is the synchronizer token the
-- UI sends back on unsafe requests. Times are Unix microseconds.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    hash        BYTEA NOT NULL UNIQUE,
    token_id    TEXT NOT NULL REFERENCES api_tokens(id) ON DELETE CASCADE,
    csrf        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    ended_at    BIGINT
);
CREATE INDEX sessions_token ON sessions (token_id);
