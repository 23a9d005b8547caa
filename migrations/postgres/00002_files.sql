-- +goose Up
-- Content-addressed blobs, folders and files with tags. A file row points at
-- a blob by SHA-256; many files (one per scope) may share one blob.
CREATE TABLE blobs (
    sha256     TEXT PRIMARY KEY,
    size       BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE folders (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    parent_id    TEXT REFERENCES folders(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    created_by   TEXT NOT NULL REFERENCES users(id),
    auto_rule    TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);
-- Names are unique among siblings; the root is parent ''.
CREATE UNIQUE INDEX folders_sibling_name ON folders (workspace_id, COALESCE(parent_id, ''), name);

CREATE TABLE files (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    created_by   TEXT NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    mime_type    TEXT NOT NULL,
    sha256       TEXT NOT NULL REFERENCES blobs(sha256),
    size         BIGINT NOT NULL,
    folder_id    TEXT REFERENCES folders(id) ON DELETE SET NULL,
    description  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('active', 'archived', 'processing')),
    shared       BOOLEAN NOT NULL DEFAULT false,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX files_workspace_created ON files (workspace_id, created_at, id);
CREATE INDEX files_workspace_name ON files (workspace_id, name, id);
CREATE INDEX files_tenant_sha ON files (tenant_id, sha256);
CREATE INDEX files_folder ON files (folder_id);

CREATE TABLE file_tags (
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    tag     TEXT NOT NULL,
    PRIMARY KEY (file_id, tag)
);
CREATE INDEX file_tags_tag ON file_tags (tag, file_id);

-- The shared blob backend of the PostgreSQL deployment: every host of a
-- cluster reads the same bytes. Blobs are cut into chunks of 1 MiB so range
-- reads fetch only what they need.
CREATE TABLE blob_chunks (
    sha256 TEXT NOT NULL REFERENCES blobs(sha256) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    data   BYTEA NOT NULL,
    PRIMARY KEY (sha256, seq)
);
-- Uploads are mostly compressed already (PDF, Office, images): storing chunks
-- out of line without another compression pass saves its CPU on every write.
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
