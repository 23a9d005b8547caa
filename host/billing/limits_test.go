package billing_test

import (
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/money"
)

// Admits: a call fits while spending, what is held and its estimate stay
// within every limit plus the overdraft, and never once a limit is met.
func TestBudgetAdmits(t *testing.T) {
	chf := func(r int64) *money.Amount { a := money.Amount(r) * money.Rappen; return &a }
	const rp = money.Rappen
	for _, c := range []struct {
		name                string
		b                   ledger.Budget
		estimate, overdraft money.Amount
		want                error
	}{
		{"no limits", ledger.Budget{SpentTotal: 1000 * money.CHF, Reserved: 1000 * money.CHF}, 1000 * money.CHF, 0, nil},
		{"fits", ledger.Budget{Limits: ledger.Limits{Credit: chf(100)}, SpentTotal: 50 * rp, Reserved: 30 * rp}, 20 * rp, 0, nil},
		{"one rappen over", ledger.Budget{Limits: ledger.Limits{Credit: chf(100)}, SpentTotal: 50 * rp, Reserved: 30 * rp}, 21 * rp, 0, ledger.ErrCreditExhausted},
		{"within the overdraft", ledger.Budget{Limits: ledger.Limits{Credit: chf(100)}, SpentTotal: 50 * rp, Reserved: 30 * rp}, 30 * rp, 10 * rp, nil},
		{"credit met, overdraft left", ledger.Budget{Limits: ledger.Limits{Credit: chf(100)}, SpentTotal: 100 * rp}, 1, 10 * rp, ledger.ErrCreditExhausted},
		{"held by others", ledger.Budget{Limits: ledger.Limits{Credit: chf(100)}, Reserved: 95 * rp}, 10 * rp, 0, ledger.ErrCreditExhausted},
		{"monthly", ledger.Budget{Limits: ledger.Limits{Credit: chf(1000), Monthly: chf(100)}, SpentTotal: 500 * rp, SpentMonth: 90 * rp}, 20 * rp, 5 * rp, ledger.ErrMonthlyBudgetMet},
		{"monthly fits", ledger.Budget{Limits: ledger.Limits{Credit: chf(1000), Monthly: chf(100)}, SpentTotal: 500 * rp, SpentMonth: 90 * rp}, 15 * rp, 5 * rp, nil},
	} {
		err := c.b.Admits(c.estimate, c.overdraft)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
