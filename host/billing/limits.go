package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/money"
)

// Limits is what a tenant may spend, set by the operator; nil means no
// limit. Credit bounds everything the tenant ever spends (prepaid credit);
// Monthly bounds one calendar month (UTC).
type Limits struct {
	Credit  *money.Amount `json:"-"`
	Monthly *money.Amount `json:"-"`
}

// Budget is a tenant's limits and what it has spent against them.
type Budget struct {
	Limits
	// SpentTotal is everything the tenant has spent; SpentMonth the current
	// calendar month's part of it.
	SpentTotal money.Amount
	SpentMonth money.Amount
}

// Errors of a refused call; both wrap ErrOverLimit.
var (
	ErrOverLimit        = errors.New("billing: the tenant is over its spending limit")
	ErrCreditExhausted  = fmt.Errorf("%w: credit exhausted", ErrOverLimit)
	ErrMonthlyBudgetMet = fmt.Errorf("%w: monthly budget spent", ErrOverLimit)
)

// Check says whether another call may start: it may while the spending is
// below every limit. A call admitted just below a limit may end above it;
// since each concurrent run is checked before each call, the overspend is
// at most the calls in flight, one per run.
func (b Budget) Check() error {
	if b.Credit != nil && b.SpentTotal >= *b.Credit {
		return fmt.Errorf("%w (CHF %s spent of CHF %s credit)", ErrCreditExhausted, b.SpentTotal, *b.Credit)
	}
	if b.Monthly != nil && b.SpentMonth >= *b.Monthly {
		return fmt.Errorf("%w (CHF %s spent this month of CHF %s)", ErrMonthlyBudgetMet, b.SpentMonth, *b.Monthly)
	}
	return nil
}

// Admit implements llm.Admitter: a call of a tenant over a limit is refused
// before anything is sent. An unreadable budget refuses too: spending
// without knowing the balance is what limits exist to prevent. Calls that
// carry no tenant are left to Record (which refuses to record them).
func (m *Meter) Admit(ctx context.Context, op llm.Operation) error {
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
