package pdftext

import (
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	unorm "golang.org/x/text/unicode/norm"
)

// Right-to-left text. A page places its glyphs where they are seen, so a
// line read left to right by position is in visual order: an Arabic or
// Hebrew word comes out reversed, and a search in the language never
// matches. logicalLine puts each line back into the order it is written
// and read in, undoing the reordering of the Unicode bidirectional
// algorithm (UAX #9, rule L2) with the characters' bidirectional classes:
//
//   - The line's direction is its majority of strong characters (a visual
//     line has no first character to decide by, rule P2's way); a tie
//     reads left to right.
//   - In a right-to-left line, the whole line is reversed, and then each
//     run that reads left to right (Latin words with the neutrals between
//     them, numbers) is reversed back; brackets outside such runs are
//     mirrored, since a reversed "(" is a ")".
//   - In a left-to-right line each right-to-left run (R and AL characters
//     with the neutrals, marks and numbers between them) is turned the same
//     way, as a right-to-left line of its own.
//
// Combining marks need nothing: drawn over their letter, they come before
// it in visual order (XeTeX, poppler agree), so the reversal puts them after
// it. Arabic and Hebrew presentation forms (the shaped glyphs that many fonts map to) are
// normalised (NFKC) to the letters a search types.

// visualText is a glyph's text as it must stand in a visual line: a glyph
// that stands for several characters of a right-to-left script (a lam-alef
// ligature mapped to "لا", an ActualText) carries them in logical order,
// which the line's reversal would turn round; so they are reversed here
// first.
func visualText(s string) string {
	if utf8.RuneCountInString(s) < 2 || !hasRTL(s) {
		return s
	}
	rs := []rune(s)
	slices.Reverse(rs)
	return string(rs)
}

// hasRTL reports whether s holds a right-to-left letter.
func hasRTL(s string) bool {
	for _, r := range s {
		if r >= 0x0590 && isRTL(bidiClass(r)) {
			return true
		}
	}
	return false
}

func bidiClass(r rune) bidi.Class {
	p, _ := bidi.LookupRune(r)
	return p.Class()
}

func isRTL(c bidi.Class) bool { return c == bidi.R || c == bidi.AL }

// logicalLine turns one line of visual-order text into logical order, in
// a new slice; ok is false for a line without right-to-left letters, which
// stays as it is. Leading white space (the line's indent on the page's
// grid) stays in front. Wide gaps (two spaces and more: table cells, a
// margin note) part the line into cells that are turned each on its own;
// a right-to-left line reads its cells from the right.
func logicalLine(line []byte) (out []byte, ok bool) {
	if !hasRTL(string(line)) {
		return nil, false
	}
	s := string(line)
	core := strings.TrimLeft(s, " ")
	indent := s[:len(s)-len(core)]
	core = strings.TrimRight(core, " ")
	rtl, ltr := 0, 0
	for _, r := range core {
		switch c := bidiClass(r); {
		case isRTL(c):
			rtl++
		case c == bidi.L:
			ltr++
		}
	}
	// Cells and the gaps between them, alternately.
	var parts []string
	for rest := core; rest != ""; {
		i := strings.Index(rest, "  ")
		if i < 0 {
			parts = append(parts, rest)
			break
		}
		j := i
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		parts = append(parts, rest[:i], rest[i:j])
		rest = rest[j:]
	}
	if rtl > ltr {
		slices.Reverse(parts)
	}
	out = append(out, indent...)
	for _, p := range parts {
		if strings.HasPrefix(p, " ") || !hasRTL(p) {
			out = append(out, p...)
			continue
		}
		out = append(out, normalizeRTL(logicalCell(p, rtl > ltr))...)
	}
	return out, true
}

// logicalCell turns one cell of a line into logical order; rtl is the
// line's direction.
func logicalCell(s string, rtl bool) string {
	rs := []rune(s)
	cls := make([]bidi.Class, len(rs))
	for i, r := range rs {
		cls[i] = bidiClass(r)
	}
	if rtl {
		rtlSegment(rs, cls)
		return string(rs)
	}
	// Each right-to-left run, from its first to its last R or AL
	// character, is a right-to-left segment.
	for i := 0; i < len(rs); {
		if !isRTL(cls[i]) {
			i++
			continue
		}
		j, end := i, i
		for j < len(rs) && cls[j] != bidi.L {
			if isRTL(cls[j]) {
				end = j
			}
			j++
		}
		rtlSegment(rs[i:end+1], cls[i:end+1])
		i = end + 1
	}
	return string(rs)
}

// rtlSegment turns a right-to-left segment from visual to logical order in
// place: reversed whole, then its left-to-right runs reversed back,
// brackets outside them mirrored. The runs are those of UAX #9 at level 2
// in a right-to-left paragraph: Latin text with the neutrals and numbers
// inside it (W7: a number next to Latin text is Latin), and apart from
// it each number (digits with single separators, W4, and their % or
// currency signs, W5), whose neighbours stay right to left (N1: numbers
// count as right to left for the neutrals between them).
func rtlSegment(rs []rune, cls []bidi.Class) {
	slices.Reverse(rs)
	slices.Reverse(cls)
	// W7. Inside a Latin run the reversal has not yet put the text back
	// in order, so a number belongs to the Latin run whichever side of it
	// the nearest strong character is Latin (up to a right-to-left one).
	latin := make([]bool, len(cls))
	last := bidi.R
	for i, c := range cls {
		switch {
		case c == bidi.L || isRTL(c):
			last = c
		case c == bidi.EN:
			latin[i] = last == bidi.L
		}
	}
	last = bidi.R
	for i := len(cls) - 1; i >= 0; i-- {
		switch c := cls[i]; {
		case c == bidi.L || isRTL(c):
			last = c
		case c == bidi.EN && (latin[i] || last == bidi.L):
			cls[i] = bidi.L
		}
	}
	inLTR := make([]bool, len(rs))
	turn := func(i, end int) {
		slices.Reverse(rs[i : end+1])
		slices.Reverse(cls[i : end+1])
		for k := i; k <= end; k++ {
			inLTR[k] = true
		}
	}
	for i := 0; i < len(rs); {
		switch cls[i] {
		case bidi.L:
			// To the last Latin character before the next right-to-left
			// letter or number.
			j, end := i, i
			for j < len(rs) && !isRTL(cls[j]) && cls[j] != bidi.EN && cls[j] != bidi.AN {
				if cls[j] == bidi.L {
					end = j
				}
				j++
			}
			turn(i, end)
			i = end + 1
		case bidi.EN, bidi.AN, bidi.ET:
			start, end := i, i-1
			j := i
			for j < len(rs) {
				c := cls[j]
				if c == bidi.EN || c == bidi.AN || c == bidi.ET {
					end = j
					j++
					continue
				}
				// One separator between two digits of a kind.
				if (c == bidi.CS || c == bidi.ES) && j > start && j+1 < len(rs) && cls[j+1] == cls[j-1] && (cls[j-1] == bidi.EN || cls[j-1] == bidi.AN) {
					j++
					continue
				}
				break
			}
			if end >= start && hasDigit(rs[start:end+1]) {
				turn(start, end)
			}
			i = max(end+1, i+1)
		default:
			i++
		}
	}
	for i, r := range rs {
		if !inLTR[i] {
			rs[i] = mirror(r)
		}
	}
}

func hasDigit(rs []rune) bool {
	for _, r := range rs {
		if c := bidiClass(r); c == bidi.EN || c == bidi.AN {
			return true
		}
	}
	return false
}

// mirror is the mirrored form of a paired punctuation character.
func mirror(r rune) rune {
	switch r {
	case '(':
		return ')'
	case ')':
		return '('
	case '[':
		return ']'
	case ']':
		return '['
	case '{':
		return '}'
	case '}':
		return '{'
	case '<':
		return '>'
	case '>':
		return '<'
	case '«':
		return '»'
	case '»':
		return '«'
	}
	return r
}

// normalizeRTL replaces the Arabic and Hebrew presentation forms
// (U+FB1D..FDFF, U+FE70..FEFF) by their NFKC letters, and nothing else:
// NFKC of a whole page would also change CJK widths, superscripts and
// the like.
func normalizeRTL(s string) string {
	if !strings.ContainsFunc(s, isPresentationForm) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		if isPresentationForm(r) {
			sb.WriteString(unorm.NFKC.String(string(r)))
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func isPresentationForm(r rune) bool {
	return (r >= 0xFB1D && r <= 0xFDFF) || (r >= 0xFE70 && r <= 0xFEFF)
}
