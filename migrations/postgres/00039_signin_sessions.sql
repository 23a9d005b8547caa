-- +goose Up
-- Sign-in without an API token (OpenID Connect, passkeys): a session may
-- stand for a user directly (user_id) instead of through an API token
-- (token_id); exactly one of the two is set. provider, subject and sid
-- name the identity provider's session it came from, so that the
-- provider's back-channel logout can end it; id_token is the ID token it
-- was opened with (the hint RP-initiated logout sends back to the
-- provider).
ALTER TABLE sessions ALTER COLUMN token_id DROP NOT NULL;
ALTER TABLE sessions ADD COLUMN user_id TEXT REFERENCES users(id) ON DELETE CASCADE;
ALTER TABLE sessions ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN sid TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN id_token TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD CONSTRAINT sessions_one_owner CHECK ((token_id IS NULL) <> (user_id IS NULL));
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
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    PRIMARY KEY (provider, subject)
);
CREATE INDEX identities_user ON identities (user_id);

-- signin_flows are sign-ins under way at a provider: the state's hash, and
-- what the callback needs back (the nonce, the PKCE verifier, an
-- invitation followed). A flow is taken once by its callback and lives ten
-- minutes; any host sharing the database can finish it.
CREATE TABLE signin_flows (
    state_hash  BYTEA PRIMARY KEY,
    provider    TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    verifier    TEXT NOT NULL,
    invitation  TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
