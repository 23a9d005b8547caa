-- +goose Up
-- Chunks of objects their document hides (hidden slides, sheets, pages) are
-- marked, so that search can leave them out or find only them (issue 16).
ALTER TABLE chunks ADD COLUMN hidden BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE chunks DROP COLUMN hidden;
