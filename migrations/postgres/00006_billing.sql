-- +goose Up
-- One row per metered call (model call, embedding batch, transcription,
-- speech; later plugin runs), priced in CHF when it happened, attributed to
-- the tenant, workspace, user and workflow that caused it.
CREATE TABLE usage_records (
    id                TEXT PRIMARY KEY,
    tenant_id         TEXT NOT NULL,
    workspace_id      TEXT NOT NULL DEFAULT '',
    user_id           TEXT NOT NULL DEFAULT '',
    workflow_id       TEXT NOT NULL DEFAULT '',
    purpose           TEXT NOT NULL DEFAULT '',
    operation         TEXT NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    audio_seconds     DOUBLE PRECISION NOT NULL DEFAULT 0,
    characters        BIGINT NOT NULL DEFAULT 0,
    cost_chf          DOUBLE PRECISION NOT NULL,
    estimated         BOOLEAN NOT NULL,
    duration_us       BIGINT NOT NULL,
    created_at        BIGINT NOT NULL
);
CREATE INDEX usage_records_tenant ON usage_records (tenant_id, created_at);
CREATE INDEX usage_records_workflow ON usage_records (workflow_id) WHERE workflow_id <> '';
