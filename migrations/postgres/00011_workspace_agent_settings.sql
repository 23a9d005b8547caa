-- +goose Up
-- A workspace's own agent settings (seed 000 §3.1's AgentConfig per
-- workspace): entity_cache turns the entity cache (§4.8) on or off for the
-- workspace's rounds; NULL follows the host's default
-- (AGENTHOST_AGENT_ENTITY_CACHE).
ALTER TABLE workspaces ADD COLUMN entity_cache BOOLEAN;
