-- +goose Up
-- A conversation its owner shares is read by every member of its workspace
-- (issue 28); only the owner changes it.
ALTER TABLE workflows ADD COLUMN shared BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE workflows DROP COLUMN shared;
