-- +goose Up
-- A user's connections to external providers (issue 14). A connection
-- belongs to one user of one tenant and is only ever used on their behalf.
-- Its secret (OAuth tokens, an API token, a password) is sealed by the host
-- (AES-GCM, bound to the row's id) before it reaches the store: the database
-- holds ciphertext only. version counts secret changes, so two concurrent
-- refreshes cannot overwrite each other.
CREATE TABLE connections (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    provider    TEXT NOT NULL,
    label       TEXT NOT NULL,
    auth        TEXT NOT NULL CHECK (auth IN ('oauth2', 'token', 'basic')),
    base_url    TEXT NOT NULL DEFAULT '',
    account     TEXT NOT NULL DEFAULT '',
    scopes      TEXT NOT NULL DEFAULT '',
    secret      BYTEA NOT NULL,
    expires_at  BIGINT,
    version     BIGINT NOT NULL DEFAULT 1,
    revoked_at  BIGINT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (user_id, provider, label)
);
CREATE INDEX connections_owner ON connections (tenant_id, user_id);

-- An OAuth authorisation in flight: the state parameter, its PKCE verifier
-- (sealed) and who started it. It is consumed once by the callback.
CREATE TABLE connection_auth_states (
    state       TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    provider    TEXT NOT NULL,
    label       TEXT NOT NULL,
    verifier    BYTEA NOT NULL,
    expires_at  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE connection_auth_states;
DROP TABLE connections;
