-- +goose Up
-- Per-tenant rate limits that hold across hosts (issue 15): requests that
-- start work (workflows, background jobs, tool calls, uploads) are counted
-- per tenant and minute here, in the database every host shares, so that N
-- hosts do not allow N times the limit.
CREATE TABLE tenant_rate (
    tenant_id    TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, window_start)
) STRICT;
