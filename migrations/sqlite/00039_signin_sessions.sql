-- +goose Up
-- Sign-in without an API token (OpenID Connect, passkeys): a session may
-- stand for a user directly (user_id) instead of through an API token
-- (token_id); exactly one of the two is set. provider, subject and sid
-- name the identity provider's session it came from, so that the
-- provider's back-channel logout can end it; id_token is the ID token it
-- was opened with (the hint RP-initiated logout sends back to the
-- provider). SQLite cannot drop a NOT NULL constraint, so the table is
-- rebuilt; nothing references it.
CREATE TABLE sessions_new (
    id          TEXT PRIMARY KEY,
    hash        BLOB NOT NULL UNIQUE,
    token_id    TEXT REFERENCES api_tokens(id) ON DELETE CASCADE,
    user_id     TEXT REFERENCES users(id) ON DELETE CASCADE,
    csrf        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    provider    TEXT NOT NULL DEFAULT '',
    subject     TEXT NOT NULL DEFAULT '',
    sid         TEXT NOT NULL DEFAULT '',
    id_token    TEXT NOT NULL DEFAULT '',
    CHECK ((token_id IS NULL) <> (user_id IS NULL))
) STRICT;
INSERT INTO sessions_new (id, hash, token_id, csrf, created_at, expires_at, ended_at)
    SELECT id, hash, token_id, csrf, created_at, expires_at, ended_at FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_token ON sessions (token_id);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_provider ON sessions (provider, subject);

-- identities link a user to their account at an identity provider: the
-- provider's name (from the operator's configuration) and the stable
-- subject (sub claim) it gives the person. A subject belongs to one user;
-- a user may have several identities.
CREATE TABLE identities (
    provider      TEXT NOT NULL,
    subject       TEXT NOT NULL,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL,
    PRIMARY KEY (provider, subject)
) STRICT;
CREATE INDEX identities_user ON identities (user_id);

-- signin_flows are sign-ins under way at a provider: the state's hash, and
-- what the callback needs back (the nonce, the PKCE verifier, an
-- invitation followed). A flow is taken once by its callback and lives ten
-- minutes; any host sharing the database can finish it.
CREATE TABLE signin_flows (
    state_hash  BLOB PRIMARY KEY,
    provider    TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    verifier    TEXT NOT NULL,
    invitation  TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) STRICT;
