// Package billing meters what agenthost spends on a tenant's behalf: every
// model call, embedding batch, transcription and speech synthesis is one
// usage record, priced in CHF from the price table when it happened and
// attributed to the tenant, workspace, user and workflow that caused it
// (seed 000 §12.2). Budgets read the sums.
package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Record is one metered call.
type Record struct {
	ID          string        `json:"id"`
	TenantID    string        `json:"tenantId"`
	WorkspaceID string        `json:"workspaceId,omitempty"`
	UserID      string        `json:"userId,omitempty"`
	WorkflowID  string        `json:"workflowId,omitempty"`
	Purpose     string        `json:"purpose,omitempty"`
	Usage       llm.Usage     `json:"usage"`
	CreatedAt   time.Time     `json:"createdAt"`
	Duration    time.Duration `json:"-"`
}

// Totals sums records.
type Totals struct {
	Calls            int     `json:"calls"`
	PromptTokens     int64   `json:"promptTokens"`
	CompletionTokens int64   `json:"completionTokens"`
	CostCHF          float64 `json:"costCHF"`
}

// Store keeps usage records.
type Store interface {
	InsertUsage(ctx context.Context, r Record) error
	UsageTotals(ctx context.Context, p tenancy.Principal, workflowID string) (Totals, error)
}

// ErrUnattributed: a call carried no tenant, so nobody could be billed.
var ErrUnattributed = errors.New("billing: the call carries no tenant (llm.WithAttribution)")

// Meter is the llm.Meter that writes every call's usage to the store.
type Meter struct{ store Store }

// NewMeter returns a meter over the store.
func NewMeter(store Store) *Meter { return &Meter{store: store} }

// Record implements llm.Meter. A call without a tenant in its context is
// refused (the caller sees llm.ErrMeter) rather than recorded as nobody's.
func (m *Meter) Record(ctx context.Context, u llm.Usage) error {
	a := llm.AttributionFrom(ctx)
	if a.TenantID == "" {
		return fmt.Errorf("%w: %s call to %s", ErrUnattributed, u.Operation, u.Model)
	}
	return m.store.InsertUsage(ctx, Record{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, UserID: a.UserID,
		WorkflowID: a.WorkflowID, Purpose: a.Purpose, Usage: u, CreatedAt: time.Now().UTC()})
}
