-- +goose Up
-- The latest progress each job reported (jobs.Progress). The jobs themselves
-- live in River's tables (river_job, …), created by River's own migrations
-- (jobs.Migrate), so there is no foreign key to them; a periodic sweep of
-- package jobs deletes rows whose job River has removed. Times are Unix
-- microseconds.
CREATE TABLE job_progress (
    job_id     BIGINT PRIMARY KEY,
    attempt    INTEGER NOT NULL,
    fraction   DOUBLE PRECISION NOT NULL CHECK (fraction >= 0 AND fraction <= 1),
    message    TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
