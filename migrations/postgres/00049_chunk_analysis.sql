-- +goose Up
-- Search by language (issue 33): each chunk keeps the language it was
-- analysed as and its text analysed by host/knowledge/analysis into exact
-- forms, stems and compound parts, the same Go analysis as on SQLite. The
-- tsvector is the three of them through the 'simple' configuration (the
-- terms are normalised already), weighted A, B and C so that an exact form
-- ranks above a stem and a stem above a compound's part. analysis is the
-- analysis version a chunk's terms come from: the store analyses older
-- chunks again when it migrates (0: never analysed). Until then a chunk's
-- exact terms are its text, so that it is found by its words as before.
ALTER TABLE chunks ADD COLUMN lang TEXT NOT NULL DEFAULT '',
    ADD COLUMN terms_exact TEXT NOT NULL DEFAULT '',
    ADD COLUMN terms_stems TEXT NOT NULL DEFAULT '',
    ADD COLUMN terms_parts TEXT NOT NULL DEFAULT '',
    ADD COLUMN analysis INTEGER NOT NULL DEFAULT 0;
UPDATE chunks SET terms_exact = text;
CREATE INDEX chunks_analysis ON chunks (analysis);
DROP INDEX chunks_tsv;
ALTER TABLE chunks DROP COLUMN tsv;
ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', terms_exact), 'A') ||
    setweight(to_tsvector('simple', terms_stems), 'B') ||
    setweight(to_tsvector('simple', terms_parts), 'C')) STORED;
CREATE INDEX chunks_tsv ON chunks USING GIN (tsv);

-- +goose Down
DROP INDEX chunks_tsv;
ALTER TABLE chunks DROP COLUMN tsv;
ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED;
CREATE INDEX chunks_tsv ON chunks USING GIN (tsv);
DROP INDEX chunks_analysis;
ALTER TABLE chunks DROP COLUMN analysis, DROP COLUMN terms_parts, DROP COLUMN terms_stems, DROP COLUMN terms_exact, DROP COLUMN lang;
