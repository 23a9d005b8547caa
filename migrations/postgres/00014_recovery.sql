-- +goose Up
-- Recovery after crashes (issue 11 items 5 and 6).
--
-- job_hosts: every process that works jobs (serve, worker) beats here every
-- few seconds (package jobs, lease.go). A running job whose host stopped
-- beating is handed back to the queue within seconds, instead of after
-- River's rescue period (15 min). Times are Unix milliseconds of the
-- database's clock, so hosts with skewed clocks agree on staleness.
CREATE TABLE job_hosts (
    id           TEXT PRIMARY KEY,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

-- content_indexes.note says what is happening to a content that is not done
-- yet ("retrying after restart", ...); '' once it is indexed or failed.
ALTER TABLE content_indexes ADD COLUMN note TEXT NOT NULL DEFAULT '';
