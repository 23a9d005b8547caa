-- +goose Up
-- Tool calls waiting for (or decided by) a person (issue 27). The calls a
-- paused round asked for share a pause_id; each row carries the round's
-- checkpoint (the agent's conversation so far, JSON), so whichever host
-- receives the last decision (or finds the expiry) resumes the round.
-- resumed is set, on every row of the pause at once, by the host that
-- claims the resumption: of several, exactly one does. Times are Unix
-- microseconds.
CREATE TABLE tool_approvals (
    id                TEXT PRIMARY KEY,
    tenant_id         TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workflow_id       TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    pause_id          TEXT NOT NULL,
    round             INTEGER NOT NULL,
    call_id           TEXT NOT NULL,
    tool              TEXT NOT NULL,
    external          TEXT NOT NULL DEFAULT '',
    arguments         TEXT NOT NULL,
    reason            TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
    decided_arguments TEXT NOT NULL DEFAULT '',
    decision_reason   TEXT NOT NULL DEFAULT '',
    decided_by        TEXT NOT NULL DEFAULT '',
    checkpoint        TEXT NOT NULL,
    resumed           INTEGER NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    decided_at        BIGINT
);
CREATE INDEX tool_approvals_workflow ON tool_approvals (workflow_id, created_at);
CREATE INDEX tool_approvals_pending ON tool_approvals (state, expires_at);
CREATE INDEX tool_approvals_pause ON tool_approvals (pause_id);

-- +goose Down
DROP TABLE tool_approvals;
