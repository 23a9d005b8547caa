-- +goose Up
-- People management: a deactivated user (an admin's decision, or SCIM's
-- active=false) keeps their data but can neither sign in nor use their API
-- tokens; deactivation also ends their sessions for good. last_sign_in_at
-- is when a browser session was last opened (with a token, a passkey or an
-- identity provider). Times are Unix microseconds.
ALTER TABLE users ADD COLUMN deactivated_at BIGINT;
ALTER TABLE users ADD COLUMN last_sign_in_at BIGINT;
