-- +goose Up
-- Several hosts on one database (issue 15): a running round names the host
-- whose agent loop runs it (the job queue's host id, which beats in
-- job_hosts). When that host stops beating, another host takes the round
-- over instead of leaving it running until a one-hour horizon.
ALTER TABLE workflows ADD COLUMN host_id TEXT NOT NULL DEFAULT '';
