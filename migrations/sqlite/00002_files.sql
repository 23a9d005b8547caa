-- +goose Up
-- Content-addressed blobs, folders and files with tags. A file row points at
-- a blob by SHA-256; many files (one per scope) may share one blob.
CREATE TABLE blobs (
    sha256     TEXT PRIMARY KEY,
    size       INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE folders (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    parent_id    TEXT REFERENCES folders(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    created_by   TEXT NOT NULL REFERENCES users(id),
    auto_rule    TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL
) STRICT;
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
    size         INTEGER NOT NULL,
    folder_id    TEXT REFERENCES folders(id) ON DELETE SET NULL,
    description  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('active', 'archived', 'processing')),
    shared       INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX files_workspace_created ON files (workspace_id, created_at, id);
CREATE INDEX files_workspace_name ON files (workspace_id, name, id);
CREATE INDEX files_tenant_sha ON files (tenant_id, sha256);
CREATE INDEX files_folder ON files (folder_id);

CREATE TABLE file_tags (
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    tag     TEXT NOT NULL,
    PRIMARY KEY (file_id, tag)
) STRICT;
CREATE INDEX file_tags_tag ON file_tags (tag, file_id);
