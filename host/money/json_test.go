package money

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestMarshalJSONIsTheFloatWireFormat: an Amount marshals to the bytes the
// float64 of its francs marshalled to before (the wire format of costCHF
// and maxCostCHF), small amounts in exponent form included.
func TestMarshalJSONIsTheFloatWireFormat(t *testing.T) {
	for _, a := range []Amount{0, 1, 12, 999, 1234, 123_456, 5 * Rappen, CHF, CHF + 50*Rappen, -3 * Rappen,
		20_000 * CHF, 123_456_789_012, -1, 7_300_000_000_000_000} {
		got, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(float64(a) / float64(CHF))
		if string(got) != string(want) {
			t.Errorf("%d: Marshal = %s, want %s (the float's)", a, got, want)
		}
		var back Amount
		if err := json.Unmarshal(got, &back); err != nil || back != a {
			t.Errorf("%d: Unmarshal(%s) = %d, %v", a, got, back, err)
		}
	}
	type wire struct {
		Cost Amount `json:"costCHF"`
		Max  Amount `json:"maxCostCHF,omitempty"`
	}
	b, _ := json.Marshal(wire{Cost: 12_345})
	if string(b) != `{"costCHF":0.000012345}` {
		t.Errorf("struct: %s", b)
	}
}

func TestUnmarshalJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Amount
	}{
		{"0.5", 50 * Rappen},
		{"2", 2 * CHF},
		{"1e-7", 100},
		{"1.5E2", 150 * CHF},
		{"0.1234567891234", 123_456_789}, // finer than a nano-franc: rounded
		{"-0.25", -25 * Rappen},
	} {
		var a Amount
		if err := json.Unmarshal([]byte(c.in), &a); err != nil || a != c.want {
			t.Errorf("Unmarshal(%s) = %d, %v; want %d", c.in, a, err, c.want)
		}
	}
	a := Amount(7)
	if err := json.Unmarshal([]byte("null"), &a); err != nil || a != 7 {
		t.Errorf("null: %d, %v", a, err)
	}
	for _, bad := range []string{`"1.5"`, `true`, `1e300`, `{}`} {
		var a Amount
		err := json.Unmarshal([]byte(bad), &a)
		if err == nil {
			t.Errorf("Unmarshal(%s) = %d, want an error", bad, a)
		}
		if bad == `1e300` && !errors.Is(err, ErrSyntax) {
			t.Errorf("1e300: %v, want ErrSyntax", err)
		}
	}
}
