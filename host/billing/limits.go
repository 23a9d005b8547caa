package billing

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// Admit implements llm.Admitter: a call of a tenant over a limit is refused
// before anything is sent. An unreadable budget refuses too: spending
// without knowing the balance is what limits exist to prevent. Calls that
// carry no tenant are left to Record (which refuses to record them).
func (m *Meter) Admit(ctx context.Context, op modeluse.Operation) error {
	a := llm.AttributionFrom(ctx)
	if a.TenantID == "" {
		return nil
	}
	b, err := m.store.TenantBudget(ctx, a.TenantID, m.now())
	if err != nil {
		return fmt.Errorf("billing: %s call: reading the tenant's budget: %w", op, err)
	}
	return b.Check()
}
