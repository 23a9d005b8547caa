package store

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/tenancy"
)

// InsertUsage implements billing.Store.
func (db *DB) InsertUsage(ctx context.Context, r billing.Record) error {
	u := r.Usage
	_, err := db.conn().exec(ctx, `INSERT INTO usage_records (id, tenant_id, workspace_id, user_id, workflow_id, purpose,
		operation, provider, model, prompt_tokens, completion_tokens, audio_seconds, characters, cost_chf, estimated, duration_us, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		newID(), r.TenantID, r.WorkspaceID, r.UserID, r.WorkflowID, r.Purpose, string(u.Operation), u.Provider, u.Model,
		u.PromptTokens, u.CompletionTokens, u.AudioSeconds, u.Characters, u.CostCHF, u.Estimated, u.Duration.Microseconds(), micros(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: usage: %w", err)
	}
	return nil
}

// UsageTotals implements billing.Store: the sums of the tenant's records, of
// one workflow when workflowID is set. Only a tenant admin sees the
// tenant's; a user sees their own calls.
func (db *DB) UsageTotals(ctx context.Context, p tenancy.Principal, workflowID string) (billing.Totals, error) {
	q := `SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(cost_chf), 0)
		FROM usage_records WHERE tenant_id = ? AND (? OR user_id = ?)`
	args := []any{p.TenantID, p.Admin, p.UserID}
	if workflowID != "" {
		q += ` AND workflow_id = ?`
		args = append(args, workflowID)
	}
	var t billing.Totals
	if err := db.conn().queryRow(ctx, q, args...).Scan(&t.Calls, &t.PromptTokens, &t.CompletionTokens, &t.CostCHF); err != nil {
		return billing.Totals{}, fmt.Errorf("store: usage totals: %w", err)
	}
	return t, nil
}
