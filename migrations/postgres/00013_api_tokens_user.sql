-- +goose Up
-- Tokens are listed per user (GET /api/v1/tokens, admin token -list) and a
-- user's deletion cascades to them: both look tokens up by user.
CREATE INDEX api_tokens_user ON api_tokens (user_id, created_at);
