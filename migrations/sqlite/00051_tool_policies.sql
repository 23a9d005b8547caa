-- +goose Up
-- A workspace's approval policy per tool (issue 27, docs/agent.md#approval-policy):
-- auto runs a call, ask makes the round wait for a person, deny refuses it.
-- A tool without a row follows the default: ask for tools with an external
-- side effect, auto for the others. Times are Unix microseconds.
CREATE TABLE workspace_tool_policies (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    tool         TEXT NOT NULL,
    policy       TEXT NOT NULL CHECK (policy IN ('auto', 'ask', 'deny')),
    updated_by   TEXT NOT NULL DEFAULT '',
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, tool)
);

-- +goose Down
DROP TABLE workspace_tool_policies;
