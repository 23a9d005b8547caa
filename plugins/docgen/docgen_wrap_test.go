package main

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	fs, err := newFontSet()
	if err != nil {
		t.Fatal(err)
	}
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
		{"breaks Chinese between characters", strings.Repeat("东京是日本的首都，", 20), 200, 0},
		{"wraps Greek at words", strings.Repeat("Καλημέρα κόσμε ", 30), 200, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := wrap(fs, regularStyle, tc.text, 11, tc.maxW)
			if tc.lines > 0 && len(lines) != tc.lines {
				t.Fatalf("%d lines, want %d", len(lines), tc.lines)
			}
			var words []string
			for _, ln := range lines {
				if w := width(ln.gs, 11); w > tc.maxW {
					t.Fatalf("line %q is %.1f wide, over %.1f", runes(ln.gs), w, tc.maxW)
				}
				words = append(words, runes(ln.gs))
			}
			if tc.name == "breaks a long word" {
				if strings.Join(words, "") != long || len(lines) < 2 {
					t.Fatalf("broken word does not join back: %q", words)
				}
			} else if strings.HasPrefix(tc.name, "breaks Chinese") {
				if strings.Join(words, "") != tc.text || len(lines) < 2 {
					t.Fatalf("lines do not join back to the text: %q", words)
				}
				for _, w := range words[1:] {
					if strings.HasPrefix(w, "，") {
						t.Fatalf("a line starts with a comma: %q", words)
					}
				}
			} else if strings.Join(strings.Fields(strings.Join(words, " ")), " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Fatalf("words lost: %q", words)
			}
		})
	}
}

// runes is the text a line of glyphs stands for.
func runes(gs []glyph) string {
	var b strings.Builder
	for _, g := range gs {
		b.WriteRune(g.r)
	}
	return b.String()
}
