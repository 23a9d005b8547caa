-- +goose Up
-- One-time setup links of a fresh server: a host that starts with no tenant
-- issues one (valid for a day) and prints it in its log; opening it creates
-- the first organisation and its admin. Only the hash of the secret is kept,
-- so the link is in the operator's log alone; any host sharing the database
-- accepts it, and the first setup deletes every link.
CREATE TABLE setup_tokens (
    hash       BLOB PRIMARY KEY,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
