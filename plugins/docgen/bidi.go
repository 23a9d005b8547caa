package main

import (
	"github.com/go-text/typesetting/bidi"
)

// Right-to-left text (Hebrew, Arabic) is laid out as a reader sees it:
// the Unicode bidirectional algorithm (go-text/typesetting's bidi) gives
// each character its embedding level, lines are wrapped in logical order
// and each line is then drawn in visual order (rule L2), a right-to-left
// paragraph aligned right. Arabic letters take their joining forms from
// the Arabic Presentation Forms in DejaVu Sans (arabicForms below), which
// covers the letters of Arabic and Persian; it is not a shaper: no marks
// are positioned (harakat are drawn where the font's advance puts them),
// no ligature is made (lam-alef is drawn as lam and alef joined: poppler
// reads a ligature's two letters back reversed), and mirrored characters
// (brackets) are not mirrored. pdftotext and copy-paste read the text back in logical
// order with the letters' base forms (the ToUnicode CMap maps each form
// to its letter).

// levels are the bidi embedding levels of a paragraph's characters and
// the paragraph's own level (0 left to right, 1 right to left: from its
// first strong character, rules P2 and P3).
func levels(rs []rune) ([]uint8, uint8) {
	lv := make([]uint8, len(rs))
	if !anyRTL(rs) {
		return lv, 0 // all at level 0, without the algorithm's allocations
	}
	var p bidi.Paragraph
	runs := p.Segment(rs, bidi.Neutral)
	base := uint8(255)
	for i := range runs.NumRuns() {
		r := runs.Run(i)
		for j := r.Start; j < r.End && j < len(lv); j++ {
			lv[j] = uint8(r.Level)
		}
		base = min(base, uint8(r.Level))
	}
	if base == 255 {
		base = 0
	}
	// A paragraph's level is its lowest: every character of a
	// right-to-left paragraph is at 1 or above, and a left-to-right one's
	// first strong character is at 0.
	return lv, base & 1
}

// anyRTL reports whether rs has a character of a right-to-left script or
// a right-to-left mark, embedding, override or isolate: without one, every
// level is 0.
func anyRTL(rs []rune) bool {
	for _, r := range rs {
		switch {
		case r < 0x0590:
		case r <= 0x08FF, r >= 0xFB1D && r <= 0xFDFF, r >= 0xFE70 && r <= 0xFEFF,
			r >= 0x10800 && r <= 0x10FFF, r >= 0x1E800 && r <= 0x1EFFF,
			r == 0x200F, r == 0x202B, r == 0x202E, r == 0x2067:
			return true
		}
	}
	return false
}

// visual reorders a line's glyphs for drawing (rule L2): from the highest
// level down to the lowest odd one, every run at that level or above is
// reversed.
func visual(line []glyph) []glyph {
	hi, loOdd := uint8(0), uint8(255)
	for _, g := range line {
		hi = max(hi, g.level)
		if g.level&1 == 1 {
			loOdd = min(loOdd, g.level)
		}
	}
	if loOdd == 255 {
		return line
	}
	out := append([]glyph(nil), line...)
	for lv := hi; lv >= loOdd; lv-- {
		for i := 0; i < len(out); {
			if out[i].level < lv {
				i++
				continue
			}
			j := i
			for j < len(out) && out[j].level >= lv {
				j++
			}
			for a, b := i, j-1; a < b; a, b = a+1, b-1 {
				out[a], out[b] = out[b], out[a]
			}
			i = j
		}
	}
	return out
}

// arabicForm is a letter's isolated presentation form and how many forms
// follow it in the block (isolated, final, initial, medial): 1 for a letter
// that joins neither side (hamza), 2 for one that joins only the letter
// before it (alef, dal, reh, waw…), 4 for one that joins both.
type arabicForm struct {
	isolated rune
	forms    int
}

var arabicForms = map[rune]arabicForm{
	0x0621: {0xFE80, 1}, 0x0622: {0xFE81, 2}, 0x0623: {0xFE83, 2}, 0x0624: {0xFE85, 2},
	0x0625: {0xFE87, 2}, 0x0626: {0xFE89, 4}, 0x0627: {0xFE8D, 2}, 0x0628: {0xFE8F, 4},
	0x0629: {0xFE93, 2}, 0x062A: {0xFE95, 4}, 0x062B: {0xFE99, 4}, 0x062C: {0xFE9D, 4},
	0x062D: {0xFEA1, 4}, 0x062E: {0xFEA5, 4}, 0x062F: {0xFEA9, 2}, 0x0630: {0xFEAB, 2},
	0x0631: {0xFEAD, 2}, 0x0632: {0xFEAF, 2}, 0x0633: {0xFEB1, 4}, 0x0634: {0xFEB5, 4},
	0x0635: {0xFEB9, 4}, 0x0636: {0xFEBD, 4}, 0x0637: {0xFEC1, 4}, 0x0638: {0xFEC5, 4},
	0x0639: {0xFEC9, 4}, 0x063A: {0xFECD, 4}, 0x0641: {0xFED1, 4}, 0x0642: {0xFED5, 4},
	0x0643: {0xFED9, 4}, 0x0644: {0xFEDD, 4}, 0x0645: {0xFEE1, 4}, 0x0646: {0xFEE5, 4},
	0x0647: {0xFEE9, 4}, 0x0648: {0xFEED, 2}, 0x0649: {0xFEEF, 2}, 0x064A: {0xFEF1, 4},
	// Persian and Urdu letters, in Presentation Forms-A.
	0x067E: {0xFB56, 4}, 0x0686: {0xFB7A, 4}, 0x0698: {0xFB8A, 2}, 0x06A9: {0xFB8E, 4},
	0x06AF: {0xFB92, 4}, 0x06CC: {0xFBFC, 4},
}

// transparent characters (harakat, superscript alef) do not break the
// joining of the letters around them.
func transparent(r rune) bool { return r >= 0x064B && r <= 0x065F || r == 0x0670 }

// joinsNext: r joins the letter after it (a dual-joining letter or tatweel).
func joinsNext(r rune) bool { return arabicForms[r].forms == 4 || r == 0x0640 }

// joinsPrev: r joins the letter before it.
func joinsPrev(r rune) bool { return arabicForms[r].forms >= 2 || r == 0x0640 }

// presentation is what to draw for the letters of one word: per
// character the code point whose glyph is drawn (its joining form).
// Text without Arabic letters is returned as it is.
func presentation(rs []rune) []rune {
	arabic := false
	for _, r := range rs {
		if r >= 0x0621 && r <= 0x06CC {
			arabic = true
			break
		}
	}
	if !arabic {
		return rs
	}
	draw := append([]rune(nil), rs...)
	neighbour := func(i, step int) rune {
		for j := i + step; j >= 0 && j < len(rs); j += step {
			if !transparent(rs[j]) {
				return rs[j]
			}
		}
		return 0
	}
	for i, r := range rs {
		f, ok := arabicForms[r]
		if !ok {
			continue
		}
		prev, next := neighbour(i, -1), neighbour(i, 1)
		before := joinsNext(prev) && joinsPrev(r)
		after := f.forms == 4 && joinsPrev(next)
		switch {
		case before && after:
			draw[i] = f.isolated + 3
		case after:
			draw[i] = f.isolated + 2
		case before:
			draw[i] = f.isolated + 1
		default:
			draw[i] = f.isolated
		}
	}
	return draw
}
