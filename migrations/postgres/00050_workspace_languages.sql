-- +goose Up
-- The languages a workspace's people search in (ISO 639-1 codes, comma
-- separated; empty: every analysed language): a query is analysed as each of
-- them (issue 33).
ALTER TABLE workspaces ADD COLUMN languages TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workspaces DROP COLUMN languages;
