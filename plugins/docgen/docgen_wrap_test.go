package main

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name, text string
		maxW       float64
		lines      int
	}{
		{"fits", "a few words", 500, 1},
		{"wraps at words", strings.Repeat("word ", 100), 200, 0},
		{"breaks a long word", long, 100, 0},
		{"keeps blank lines", "a\n\nb", 500, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := wrap(regular, tc.text, 11, tc.maxW)
			if tc.lines > 0 && len(lines) != tc.lines {
				t.Fatalf("%d lines, want %d", len(lines), tc.lines)
			}
			var words []string
			for _, ln := range lines {
				if w := width(regular, ln, 11); w > tc.maxW {
					t.Fatalf("line %q is %.1f wide, over %.1f", ln, w, tc.maxW)
				}
				words = append(words, string(ln))
			}
			if tc.name == "breaks a long word" {
				if strings.Join(words, "") != long || len(lines) < 2 {
					t.Fatalf("broken word does not join back: %q", words)
				}
			} else if strings.Join(strings.Fields(strings.Join(words, " ")), " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Fatalf("words lost: %q", words)
			}
		})
	}
}
