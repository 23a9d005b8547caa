-- +goose Up
-- On PostgreSQL this migration announces every committed event to the other
-- hosts (LISTEN/NOTIFY). The embedded database has one host: events reach
-- its streams in-process, so there is nothing to announce. The number is
-- kept so that both dialects stay at the same schema version.
SELECT 1;
