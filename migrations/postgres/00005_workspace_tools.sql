-- +goose Up
-- The tool set a workspace's agent sees ("core" or another named set,
-- plus extras): a named set of the configuration, and extra tool names
-- (comma-separated).
ALTER TABLE workspaces ADD COLUMN tool_set TEXT NOT NULL DEFAULT 'core';
ALTER TABLE workspaces ADD COLUMN extra_tools TEXT NOT NULL DEFAULT '';
