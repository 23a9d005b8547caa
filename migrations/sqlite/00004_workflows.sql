-- +goose Up
-- Workflows (one conversation with the agent each), their messages with documents, logs
-- and the persisted event stream. A workflow is private to the user who
-- started it. Times are Unix microseconds.
--
-- message_seq, log_seq and event_seq are the last sequence numbers handed
-- out for the workflow's messages, logs and events. A writer bumps them with
-- UPDATE … RETURNING in the transaction that inserts the row, which locks the
-- workflow row until commit: numbers are gap-free, unique, and committed in
-- order, so a reader never sees seq n+1 before n.
CREATE TABLE workflows (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id    TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'failed')),
    current_round   INTEGER NOT NULL,
    exec_task       INTEGER NOT NULL DEFAULT 0,
    exec_action     INTEGER NOT NULL DEFAULT 0,
    summary         TEXT NOT NULL DEFAULT '',
    bytes_sent      INTEGER NOT NULL DEFAULT 0,
    bytes_received  INTEGER NOT NULL DEFAULT 0,
    tokens_used     INTEGER NOT NULL DEFAULT 0,
    processing_time REAL NOT NULL DEFAULT 0,
    cost_chf        REAL NOT NULL DEFAULT 0,
    started_at      INTEGER NOT NULL,
    last_activity   INTEGER NOT NULL,
    message_seq     INTEGER NOT NULL DEFAULT 0,
    log_seq         INTEGER NOT NULL DEFAULT 0,
    event_seq       INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX workflows_user_activity ON workflows (user_id, last_activity, id);
CREATE INDEX workflows_tenant_activity ON workflows (tenant_id, last_activity, id);

CREATE TABLE workflow_messages (
    id              TEXT PRIMARY KEY,
    workflow_id     TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    parent_id       TEXT REFERENCES workflow_messages(id) ON DELETE SET NULL,
    seq             INTEGER NOT NULL,
    round           INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('first', 'step', 'last')),
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content         TEXT NOT NULL,
    agent_name      TEXT NOT NULL DEFAULT '',
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    bytes_sent      INTEGER NOT NULL DEFAULT 0,
    bytes_received  INTEGER NOT NULL DEFAULT 0,
    tokens_used     INTEGER NOT NULL DEFAULT 0,
    processing_time REAL NOT NULL DEFAULT 0,
    cost_chf        REAL NOT NULL DEFAULT 0,
    UNIQUE (workflow_id, seq)
) STRICT;
CREATE INDEX workflow_messages_parent ON workflow_messages (parent_id);

-- A document attached to a message, pointing at a
-- stored file; agents name it docItem:<id>, or docList:<label> for all
-- documents of the workflow with that label. A deleted file takes its
-- documents with it.
CREATE TABLE workflow_documents (
    id           TEXT PRIMARY KEY,
    message_id   TEXT NOT NULL REFERENCES workflow_messages(id) ON DELETE CASCADE,
    workflow_id  TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    file_id      TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    name         TEXT NOT NULL,
    mime_type    TEXT NOT NULL,
    size         INTEGER NOT NULL,
    label        TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX workflow_documents_message ON workflow_documents (message_id, position);
CREATE INDEX workflow_documents_label ON workflow_documents (workflow_id, label);
CREATE INDEX workflow_documents_file ON workflow_documents (file_id);

CREATE TABLE workflow_logs (
    id          TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    message     TEXT NOT NULL,
    type        TEXT NOT NULL CHECK (type IN ('info', 'warning', 'error')),
    created_at  INTEGER NOT NULL,
    agent_name  TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,
    progress    INTEGER NOT NULL CHECK (progress >= 0 AND progress <= 100),
    UNIQUE (workflow_id, seq)
) STRICT;

-- The event stream a client follows (SSE) and resumes with Last-Event-ID.
-- data is the payload's JSON, kept as text: it is written often (one row per
-- streamed chunk) and never queried into.
CREATE TABLE events (
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (workflow_id, seq)
) STRICT;
