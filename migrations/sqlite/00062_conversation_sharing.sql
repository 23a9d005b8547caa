-- +goose Up
-- A conversation its owner shares is read by every member of its workspace
-- (issue 28); only the owner changes it.
ALTER TABLE workflows ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE workflows DROP COLUMN shared;
