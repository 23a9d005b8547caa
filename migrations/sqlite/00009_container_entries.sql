-- +goose Up
-- The members of container files (ZIP, TAR, GZ, TGZ), nested containers'
-- members included, each by its full container path
-- ("a.zip/docs/b.tar/report.pdf"). Like the other knowledge tables they are
-- keyed by the container's content (tenant, sha256): the same archive
-- uploaded twice is resolved once. An entry with bytes points at its own
-- content (sha256), extracted and indexed like any file; its status is that
-- content's. An entry refused by the walk (traversal, link, bomb, limit…)
-- has no bytes and keeps its reason in error. Who may read an entry, and
-- find its chunks, is decided by the files that carry the container.
CREATE TABLE container_entries (
    tenant_id        TEXT NOT NULL,
    container_sha256 TEXT NOT NULL,
    seq              INTEGER NOT NULL,
    path             TEXT NOT NULL,
    sha256           TEXT NOT NULL DEFAULT '',
    size             INTEGER NOT NULL DEFAULT 0,
    mime_type        TEXT NOT NULL DEFAULT '',
    container        INTEGER NOT NULL DEFAULT 0,
    error_kind       TEXT NOT NULL DEFAULT '',
    error            TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, container_sha256, seq),
    FOREIGN KEY (tenant_id, container_sha256) REFERENCES content_indexes (tenant_id, sha256) ON DELETE CASCADE
) STRICT;
CREATE INDEX container_entries_path ON container_entries (tenant_id, container_sha256, path);
-- Search reaches an inner file's chunks through the containers carrying it.
CREATE INDEX container_entries_inner ON container_entries (tenant_id, sha256);
