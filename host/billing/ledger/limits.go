package ledger

import (
	"errors"
	"fmt"

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
	// Reserved is what the tenant's calls in flight hold (their estimates,
	// on every host), unexpired reservations only.
	Reserved money.Amount
}

// Errors of a refused call; both wrap ErrOverLimit.
var (
	ErrOverLimit        = errors.New("billing: the tenant is over its spending limit")
	ErrCreditExhausted  = fmt.Errorf("%w: credit exhausted", ErrOverLimit)
	ErrMonthlyBudgetMet = fmt.Errorf("%w: monthly budget spent", ErrOverLimit)
)

// Check says whether the tenant is below every limit. It is the check of
// a call without an estimate (Admit) and what the budget API reports;
// calls with an estimate are admitted by Admits, which also counts what
// calls in flight hold.
func (b Budget) Check() error {
	if b.Credit != nil && b.SpentTotal >= *b.Credit {
		return fmt.Errorf("%w (CHF %s spent of CHF %s credit)", ErrCreditExhausted, b.SpentTotal, *b.Credit)
	}
	if b.Monthly != nil && b.SpentMonth >= *b.Monthly {
		return fmt.Errorf("%w (CHF %s spent this month of CHF %s)", ErrMonthlyBudgetMet, b.SpentMonth, *b.Monthly)
	}
	return nil
}

// Admits says whether a call estimated at estimate may start: the tenant
// must be below every limit (Check), and what it spent, plus what its calls
// in flight hold, plus this estimate must stay within each limit plus the
// overdraft. So whatever its concurrency, on however many hosts, a tenant
// spends at most a limit plus the overdraft, unless calls cost more than
// their estimates.
func (b Budget) Admits(estimate, overdraft money.Amount) error {
	if err := b.Check(); err != nil {
		return err
	}
	if b.Credit != nil && b.SpentTotal+b.Reserved+estimate > *b.Credit+overdraft {
		return fmt.Errorf("%w (CHF %s spent and CHF %s held by calls in flight of CHF %s credit, overdraft CHF %s; this call needs up to CHF %s)",
			ErrCreditExhausted, b.SpentTotal, b.Reserved, *b.Credit, overdraft, estimate)
	}
	if b.Monthly != nil && b.SpentMonth+b.Reserved+estimate > *b.Monthly+overdraft {
		return fmt.Errorf("%w (CHF %s spent this month and CHF %s held by calls in flight of CHF %s, overdraft CHF %s; this call needs up to CHF %s)",
			ErrMonthlyBudgetMet, b.SpentMonth, b.Reserved, *b.Monthly, overdraft, estimate)
	}
	return nil
}
