package money

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// MarshalJSON writes the amount as a JSON number of francs, exactly as
// encoding/json writes the float64 a.CHF() ("0.0123", "1.5e-07"): the
// wire's costCHF and maxCostCHF fields were floats of francs before they
// were Amounts, and clients read them as numbers.
//
// Tables that keep amounts as integers of nano-francs (the billing price
// table, whose digest is its version) say so with their own marshaller.
func (a Amount) MarshalJSON() ([]byte, error) { return json.Marshal(a.CHF()) }

// UnmarshalJSON reads a JSON number of francs: a decimal exactly (Parse),
// one with an exponent or more than nine decimals rounded to the nearest
// nano-franc, since nothing finer is an amount. null leaves a unchanged;
// anything else (a string, an amount beyond the range) is an error.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if v, err := Parse(string(b)); err == nil {
		*a = v
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) || math.Abs(f) >= float64(math.MaxInt64/int64(CHF)) {
		return fmt.Errorf("%w: %s is not a JSON number of francs in range", ErrSyntax, b)
	}
	*a = FromCHF(f)
	return nil
}
