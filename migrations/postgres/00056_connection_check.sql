-- +goose Up
-- A connection is tried when it is made (and when its use is refused): when
-- it was last tried, and the error then ("" when it answered), so a
-- connection to a site that does not answer, or with a token the provider
-- refuses, is shown as failed rather than active (issue 29, item 7).
ALTER TABLE connections ADD COLUMN checked_at BIGINT;
ALTER TABLE connections ADD COLUMN last_error TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE connections DROP COLUMN last_error;
ALTER TABLE connections DROP COLUMN checked_at;
