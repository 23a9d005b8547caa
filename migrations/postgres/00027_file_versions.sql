-- +goose Up
-- Versions of a file's content and the edits an agent proposes (issue 14).
-- A file's current content stays on the files row (sha256, size); every
-- content it has had is a version, a blob reference numbered from 1. A
-- proposal is a proposed content (a blob) made on one version, with its
-- unified diff, until the user accepts or rejects it.
ALTER TABLE files ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

CREATE TABLE file_versions (
    file_id    TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    sha256     TEXT NOT NULL REFERENCES blobs(sha256),
    size       BIGINT NOT NULL,
    created_by TEXT NOT NULL REFERENCES users(id),
    created_at BIGINT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (file_id, version)
);
CREATE INDEX file_versions_sha ON file_versions (sha256);
-- Every file so far has one content: its version 1.
INSERT INTO file_versions (file_id, version, sha256, size, created_by, created_at, note)
    SELECT id, 1, sha256, size, created_by, created_at, 'upload' FROM files;

CREATE TABLE file_proposals (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    file_id      TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    workflow_id  TEXT NOT NULL DEFAULT '',
    created_by   TEXT NOT NULL REFERENCES users(id),
    base_version INTEGER NOT NULL,
    sha256       TEXT NOT NULL REFERENCES blobs(sha256),
    size         BIGINT NOT NULL,
    diff         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
    decided_by   TEXT NOT NULL DEFAULT '',
    decided_at   BIGINT,
    version      INTEGER NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL
);
CREATE INDEX file_proposals_file ON file_proposals (file_id, created_at);
CREATE INDEX file_proposals_sha ON file_proposals (sha256);

-- +goose Down
DROP TABLE file_proposals;
DROP TABLE file_versions;
ALTER TABLE files DROP COLUMN version;
