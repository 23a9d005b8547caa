package money

import (
	"errors"
	"testing"
)

func TestParseAndString(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Amount
		out  string
	}{
		{"0", 0, "0.00"},
		{"12", 12 * CHF, "12.00"},
		{"0.05", 5 * Rappen, "0.05"},
		{"1.5", CHF + 50*Rappen, "1.50"},
		{"0.000000001", 1, "0.000000001"},
		{"-1.000000001", -CHF - 1, "-1.000000001"},
		{".25", 25 * Rappen, "0.25"},
		{"+3.10", 3*CHF + 10*Rappen, "3.10"},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
			continue
		}
		if s := got.String(); s != c.out {
			t.Errorf("%q: String() = %q, want %q", c.in, s, c.out)
		}
	}
	for _, bad := range []string{"", "-", ".", "1.0000000001", "1e3", "CHF 1", "1,5", "99999999999999"} {
		if _, err := Parse(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v, want ErrSyntax", bad, err)
		}
	}
}

func TestFromCHFIsExactForConfiguredPrices(t *testing.T) {
	// Prices written in configuration files are decimals that floats cannot
	// hold exactly; rounding to the nano-franc gives the decimal back.
	for in, want := range map[float64]string{0.016: "0.016", 0.12: "0.12", 2.3: "2.30", 0.0048: "0.0048", 24: "24.00"} {
		if got := FromCHF(in).String(); got != want {
			t.Errorf("FromCHF(%v) = %s, want %s", in, got, want)
		}
	}
}

func TestPerMillion(t *testing.T) {
	for _, c := range []struct {
		n     int64
		price string
		want  Amount
	}{
		{1_000_000, "0.12", 120_000_000},
		{10, "0.016", 160},
		{4_999, "0.0000001", 0}, // under half a nano-franc rounds to nothing
		{5_000, "0.0000001", 1}, // half rounds up
		{3, "0.000000333", 0},
		{123_456_789, "8", 987_654_312_000},
		{-10, "0.016", -160},
		{1 << 62, "9000000", Amount(1<<63 - 1)}, // saturates
	} {
		p, err := Parse(c.price)
		if err != nil {
			t.Fatal(err)
		}
		if got := PerMillion(c.n, p); got != c.want {
			t.Errorf("PerMillion(%d, %s) = %d, want %d", c.n, c.price, got, c.want)
		}
	}
}

func TestRappen(t *testing.T) {
	for a, want := range map[Amount]int64{0: 0, 4_999_999: 0, 5_000_000: 1, 15 * Rappen: 15, -5_000_000: -1, CHF + 4_999_999: 100} {
		if got := a.Rappen(); got != want {
			t.Errorf("%d.Rappen() = %d, want %d", a, got, want)
		}
	}
}
