-- +goose Up
-- The workflow layer of the knowledge store (its memory, which lives and
-- goes with the workflow): key/value entries a workflow keeps for its later rounds —
-- facts extracted by the entity cache (source 'extraction', keys
-- 'entity:<name>'), tool results ('tool'), notes of the conversation and
-- summaries. An entry is reached only through its workflow's row (the
-- workflow's access rules) and goes with it. Times are Unix microseconds.
CREATE TABLE workflow_memory (
    id          TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    source      TEXT NOT NULL CHECK (source IN ('extraction', 'tool', 'conversation', 'summary')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (workflow_id, key)
) STRICT;
CREATE INDEX workflow_memory_source ON workflow_memory (workflow_id, source, updated_at);
