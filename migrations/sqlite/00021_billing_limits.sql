-- +goose Up
-- Billing in integer money, versioned prices and tenant limits (issue 15).
--
-- usage_records.cost_nchf: the cost in nano-francs (1e-9 CHF), so that sums
-- are exact; the float column it replaces is converted and dropped.
-- cached_tokens: prompt tokens the provider served from its cache.
-- price_version: the price table the cost was computed with (price_versions).
ALTER TABLE usage_records ADD COLUMN cost_nchf INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN price_version TEXT NOT NULL DEFAULT '';
UPDATE usage_records SET cost_nchf = CAST(ROUND(cost_chf * 1000000000) AS INTEGER);
ALTER TABLE usage_records DROP COLUMN cost_chf;

-- price_versions: every price table the host has billed with, by the digest
-- of its canonical JSON; a record keeps its price when prices change.
CREATE TABLE price_versions (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    body       TEXT NOT NULL
) STRICT;

-- tenant_limits: what a tenant may spend, set by the operator. NULL: no limit.
-- credit_nchf bounds all spending ever (prepaid credit); monthly_nchf the
-- spending of one calendar month (UTC).
CREATE TABLE tenant_limits (
    tenant_id    TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    credit_nchf  INTEGER,
    monthly_nchf INTEGER,
    updated_at   INTEGER NOT NULL
) STRICT;

-- tenant_spend: running sums per tenant and month (YYYYMM, UTC), written in
-- the same transaction as each usage record, so that the check before each
-- model call reads a few rows instead of summing every record.
CREATE TABLE tenant_spend (
    tenant_id  TEXT NOT NULL,
    month      INTEGER NOT NULL,
    spent_nchf INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, month)
) STRICT;
INSERT INTO tenant_spend (tenant_id, month, spent_nchf)
    SELECT tenant_id, CAST(strftime('%Y%m', created_at / 1000000, 'unixepoch') AS INTEGER), SUM(cost_nchf)
    FROM usage_records GROUP BY 1, 2;
