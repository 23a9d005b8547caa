-- +goose Up
-- Where a sync that failed part-way stopped: the folders whose listing
-- failed (with the page cursor reached) and the files not stored, as JSON
-- ("" when the last sync completed). The next sync resumes from it instead
-- of listing again what was stored (issue 29, item 6).
ALTER TABLE data_sources ADD COLUMN sync_resume TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE data_sources DROP COLUMN sync_resume;
