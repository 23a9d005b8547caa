package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/money"
)

// Counts is what the host holds right now, for monitoring:
// workflows by state, the knowledge store's size, the job queue and the
// tenants' spending against their limits.
type Counts struct {
	WorkflowsByStatus map[string]int64
	Files, Chunks     int64
	Vectors           int64
	// JobsByState counts the job queue's jobs by River state and kind.
	JobsByState map[[2]string]int64
	Tenants     []TenantSpend
}

// TenantSpend is one tenant's spending this month and in total, with its
// limits (nil: none).
type TenantSpend struct {
	TenantID               string
	SpentMonth, SpentTotal money.Amount
	Credit, Monthly        *money.Amount
}

// Counts reads the figures in a few aggregate queries; SpentMonth is the
// spending in the calendar month (UTC) of at.
func (db *DB) Counts(ctx context.Context, at time.Time) (Counts, error) {
	c := Counts{WorkflowsByStatus: map[string]int64{}, JobsByState: map[[2]string]int64{}}
	rows, err := db.conn().query(ctx, `SELECT status, COUNT(*) FROM workflows GROUP BY status`)
	if err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return c, fmt.Errorf("store: counts: %w", err)
		}
		c.WorkflowsByStatus[s] = n
	}
	rows.Close()
	if err := db.conn().queryRow(ctx, `SELECT (SELECT COUNT(*) FROM files), (SELECT COUNT(*) FROM chunks), (SELECT COUNT(*) FROM chunk_vectors)`).
		Scan(&c.Files, &c.Chunks, &c.Vectors); err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	// The job queue's table belongs to River; a database River has not
	// migrated yet has none, and the gauge is then simply absent.
	if rows, err := db.conn().query(ctx, `SELECT state, kind, COUNT(*) FROM river_job GROUP BY state, kind`); err == nil {
		for rows.Next() {
			var s, k string
			var n int64
			if err := rows.Scan(&s, &k, &n); err == nil {
				c.JobsByState[[2]string{s, k}] = n
			}
		}
		rows.Close()
	}
	rows, err = db.conn().query(ctx, `SELECT s.tenant_id, COALESCE(SUM(CASE WHEN s.month = ? THEN s.spent_nchf ELSE 0 END), 0),
		COALESCE(SUM(s.spent_nchf), 0), l.credit_nchf, l.monthly_nchf
		FROM tenant_spend s LEFT JOIN tenant_limits l ON l.tenant_id = s.tenant_id
		GROUP BY s.tenant_id, l.credit_nchf, l.monthly_nchf ORDER BY s.tenant_id`, monthKey(at))
	if err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t TenantSpend
		var m, tot int64
		var credit, monthly sql.NullInt64
		if err := rows.Scan(&t.TenantID, &m, &tot, &credit, &monthly); err != nil {
			return c, fmt.Errorf("store: counts: %w", err)
		}
		t.SpentMonth, t.SpentTotal = money.Amount(m), money.Amount(tot)
		t.Credit, t.Monthly = amountOf(credit), amountOf(monthly)
		c.Tenants = append(c.Tenants, t)
	}
	return c, rows.Err()
}
