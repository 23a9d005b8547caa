-- +goose Up
-- Budget reservations (issue 24): the estimated cost of each billable call in
-- flight, held against the tenant's limits from before the call until its
-- usage record is written (in the same transaction that deletes the row) or
-- the call fails (the row is deleted). A reservation is taken under the
-- tenant's tenant_limits row lock, so reservers of one tenant queue on every
-- host sharing the database. expires_at bounds what a killed process leaves
-- behind: an expired reservation holds nothing and is swept by the next one.
CREATE TABLE budget_reservations (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    amount_nchf INTEGER NOT NULL,
    purpose     TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX budget_reservations_tenant ON budget_reservations (tenant_id, expires_at);
