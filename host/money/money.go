// Package money holds amounts of Swiss francs as integers, so that sums of
// many tiny charges (a few tokens of an embedding cost a millionth of a
// franc) add up exactly: billing sums never go through floating point.
package money

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Amount is a sum of money in nano-francs (1e-9 CHF). An int64 holds
// ±9.2 billion francs, far beyond any one tenant's bill, with a resolution
// fine enough for a single embedded token.
type Amount int64

// Common units.
const (
	NanoCHF Amount = 1
	Rappen  Amount = 10_000_000
	CHF     Amount = 1_000_000_000
)

// decimals is the number of decimal places an Amount keeps.
const decimals = 9

// FromCHF converts a price given in the configuration as a float to an
// Amount, rounded to the nearest nano-franc. Prices are read once; every sum
// after that is integer arithmetic.
func FromCHF(chf float64) Amount { return Amount(math.Round(chf * float64(CHF))) }

// CHF returns the amount as a float, for display and for budgets compared
// against figures that are floats already (a workflow's maxCostCHF).
func (a Amount) CHF() float64 { return float64(a) / float64(CHF) }

// Rappen returns the amount rounded half away from zero to whole rappen,
// the unit invoices are written in.
func (a Amount) Rappen() int64 {
	r, rem := int64(a/Rappen), int64(a%Rappen)
	switch {
	case rem >= int64(Rappen)/2:
		r++
	case rem <= -int64(Rappen)/2:
		r--
	}
	return r
}

// String writes the amount as a decimal number of francs with at least two
// decimal places and no trailing zeros beyond them: "0.00", "1.50",
// "0.000012345".
func (a Amount) String() string {
	neg := a < 0
	u := uint64(a)
	if neg {
		u = uint64(-a)
	}
	whole, frac := u/uint64(CHF), u%uint64(CHF)
	f := fmt.Sprintf("%09d", frac)
	f = strings.TrimRight(f, "0")
	for len(f) < 2 {
		f += "0"
	}
	s := strconv.FormatUint(whole, 10) + "." + f
	if neg {
		s = "-" + s
	}
	return s
}

// ErrSyntax is returned by Parse for text that is not a decimal amount.
var ErrSyntax = errors.New("money: not a decimal amount of CHF")

// Parse reads a decimal amount of francs exactly ("12", "0.05",
// "-1.000000001"); more than nine decimal places or an amount out of range
// is an error rather than a silent rounding.
func Parse(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || len(frac) > decimals || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/int64(CHF)-1 {
		return 0, fmt.Errorf("%w: %q is out of range", ErrSyntax, s)
	}
	frac += strings.Repeat("0", decimals-len(frac))
	n, _ := strconv.ParseInt(frac, 10, 64)
	a := Amount(w)*CHF + Amount(n)
	if neg {
		a = -a
	}
	return a, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PerMillion prices n units at a price per million units, rounded to the
// nearest nano-franc: tokens at a price per million tokens, characters at a
// price per million characters. The product is taken in 128 bits, so no
// count or price an Amount can hold overflows on the way.
func PerMillion(n int64, pricePerMillion Amount) Amount {
	return Per(n, pricePerMillion, 1_000_000)
}

// Per prices n units at a price per `per` units (per > 0), rounded to the
// nearest nano-franc: microseconds at a price per hour are
// Per(µs, hourly, 3_600_000_000).
func Per(n int64, price Amount, per int64) Amount {
	return mulDiv(n, int64(price), per)
}

// Times prices n units at a unit price (images at a price per image).
func Times(n int64, unit Amount) Amount { return Amount(n) * unit }

// mulDiv returns round(a*b/d) for d > 0, through a 128-bit product;
// a result beyond an Amount's range saturates.
func mulDiv(a, b, d int64) Amount {
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(uabs(a), uabs(b))
	if hi >= uint64(d) {
		if neg {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(d))
	if r >= uint64(d)-r { // round half up
		q++
	}
	if q > math.MaxInt64 {
		q = math.MaxInt64
	}
	if neg {
		return -Amount(q)
	}
	return Amount(q)
}

func uabs(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}
