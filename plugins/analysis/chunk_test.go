package main

import (
	"strings"
	"testing"
)

// words counts whitespace-separated words, a stand-in tokenizer.
func words(s string) (int, error) { return len(strings.Fields(s)), nil }

func TestPartBudget(t *testing.T) {
	tests := []struct {
		name                   string
		ctx, prompt, out, want int
		wantErr                bool
	}{
		{"8k context, 1k answer", 8192, 200, 1024, 5486, false},
		{"small model", 1024, 60, 213, 512, false},
		{"instruction fills the context", 512, 400, 100, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := partBudget(tc.ctx, tc.prompt, tc.out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("budget = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	long := strings.Repeat("alpha beta gamma delta. ", 50) // 200 words, no paragraph breaks
	tests := []struct {
		name   string
		units  []string
		budget int
		parts  int
	}{
		{"everything fits", []string{"one two", "three four"}, 10, 1},
		{"units grouped", []string{"a b c d", "e f g h", "i j k l"}, 9, 2},
		{"oversized unit cut at sentences, parts packed", []string{long}, 50, 5},
		{"empty units skipped", []string{"", "  ", "x"}, 5, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := split(tc.units, tc.budget, words)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) != tc.parts {
				t.Fatalf("%d parts, want %d: %q", len(parts), tc.parts, parts)
			}
			var all []string
			for _, p := range parts {
				if n, _ := words(p); n > tc.budget {
					t.Fatalf("part of %d words over the budget %d", n, tc.budget)
				}
				all = append(all, strings.Fields(p)...)
			}
			var want []string
			for _, u := range tc.units {
				want = append(want, strings.Fields(u)...)
			}
			if strings.Join(all, " ") != strings.Join(want, " ") {
				t.Fatal("the parts do not hold the input's words in order")
			}
		})
	}
}

func TestSplitUnsplittable(t *testing.T) {
	// A single word over the budget cannot be cut at a boundary; halving
	// runes eventually fits a character counter, never a word counter.
	if _, err := split([]string{"supercalifragilistic"}, 0, words); err == nil {
		t.Fatal("a budget of 0 must fail")
	}
}
