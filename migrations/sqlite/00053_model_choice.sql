-- +goose Up
-- Model choice (issue 27, item 3). The agent models a workspace allows, as
-- provider/model ids separated by commas; empty: every configured agent
-- model. And the model a conversation chose (empty: the chain's first).
ALTER TABLE workspaces ADD COLUMN models TEXT NOT NULL DEFAULT '';
ALTER TABLE workflows ADD COLUMN model TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workflows DROP COLUMN model;
ALTER TABLE workspaces DROP COLUMN models;
