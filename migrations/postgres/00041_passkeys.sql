-- +goose Up
-- Passkeys (WebAuthn credentials) of users: several per user, each named by
-- its owner and revocable. credential_id is the authenticator's id of it;
-- credential is the verified credential (public key, flags, AAGUID,
-- transports) as the WebAuthn library's JSON; sign_count is the last
-- signature counter seen, so a cloned authenticator shows. The user handle
-- given to authenticators is users.webauthn_handle, or the user's id when
-- that is NULL (a person who registers from an invitation gets their
-- handle before their user exists). Times are Unix microseconds.
ALTER TABLE users ADD COLUMN webauthn_handle BYTEA;
CREATE UNIQUE INDEX users_webauthn_handle ON users (webauthn_handle);

CREATE TABLE passkeys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    credential_id BYTEA NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    credential    BYTEA NOT NULL,
    sign_count    BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT
);
CREATE INDEX passkeys_user ON passkeys (user_id, created_at);

-- WebAuthn ceremonies in flight: the challenge and what the library checks
-- at the finish (its SessionData as JSON), kept server-side, usable once
-- (taking one deletes it) and until expires_at. user_id is the user a
-- registration is for, or a sign-in is narrowed to (NULL: discoverable).
CREATE TABLE webauthn_ceremonies (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    user_id     TEXT REFERENCES users(id) ON DELETE CASCADE,
    data        BYTEA NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX webauthn_ceremonies_expiry ON webauthn_ceremonies (expires_at);
