-- +goose Up
-- The knowledge store's per-content tables. Extraction depends only on the
-- bytes, so indexes and chunks are keyed by (tenant, sha256): the same bytes
-- uploaded twice in a tenant are extracted and indexed once. They are never
-- shared across tenants (that would reveal to one tenant what another holds).
-- Who may read a chunk is decided by the files that carry its bytes.
CREATE TABLE content_indexes (
    tenant_id     TEXT NOT NULL,
    sha256        TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'extracted', 'embedding', 'indexed', 'failed')),
    error         TEXT NOT NULL DEFAULT '',
    mime_type     TEXT NOT NULL DEFAULT '',
    total_objects INTEGER NOT NULL DEFAULT 0,
    total_size    BIGINT NOT NULL DEFAULT 0,
    structure     TEXT NOT NULL DEFAULT '{}',
    objects       TEXT NOT NULL DEFAULT '[]',
    extracted_at  BIGINT,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, sha256)
);

CREATE TABLE chunks (
    id           TEXT NOT NULL UNIQUE,
    tenant_id    TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    object_id    TEXT NOT NULL,
    content_type TEXT NOT NULL,
    text         TEXT NOT NULL,
    ref          TEXT NOT NULL,
    page         INTEGER NOT NULL DEFAULT 0,
    section      TEXT NOT NULL DEFAULT '',
    tokens       INTEGER NOT NULL,
    -- Lexical index: the 'simple' configuration (no stemming) because
    -- documents come in German, English, French and Italian alike.
    tsv          tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
    FOREIGN KEY (tenant_id, sha256) REFERENCES content_indexes (tenant_id, sha256) ON DELETE CASCADE
);
CREATE INDEX chunks_content ON chunks (tenant_id, sha256, seq);
CREATE INDEX chunks_tsv ON chunks USING GIN (tsv);
