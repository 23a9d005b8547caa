-- +goose Up
-- What a person is told about work that ended or waits for them (issue 28,
-- item 6; docs/ui.md#notifications): a background job that ended, a data
-- source's sync that ended, a tool call that waits for approval. One row
-- per person and event: (user_id, kind, subject_id) is unique, so two
-- hosts recording the same end record it once. read_at NULL: unread.
CREATE TABLE notifications (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL DEFAULT '',
    kind         TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT '',
    title        TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT '',
    workflow_id  TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    read_at      BIGINT
);
CREATE UNIQUE INDEX notifications_subject ON notifications (user_id, kind, subject_id);
CREATE INDEX notifications_user ON notifications (user_id, created_at);
