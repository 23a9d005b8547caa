-- +goose Up
-- How a workflow's last run ended (completed, maxRoundsReached,
-- budgetExceeded, stopped, failed; empty while one runs), so that reading
-- the workflow says a run stopped by its budget without reading its events.
-- Workflows that ended before are filled in from their last end event.
ALTER TABLE workflows ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
UPDATE workflows SET outcome = status WHERE status IN ('stopped', 'failed');
UPDATE workflows SET outcome = COALESCE(NULLIF((SELECT json_extract(e.data, '$.reason') FROM events e
    WHERE e.workflow_id = workflows.id AND e.type = 'complete' ORDER BY e.seq DESC LIMIT 1), ''), 'completed')
    WHERE status = 'completed';

-- The W3C traceparent of the request that started the running round, so
-- that a host taking the round over from one that died links its trace to
-- the one it continues.
ALTER TABLE workflows ADD COLUMN round_trace TEXT NOT NULL DEFAULT '';
