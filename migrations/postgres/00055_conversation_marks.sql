-- +goose Up
-- A conversation's owner pins it to the top of the list or archives it out
-- of the list (issue 28); archived_at is when, 0 when not archived.
ALTER TABLE workflows ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE workflows ADD COLUMN archived_at BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE workflows DROP COLUMN archived_at;
ALTER TABLE workflows DROP COLUMN pinned;
