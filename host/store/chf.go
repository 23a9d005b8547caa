package store

import (
	"fmt"
	"strconv"

	"github.com/agenthost/agenthost/host/money"
)

// chfColumn scans a REAL column of francs (a workflow's or a message's
// cost_chf, summed in SQL) into an Amount, rounded to the nano-franc.
type chfColumn struct{ a *money.Amount }

func (c chfColumn) Scan(src any) error {
	switch v := src.(type) {
	case float64:
		*c.a = money.FromCHF(v)
	case int64:
		*c.a = money.Amount(v) * money.CHF
	case []byte:
		return c.Scan(string(v))
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("store: cost %q is not a number of francs: %w", v, err)
		}
		*c.a = money.FromCHF(f)
	case nil:
		*c.a = 0
	default:
		return fmt.Errorf("store: cost of type %T", src)
	}
	return nil
}
