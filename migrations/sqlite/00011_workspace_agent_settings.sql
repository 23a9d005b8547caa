-- +goose Up
-- A workspace's own agent settings (the agent configuration per
-- workspace): entity_cache turns the entity cache (one extra model call a
-- round, so off unless chosen; docs/agent.md) on (1) or off (0) for the
-- workspace's rounds; NULL follows the host's default
-- (AGENTHOST_AGENT_ENTITY_CACHE).
ALTER TABLE workspaces ADD COLUMN entity_cache INTEGER CHECK (entity_cache IN (0, 1));
