-- +goose Up
-- Which extractor plugin a content was given and why (issue 10 item 6): a
-- JSON knowledge.ExtractorRecord {name, version, sha256 prefix, builtin,
-- chosenBy, match, competitors, reason}; '' for contents indexed before
-- extractors were recorded. GET /files/{id}/index shows it.
ALTER TABLE content_indexes ADD COLUMN extractor TEXT NOT NULL DEFAULT '';
