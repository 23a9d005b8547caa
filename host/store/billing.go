package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tenancy"
)

// InsertUsage implements billing.Store: the record and the tenant's running
// sum for the record's month, in one transaction.
func (db *DB) InsertUsage(ctx context.Context, r ledger.Record) error {
	u := r.Usage
	err := db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `INSERT INTO usage_records (id, tenant_id, workspace_id, user_id, workflow_id, purpose,
			operation, provider, model, prompt_tokens, completion_tokens, cached_tokens, audio_seconds, characters, cost_nchf,
			price_version, estimated, duration_us, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			newID(), r.TenantID, r.WorkspaceID, r.UserID, r.WorkflowID, r.Purpose, string(u.Operation), u.Provider, u.Model,
			u.PromptTokens, u.CompletionTokens, u.CachedPromptTokens, u.AudioSeconds, u.Characters, int64(u.Cost),
			r.PriceVersion, u.Estimated, u.Duration.Microseconds(), micros(r.CreatedAt)); err != nil {
			return err
		}
		if r.ReservationID != "" {
			// The cost replaces the estimate in one commit: a reserver
			// reading both never counts the call twice, nor not at all.
			if _, err := c.exec(ctx, `DELETE FROM budget_reservations WHERE id = ?`, r.ReservationID); err != nil {
				return err
			}
		}
		_, err := c.exec(ctx, `INSERT INTO tenant_spend (tenant_id, month, spent_nchf) VALUES (?, ?, ?)
			ON CONFLICT (tenant_id, month) DO UPDATE SET spent_nchf = tenant_spend.spent_nchf + excluded.spent_nchf`,
			r.TenantID, monthKey(r.CreatedAt), int64(u.Cost))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: usage: %w", err)
	}
	return nil
}

// monthKey is a time's calendar month (UTC) as YYYYMM.
func monthKey(t time.Time) int {
	t = t.UTC()
	return t.Year()*100 + int(t.Month())
}

// UsageTotals implements billing.Store: the sums of the tenant's records, of
// one workflow when workflowID is set. Only a tenant admin sees the
// tenant's; a user sees their own calls.
func (db *DB) UsageTotals(ctx context.Context, p tenancy.Principal, workflowID string) (ledger.Totals, error) {
	q := `SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(cost_nchf), 0)
		FROM usage_records WHERE tenant_id = ? AND (? OR user_id = ?)`
	args := []any{p.TenantID, p.Admin, p.UserID}
	if workflowID != "" {
		q += ` AND workflow_id = ?`
		args = append(args, workflowID)
	}
	var t ledger.Totals
	var cost int64
	if err := db.conn().queryRow(ctx, q, args...).Scan(&t.Calls, &t.PromptTokens, &t.CompletionTokens, &cost); err != nil {
		return ledger.Totals{}, fmt.Errorf("store: usage totals: %w", err)
	}
	t.Cost = money.Amount(cost)
	return t, nil
}

// SavePriceVersion implements billing.Store.
func (db *DB) SavePriceVersion(ctx context.Context, version string, body []byte) error {
	_, err := db.conn().exec(ctx, `INSERT INTO price_versions (id, created_at, body) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		version, micros(now()), string(body))
	if err != nil {
		return fmt.Errorf("store: price version: %w", err)
	}
	return nil
}

// PriceVersion returns the body of a saved price table.
func (db *DB) PriceVersion(ctx context.Context, version string) ([]byte, error) {
	var body string
	err := db.conn().queryRow(ctx, `SELECT body FROM price_versions WHERE id = ?`, version).Scan(&body)
	if err != nil {
		return nil, fmt.Errorf("store: price version %s: %w", version, err)
	}
	return []byte(body), nil
}

// SetTenantLimits sets (replaces) a tenant's spending limits; the operator's
// act, not a tenant's.
func (db *DB) SetTenantLimits(ctx context.Context, tenantID string, l ledger.Limits) error {
	_, err := db.conn().exec(ctx, `INSERT INTO tenant_limits (tenant_id, credit_nchf, monthly_nchf, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant_id) DO UPDATE SET credit_nchf = excluded.credit_nchf, monthly_nchf = excluded.monthly_nchf,
		updated_at = excluded.updated_at`, tenantID, nullAmount(l.Credit), nullAmount(l.Monthly), micros(now()))
	if err != nil {
		return fmt.Errorf("store: tenant limits: %w", err)
	}
	return nil
}

// TenantBudget implements billing.Store.
func (db *DB) TenantBudget(ctx context.Context, tenantID string, at time.Time) (ledger.Budget, error) {
	b, err := readBudget(ctx, db.conn(), tenantID, at)
	if err != nil {
		return b, fmt.Errorf("store: tenant budget: %w", err)
	}
	return b, nil
}

// readBudget reads a tenant's limits, spending and unexpired reservations.
// The sums come from one statement, so from one snapshot: a record that
// settles a reservation is seen with it gone, or neither.
func readBudget(ctx context.Context, c conn, tenantID string, at time.Time) (ledger.Budget, error) {
	var b ledger.Budget
	var credit, monthly sql.NullInt64
	err := c.queryRow(ctx, `SELECT credit_nchf, monthly_nchf FROM tenant_limits WHERE tenant_id = ?`, tenantID).Scan(&credit, &monthly)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return b, err
	}
	b.Credit, b.Monthly = amountOf(credit), amountOf(monthly)
	var total, month, reserved int64
	err = c.queryRow(ctx, `SELECT
		(SELECT COALESCE(SUM(spent_nchf), 0) FROM tenant_spend WHERE tenant_id = ?),
		(SELECT COALESCE(SUM(spent_nchf), 0) FROM tenant_spend WHERE tenant_id = ? AND month = ?),
		(SELECT COALESCE(SUM(amount_nchf), 0) FROM budget_reservations WHERE tenant_id = ? AND expires_at > ?)`,
		tenantID, tenantID, monthKey(at), tenantID, micros(at)).Scan(&total, &month, &reserved)
	if err != nil {
		return b, err
	}
	b.SpentTotal, b.SpentMonth, b.Reserved = money.Amount(total), money.Amount(month), money.Amount(reserved)
	return b, nil
}

// Reserve implements billing.Store. The no-op update of the tenant's
// limits row is the lock: on PostgreSQL it holds the row until commit, so
// reservers of one tenant, on any host, read and insert one after another;
// SQLite's immediate transactions hold the whole database anyway. Settling
// needs no lock: it only ever lowers what is held.
func (db *DB) Reserve(ctx context.Context, r ledger.Reservation, admit func(ledger.Budget) error) (string, error) {
	// Most tenants have no limits: they are told so by a read, without a
	// write transaction per call.
	var limited bool
	err := db.conn().queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenant_limits WHERE tenant_id = ?
		AND (credit_nchf IS NOT NULL OR monthly_nchf IS NOT NULL))`, r.TenantID).Scan(&limited)
	if err != nil {
		return "", fmt.Errorf("store: reserve: %w", err)
	}
	if !limited {
		return "", nil
	}
	var id string
	var refused error
	err = db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `UPDATE tenant_limits SET updated_at = updated_at WHERE tenant_id = ?
			AND (credit_nchf IS NOT NULL OR monthly_nchf IS NOT NULL)`, r.TenantID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // no limits: nothing to hold
		}
		b, err := readBudget(ctx, c, r.TenantID, r.CreatedAt)
		if err != nil {
			return err
		}
		if refused = admit(b); refused != nil {
			return refused
		}
		// What dead processes left is swept by the living.
		if _, err := c.exec(ctx, `DELETE FROM budget_reservations WHERE tenant_id = ? AND expires_at <= ?`,
			r.TenantID, micros(r.CreatedAt)); err != nil {
			return err
		}
		id = newID()
		_, err = c.exec(ctx, `INSERT INTO budget_reservations (id, tenant_id, amount_nchf, purpose, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, id, r.TenantID, int64(r.Amount), r.Purpose, micros(r.CreatedAt), micros(r.ExpiresAt))
		return err
	})
	switch {
	case refused != nil:
		return "", refused
	case err != nil:
		return "", fmt.Errorf("store: reserve: %w", err)
	}
	return id, nil
}

// ReleaseReservation implements billing.Store.
func (db *DB) ReleaseReservation(ctx context.Context, id string) error {
	if _, err := db.conn().exec(ctx, `DELETE FROM budget_reservations WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: release reservation: %w", err)
	}
	return nil
}

func nullAmount(a *money.Amount) any {
	if a == nil {
		return nil
	}
	return int64(*a)
}

func amountOf(n sql.NullInt64) *money.Amount {
	if !n.Valid {
		return nil
	}
	a := money.Amount(n.Int64)
	return &a
}

// UsageGroups returns the records created in [from, to) summed per
// attribution, model, operation, purpose and day (billing.Report folds them
// further). A tenant admin sees the tenant's, a user their own.
func (db *DB) UsageGroups(ctx context.Context, p tenancy.Principal, from, to time.Time) ([]ledger.UsageGroup, error) {
	const day = int64(24 * time.Hour / time.Microsecond) // as written in the query
	rows, err := db.conn().query(ctx, `SELECT tenant_id, workspace_id, user_id, workflow_id, operation, provider, model, purpose,
		created_at / 86400000000, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cached_tokens), SUM(cost_nchf)
		FROM usage_records WHERE tenant_id = ? AND (? OR user_id = ?) AND created_at >= ? AND created_at < ?
		GROUP BY tenant_id, workspace_id, user_id, workflow_id, operation, provider, model, purpose, created_at / 86400000000`,
		p.TenantID, p.Admin, p.UserID, micros(from), micros(to))
	if err != nil {
		return nil, fmt.Errorf("store: usage groups: %w", err)
	}
	defer rows.Close()
	var out []ledger.UsageGroup
	for rows.Next() {
		var g ledger.UsageGroup
		var d, cost int64
		if err := rows.Scan(&g.TenantID, &g.WorkspaceID, &g.UserID, &g.WorkflowID, &g.Operation, &g.Provider, &g.Model, &g.Purpose,
			&d, &g.Calls, &g.PromptTokens, &g.CompletionTokens, &g.CachedTokens, &cost); err != nil {
			return nil, fmt.Errorf("store: usage groups: %w", err)
		}
		g.Day, g.Cost = fromMicros(d*day), money.Amount(cost)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage groups: %w", err)
	}
	return out, nil
}

// UsageRecords returns a workflow's usage records, oldest first, in the
// caller's scope (a tenant admin: any of the tenant's; a user: their own).
func (db *DB) UsageRecords(ctx context.Context, p tenancy.Principal, workflowID string) ([]ledger.Record, error) {
	rows, err := db.conn().query(ctx, `SELECT id, workspace_id, user_id, purpose, operation, provider, model, prompt_tokens,
		completion_tokens, cached_tokens, audio_seconds, characters, cost_nchf, price_version, estimated, duration_us, created_at
		FROM usage_records WHERE tenant_id = ? AND (? OR user_id = ?) AND workflow_id = ? ORDER BY created_at, id`,
		p.TenantID, p.Admin, p.UserID, workflowID)
	if err != nil {
		return nil, fmt.Errorf("store: usage records: %w", err)
	}
	defer rows.Close()
	var out []ledger.Record
	for rows.Next() {
		r := ledger.Record{TenantID: p.TenantID, WorkflowID: workflowID}
		var op string
		var cost, dur, created int64
		u := &r.Usage
		if err := rows.Scan(&r.ID, &r.WorkspaceID, &r.UserID, &r.Purpose, &op, &u.Provider, &u.Model, &u.PromptTokens,
			&u.CompletionTokens, &u.CachedPromptTokens, &u.AudioSeconds, &u.Characters, &cost, &r.PriceVersion, &u.Estimated,
			&dur, &created); err != nil {
			return nil, fmt.Errorf("store: usage records: %w", err)
		}
		u.Operation, u.Cost, u.Duration, r.CreatedAt = modeluse.Operation(op), money.Amount(cost), time.Duration(dur)*time.Microsecond, fromMicros(created)
		out = append(out, r)
	}
	return out, rows.Err()
}
