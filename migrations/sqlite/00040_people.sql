-- +goose Up
-- People management: a deactivated user (an admin's decision, or SCIM's
-- active=false) keeps their data but can neither sign in nor use their API
-- tokens; deactivation also ends their sessions for good. last_sign_in_at
-- is when a browser session was last opened. Times are Unix microseconds.
ALTER TABLE users ADD COLUMN deactivated_at INTEGER;
ALTER TABLE users ADD COLUMN last_sign_in_at INTEGER;

-- Sessions belong to a user: one opened with an API token also names the
-- token (revoking it ends the session), one opened with a passkey (or
-- another sign-in method) names none. method says how it was opened.
CREATE TABLE sessions_new (
    id          TEXT PRIMARY KEY,
    hash        BLOB NOT NULL UNIQUE,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_id    TEXT REFERENCES api_tokens(id) ON DELETE CASCADE,
    method      TEXT NOT NULL DEFAULT 'token',
    csrf        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    ended_at    INTEGER
) STRICT;
INSERT INTO sessions_new (id, hash, user_id, token_id, method, csrf, created_at, expires_at, ended_at)
    SELECT s.id, s.hash, t.user_id, s.token_id, 'token', s.csrf, s.created_at, s.expires_at, s.ended_at
    FROM sessions s JOIN api_tokens t ON t.id = s.token_id;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_token ON sessions (token_id);
CREATE INDEX sessions_user ON sessions (user_id, created_at);
