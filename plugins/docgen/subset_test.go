package main

import (
	"encoding/binary"
	"testing"

	"golang.org/x/image/font/sfnt"
)

// TestSubsetTTF: a subset keeps the glyph ids, the outlines of the glyphs
// used and of their components, empties every other glyph, is far smaller
// than the font, parses, and has the checksums right.
func TestSubsetTTF(t *testing.T) {
	fs, err := newFontSet()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		font int
		text string
	}{
		{"DejaVu Sans, Latin with a composite (Ä)", 0, "Ä Grüße"},
		{"DejaVu Sans Bold, Cyrillic", 1, "Привет"},
		{"Droid Sans Fallback, CJK", 2, "東京서울"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fs.fonts[tc.font]
			used := map[uint16]bool{}
			for _, r := range tc.text {
				if r == ' ' {
					continue
				}
				g := f.gid(r)
				if g == 0 {
					t.Fatalf("%s has no glyph for %q", f.name, r)
				}
				used[g] = true
			}
			out, err := subsetTTF(f.tables, used)
			if err != nil {
				t.Fatal(err)
			}
			if checksum(out) != 0xB1B0AFBA {
				t.Errorf("file checksum %#x, want 0xB1B0AFBA", checksum(out))
			}
			if _, err := sfnt.Parse(out); err != nil {
				t.Errorf("the subset does not parse: %v", err)
			}
			sub, err := readTables(out)
			if err != nil {
				t.Fatal(err)
			}
			if sub.numGlyphs() != f.tables.numGlyphs() {
				t.Fatalf("%d glyphs, want %d (ids kept)", sub.numGlyphs(), f.tables.numGlyphs())
			}
			kept := 0
			for g := range sub.numGlyphs() {
				data, err := sub.glyph(g)
				if err != nil {
					t.Fatal(err)
				}
				orig, _ := f.tables.glyph(g)
				if len(data) > 0 {
					kept++
				}
				if used[uint16(g)] && len(data) < len(orig) {
					t.Errorf("glyph %d used but not kept whole (%d of %d bytes)", g, len(data), len(orig))
				}
				for _, c := range components(data) {
					if d, _ := sub.glyph(c); len(d) == 0 {
						if o, _ := f.tables.glyph(c); len(o) > 0 {
							t.Errorf("glyph %d's component %d is emptied", g, c)
						}
					}
				}
			}
			if kept > 2*len(used)+4 {
				t.Errorf("%d glyphs kept for %d used", kept, len(used))
			}
			for _, tag := range []string{"name", "GSUB", "GPOS", "kern"} {
				if sub[tag] != nil {
					t.Errorf("table %s kept", tag)
				}
			}
			if binary.BigEndian.Uint16(sub["head"][50:]) != 1 {
				t.Error("loca not in the long format")
			}
			var zd deflater
			z, err := zd.deflate(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(z) > 20_000 {
				t.Errorf("subset of %d bytes compressed (%d uncompressed)", len(z), len(out))
			}
			t.Logf("%s: %d glyphs kept, %d bytes, %d compressed", f.name, kept, len(out), len(z))
		})
	}
}

func TestVisual(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"left to right", "abc def", "abc def"},
		{"Hebrew", "אבג דהו", "והד גבא"},
		{"Hebrew with a number", "אבג 123 דה", "הד 123 גבא"},
		{"English with a Hebrew word", "see אבג now", "see גבא now"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := []rune(tc.text)
			lv, _ := levels(rs)
			line := make([]glyph, len(rs))
			for i, r := range rs {
				line[i] = glyph{r: r, level: lv[i]}
			}
			if got := runes(visual(line)); got != tc.want {
				t.Fatalf("visual order %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPresentation(t *testing.T) {
	tests := []struct {
		name string
		word string
		want []rune
	}{
		// beh initial, alef final; lam initial, meem final (after a
		// non-joining alef, lam starts again).
		{"salam", "سلام", []rune{0xFEB3, 0xFEE0, 0xFE8E, 0xFEE1}},
		{"one letter", "ب", []rune{0xFE8F}},
		{"medial", "ببب", []rune{0xFE91, 0xFE92, 0xFE90}},
		{"harakat do not break joining", "بَب", []rune{0xFE91, 0x064E, 0xFE90}},
		{"Latin untouched", "ab", []rune{'a', 'b'}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := presentation([]rune(tc.word))
			if string(got) != string(tc.want) {
				t.Fatalf("forms %U, want %U", got, tc.want)
			}
		})
	}
}
