package sdk

import (
	"fmt"
	"math/big"
	"strings"
)

// CHF is an exact decimal amount of Swiss francs as the server sends it in
// events and reports ("0.42", "0.000012345"): a string, so that no amount
// passes through floating point. The zero value is no amount.
type CHF string

// rat parses a; an empty or malformed amount is zero.
func (a CHF) rat() *big.Rat {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(string(a)))
	if !ok || a == "" {
		return new(big.Rat)
	}
	return r
}

// Add returns a + b, exact.
func (a CHF) Add(b CHF) CHF {
	return fromRat(new(big.Rat).Add(a.rat(), b.rat()))
}

// Float is the amount as a float64, for display only.
func (a CHF) Float() float64 {
	f, _ := a.rat().Float64()
	return f
}

// String writes the amount as the server does: at least two decimals.
func (a CHF) String() string { return string(fromRat(a.rat())) }

// fromRat writes r with nine decimals (the server's nano-francs), trailing
// zeros beyond two dropped.
func fromRat(r *big.Rat) CHF {
	s := r.FloatString(9)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = strings.TrimRight(s, "0")
		for len(s)-i-1 < 2 {
			s += "0"
		}
	}
	return CHF(s)
}

var _ fmt.Stringer = CHF("")
