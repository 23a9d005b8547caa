-- +goose Up
-- Search by language (issue 33): each chunk keeps the language it was
-- analysed as and its text analysed by host/knowledge/analysis into exact
-- forms, stems and compound parts; FTS5 indexes those three columns, so
-- that documents and queries are analysed by the same Go code on both
-- databases. analysis is the analysis version a chunk's terms come from:
-- the store analyses older chunks again when it migrates (0: never
-- analysed). Until then a chunk's exact terms are its text, so that it is
-- found by its words as before and nothing is lost on the way.
ALTER TABLE chunks ADD COLUMN lang TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN terms_exact TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN terms_stems TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN terms_parts TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN analysis INTEGER NOT NULL DEFAULT 0;
UPDATE chunks SET terms_exact = text;
CREATE INDEX chunks_analysis ON chunks (analysis);

DROP TRIGGER chunks_ai;
DROP TRIGGER chunks_ad;
DROP TABLE chunks_fts;
-- The terms are normalised already (case, accents as their language
-- allows): the tokenizer only splits them at spaces.
CREATE VIRTUAL TABLE chunks_fts USING fts5(terms_exact, terms_stems, terms_parts, content='chunks', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 0');
-- +goose StatementBegin
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, terms_exact, terms_stems, terms_parts) VALUES (new.rowid, new.terms_exact, new.terms_stems, new.terms_parts);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, terms_exact, terms_stems, terms_parts) VALUES ('delete', old.rowid, old.terms_exact, old.terms_stems, old.terms_parts);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER chunks_au AFTER UPDATE OF terms_exact, terms_stems, terms_parts ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, terms_exact, terms_stems, terms_parts) VALUES ('delete', old.rowid, old.terms_exact, old.terms_stems, old.terms_parts);
    INSERT INTO chunks_fts (rowid, terms_exact, terms_stems, terms_parts) VALUES (new.rowid, new.terms_exact, new.terms_stems, new.terms_parts);
END;
-- +goose StatementEnd
INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');

-- +goose Down
DROP TRIGGER chunks_au;
DROP TRIGGER chunks_ai;
DROP TRIGGER chunks_ad;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
-- +goose StatementBegin
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.rowid, new.text);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
-- +goose StatementEnd
INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');
DROP INDEX chunks_analysis;
ALTER TABLE chunks DROP COLUMN analysis;
ALTER TABLE chunks DROP COLUMN terms_parts;
ALTER TABLE chunks DROP COLUMN terms_stems;
ALTER TABLE chunks DROP COLUMN terms_exact;
ALTER TABLE chunks DROP COLUMN lang;
