-- +goose Up
-- Data sources (issue 14, docs/connectors.md): a folder or project of a user's
-- connection that the host mirrors into a workspace folder, on demand or on
-- a schedule. A data source is its owner's alone, like the connection it
-- reads through. sync_state and sync_seq make a sync one claim at a time:
-- the scheduler and "sync now" claim with a conditional update, and a job
-- whose seq is no longer the row's is stale and does nothing.
CREATE TABLE data_sources (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    connection_id    TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    service          TEXT NOT NULL,
    path             TEXT NOT NULL DEFAULT '',
    label            TEXT NOT NULL,
    source_type      TEXT NOT NULL DEFAULT '',
    auto_sync        BIGINT NOT NULL DEFAULT 0,
    interval_seconds BIGINT NOT NULL DEFAULT 0,
    folder_id        TEXT,
    sync_state       TEXT NOT NULL DEFAULT 'idle' CHECK (sync_state IN ('idle', 'queued', 'running', 'retrying', 'failed')),
    sync_seq         BIGINT NOT NULL DEFAULT 0,
    state_at         BIGINT NOT NULL,
    queue_job_id     BIGINT,
    last_synced_at   BIGINT,
    last_error       TEXT NOT NULL DEFAULT '',
    last_summary     TEXT NOT NULL DEFAULT '',
    next_sync_at     BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (workspace_id, user_id, label)
);
CREATE INDEX data_sources_owner ON data_sources (tenant_id, user_id);
CREATE INDEX data_sources_due ON data_sources (auto_sync, next_sync_at);

-- What a data source's syncs stored: one row per remote entry (by the
-- connector's entry id) with what the connector reported of it, so an
-- unchanged entry is not downloaded again. file_id is the workspace file it
-- became (checked at each sync: a file deleted since is stored anew).
CREATE TABLE data_source_items (
    data_source_id   TEXT NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
    entry_id         TEXT NOT NULL,
    entry_path       TEXT NOT NULL DEFAULT '',
    name             TEXT NOT NULL,
    size             BIGINT NOT NULL DEFAULT 0,
    modified         BIGINT,
    file_id          TEXT NOT NULL,
    synced_at        BIGINT NOT NULL,
    PRIMARY KEY (data_source_id, entry_id)
);

-- +goose Down
DROP TABLE data_source_items;
DROP TABLE data_sources;
