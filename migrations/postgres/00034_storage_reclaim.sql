-- +goose Up
-- Giving space back (issue 32): the sweeper deletes blobs nothing refers to.
--
-- written_at is when the blob's bytes were last stored (a Put, or a row that
-- started referring to it): a blob written within the sweeper's grace period
-- is never deleted, so an upload whose bytes are stored but whose file row is
-- not committed yet keeps them.
ALTER TABLE blobs ADD COLUMN written_at BIGINT NOT NULL DEFAULT 0;
UPDATE blobs SET written_at = created_at;
CREATE INDEX blobs_written ON blobs (written_at);

-- Deleted files, kept (with their content's blob) for the trash retention
-- before the sweeper forgets them and their bytes can go. A deleted
-- workspace takes its trash with it.
CREATE TABLE file_trash (
    file_id      TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    mime_type    TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    size         BIGINT NOT NULL,
    deleted_by   TEXT NOT NULL,
    deleted_at   BIGINT NOT NULL
);
CREATE INDEX file_trash_sha ON file_trash (sha256);
CREATE INDEX file_trash_deleted ON file_trash (deleted_at);

-- A hold stops every sweep until it expires or is released: a backup takes
-- one before its database snapshot, so no blob the snapshot refers to is
-- deleted before the backup has copied it. expires_at bounds what a killed
-- backup leaves behind.
CREATE TABLE storage_holds (
    id         TEXT PRIMARY KEY,
    reason     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- The sweeper asks "does any row refer to this blob?" by content alone,
-- across tenants (a blob may be shared); these make each question one
-- index probe.
CREATE INDEX files_sha ON files (sha256);
CREATE INDEX container_entries_sha ON container_entries (sha256);
CREATE INDEX container_entries_container ON container_entries (container_sha256);
CREATE INDEX content_indexes_sha ON content_indexes (sha256);
