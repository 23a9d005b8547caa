-- +goose Up
-- People management: a deactivated user (an admin's decision, or SCIM's
-- active=false) keeps their data but can neither sign in nor use their API
-- tokens; deactivation also ends their sessions for good. last_sign_in_at
-- is when a browser session was last opened. Times are Unix microseconds.
ALTER TABLE users ADD COLUMN deactivated_at BIGINT;
ALTER TABLE users ADD COLUMN last_sign_in_at BIGINT;

-- Sessions belong to a user: one opened with an API token also names the
-- token (revoking it ends the session), one opened with a passkey (or
-- another sign-in method) names none. method says how it was opened.
ALTER TABLE sessions ADD COLUMN user_id TEXT REFERENCES users(id) ON DELETE CASCADE;
UPDATE sessions SET user_id = (SELECT t.user_id FROM api_tokens t WHERE t.id = sessions.token_id);
ALTER TABLE sessions ALTER COLUMN user_id SET NOT NULL;
ALTER TABLE sessions ALTER COLUMN token_id DROP NOT NULL;
ALTER TABLE sessions ADD COLUMN method TEXT NOT NULL DEFAULT 'token';
CREATE INDEX sessions_user ON sessions (user_id, created_at);
