package sdk_test

import (
	"testing"

	"github.com/agenthost/agenthost/sdk"
)

func TestCHF(t *testing.T) {
	tests := []struct {
		a, b sdk.CHF
		want sdk.CHF
	}{
		{"0.1", "0.2", "0.30"},
		{"0.000000001", "1", "1.000000001"},
		{"", "0.42", "0.42"},
		{"-0.5", "0.25", "-0.25"},
	}
	for _, tc := range tests {
		if got := tc.a.Add(tc.b); got != tc.want {
			t.Errorf("%q + %q = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	if f := sdk.CHF("0.42").Float(); f != 0.42 {
		t.Errorf("Float %v", f)
	}
}
