-- +goose Up
-- Background workflows (issue 15, docs/agent.md): long work the agent or a
-- user hands to the job queue. Each job runs its agent in a workflow of its
-- own and reports to the workflow that started it when it ends. The queue's
-- job (river_job) carries only the id; this row is the job as users see it.
CREATE TABLE background_jobs (
    id                 TEXT PRIMARY KEY,
    tenant_id          TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id       TEXT NOT NULL,
    user_id            TEXT NOT NULL,
    origin_workflow_id TEXT NOT NULL DEFAULT '',
    workflow_id        TEXT NOT NULL DEFAULT '',
    description        TEXT NOT NULL,
    subtasks           TEXT NOT NULL,
    max_cost_nchf      INTEGER,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           REAL NOT NULL DEFAULT 0,
    result_summary     TEXT NOT NULL DEFAULT '',
    error              TEXT NOT NULL DEFAULT '',
    attempts           INTEGER NOT NULL DEFAULT 0,
    max_retries        INTEGER NOT NULL,
    queue_job_id       INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    completed_at       INTEGER
) STRICT;
CREATE INDEX background_jobs_tenant ON background_jobs (tenant_id, status);
