-- +goose Up
-- Chunks of objects their document hides (hidden slides, sheets, pages) are
-- marked, so that search can leave them out or find only them (issue 16).
ALTER TABLE chunks ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE chunks DROP COLUMN hidden;
