package pdftext

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	unorm "golang.org/x/text/unicode/norm"
)

// Layout turns positioned glyphs into text, in four passes:
//
//  1. Fragments: glyphs that follow each other in the content stream on one
//     baseline, in one size, without a gap, form a fragment (a word or part
//     of one). A gap wider than wordGap of the font size, a white-space
//     glyph, a baseline or size change ends it. Glyphs drawn twice at the
//     same place (fake bold, shadows) are dropped, and so are fragments
//     that repeat one at the same place (a stamp drawn five times);
//     letter-spaced words are joined (see joinSpacedLetters).
//  2. Lines: a fragment joins a line whose baseline lies within half a font
//     size of its own, so that superscripts and subscripts stay in their
//     line, unless it would overlap a fragment already there; lines are
//     ordered top to bottom.
//  3. Reading order: when a page is set in columns (a clear vertical
//     gutter with running text on both sides, see columnGutter), each band
//     between full-width lines is read column by column. Tables, whose
//     cells hold a few words, stay row by row.
//  4. Text: within a line, fragments are ordered left to right and joined;
//     a gap becomes one space or, when it is wide, enough spaces to put the
//     fragment at its column on a grid of the page's typical character
//     width, which keeps tables readable, as pdftotext -layout does.
//
// Text in other directions (a sideways axis label, a rotated table
// header) is laid out the same way in its own frame; each of its lines then
// joins the main direction's lines at the height of its middle. The main
// direction is the one most of the page's text runs in: on a page turned
// by /Rotate, or drawn sideways on an upright page, that is not left to
// right in device space, and the page is read in the frame of its text, as
// a reader turns the sheet (and as pdftotext does).

// wordGap is the gap, as a fraction of the font size, above which two
// glyphs belong to different words. Inter-word spaces are 0.2 em and more
// (TeX shrinks them to about 0.22), kerns and italic corrections stay
// below 0.1.
const wordGap = 0.12

// nastaliqRise is how far (in em) a glyph of a Nastaliq word may climb or
// fall from the one before it.
const nastaliqRise = 0.9

// spacedReach is how far (in em) apart two glyphs of Arabic script with no
// space between them may be drawn and still be one word, in a font that
// draws its word spaces (see spacedFonts); spacedRise is how far above
// or below its word's baseline a glyph may be drawn. Nastaliq's letters
// cascade down to the baseline from an em and more above it, and a letter
// drawn with no advance is placed where its ink ends, over half an em from
// the letter before.
const (
	spacedReach = 1.0
	spacedRise  = 2.0
)

// arabicScript reports whether s starts with a letter of the Arabic
// script (Arabic, Arabic Supplement, presentation forms).
//
// Every rune of those blocks is encoded from a lead byte of 0xD8 or more:
// the test of that byte, inlined, answers for Latin text without the call
// (two per glyph in buildFrags; a call costs a Go guest dearly on wasm).
func arabicScript(s string) bool { return len(s) > 0 && s[0] >= 0xD8 && arabicRune(s) }

// arabicRune reports whether s's first rune is in one of arabicScript's blocks.
func arabicRune(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r >= 0x0600 && r <= 0x06FF || r >= 0x0750 && r <= 0x077F || r >= 0xFB50 && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF
}

type frag struct {
	x0, x1     float64
	font       uint16 // the font of its first glyph (see glyph.font)
	y          float64
	size       float64
	text       []byte
	spaceAfter bool
	bold       bool    // every glyph is bold (fragments are words or less)
	lastX      float64 // origin of the last glyph, for the duplicate check
	lastY      float64 // baseline of the last glyph, for Nastaliq's slope
	lastW      float64 // advance of the last glyph
	lastText   string
	// firstX is the origin of the first glyph; drawn says that drawn
	// spaces, not gaps, held the glyphs together (see buildFrags); cuts
	// are where the text of each glyph of Arabic script starts; spaces
	// are the middles of the space glyphs drawn just before and after it
	// (NaN when there is none).
	firstX float64
	drawn  bool
	cuts   []int
	spaces [2]float64
	// leftward and rightward count the glyphs drawn left and right of
	// the one before them.
	leftward, rightward int
}

type line struct {
	frags []*frag
	y     float64
	size  float64
	ysize float64 // the size of the fragment whose baseline is y (groupLines)
}

func layoutText(glyphs []glyph, columns bool) string {
	if len(glyphs) == 0 {
		return ""
	}
	main := mainDir(glyphs)
	lines := groupLines(buildFrags(glyphs, main))
	// Text in the other directions is laid out in its own frame, line by
	// line, and each line joins the main ones as one row at the height of
	// its middle, where a reader's eye meets it and where pdftotext prints
	// it.
	for dir := range uint8(4) {
		if dir == main {
			continue
		}
		frags := buildFrags(glyphs, dir)
		if len(frags) == 0 {
			continue
		}
		cw := charWidth(glyphs, dir)
		for _, l := range groupLines(frags) {
			lines = append(lines, turnLine(l, dir, main, cw))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].y < lines[j].y })
	cw := charWidth(glyphs, main)
	var out strings.Builder
	blocks := [][]*line{lines}
	if columns {
		blocks = readingOrder(lines, cw)
	}
	for i, block := range blocks {
		if i > 0 {
			out.WriteString("\n\n")
		}
		renderLines(&out, block, cw)
	}
	return out.String()
}

// mainDir is the direction (see glyph) in which most of the page's
// characters run; left to right when there is a tie.
func mainDir(glyphs []glyph) uint8 {
	var n [4]int
	for i := range glyphs {
		if g := &glyphs[i]; !g.space {
			n[g.dir&3] += len(g.text)
		}
	}
	best := uint8(0)
	for dir := uint8(1); dir < 4; dir++ {
		if n[dir] > n[best] {
			best = dir
		}
	}
	return best
}

// toDevice takes a point of the frame of direction dir (see glyph) back
// to device space.
func toDevice(dir uint8, u, v float64) (float64, float64) {
	switch dir {
	case 1:
		return -v, u
	case 2:
		return -u, -v
	case 3:
		return v, -u
	}
	return u, v
}

// fromDevice takes a device-space point into the frame of direction dir.
func fromDevice(dir uint8, x, y float64) (float64, float64) {
	switch dir {
	case 1:
		return y, -x
	case 2:
		return -x, -y
	case 3:
		return -y, x
	}
	return x, y
}

// turnLine turns a line laid out in the frame of direction dir into a
// one-fragment line of the frame of direction main covering the same
// place on the page.
func turnLine(l *line, dir, main uint8, cw float64) *line {
	text := renderLine(nil, l, l.frags[0].x0, cw)
	u0, u1 := l.frags[0].x0, l.frags[0].x1
	for _, f := range l.frags {
		u0, u1 = fmin(u0, f.x0), fmax(u1, f.x1)
	}
	v0, v1 := l.y-l.size, l.y
	turn := func(u, v float64) (float64, float64) {
		x, y := toDevice(dir, u, v)
		return fromDevice(main, x, y)
	}
	ax, ay := turn(u0, v0)
	bx, by := turn(u1, v1)
	x0, y0, x1, y1 := fmin(ax, bx), fmin(ay, by), fmax(ax, bx), fmax(ay, by)
	f := &frag{x0: x0, x1: fmax(x1, x0+float64(len(text))*cw), y: (y0 + y1) / 2, size: l.size, text: text}
	return &line{frags: []*frag{f}, y: f.y, size: l.size}
}

func buildFrags(glyphs []glyph, dir uint8) []*frag {
	var frags []*frag
	var cur *frag
	var slab []frag // fragments are allocated in blocks, not one by one
	spaced := spacedFonts(glyphs, dir)
	narrow := narrowWordGaps(glyphs, dir)
	var space *glyph // the space glyph just drawn, if the last glyph was one
	end := func() {
		if cur != nil {
			cur.settle()
			cur = nil
		}
	}
	for i := range glyphs {
		g := &glyphs[i]
		if g.dir != dir {
			continue
		}
		if g.space {
			if cur != nil {
				cur.spaceAfter = true
				cur.y = spaceBaseline(cur, g, spaced)
				cur.spaces[1] = g.x + g.w/2
				end()
			}
			space = g
			continue
		}
		after := space
		space = nil
		if cur != nil && cur.combine(g) {
			continue
		}
		if cur != nil {
			dy := math.Abs(g.y - cur.y)
			// Fake bold: the same glyph again, a hair to the side.
			if g.text == cur.lastText && math.Abs(g.x-cur.lastX) < 0.1*g.size && dy < 0.2*g.size {
				continue
			}
			gap := g.x - cur.x1
			sameLine := dy <= 0.1*fmin(g.size, cur.size)
			sameSize := math.Abs(g.size-cur.size) <= 0.1*cur.size
			arabic := sameSize && arabicScript(g.text) && arabicScript(cur.lastText)
			// Nastaliq sets a word's letters on a slope (each within
			// nastaliqRise of the one before, the word within 1.5 em of
			// its first), a letter may sit over the wide one before it,
			// and a letter of no advance is placed by the next one's
			// position (on its line: not the next line's first letter):
			// such glyphs of Arabic script stay one word.
			nastaliq := arabic && g.x >= cur.x0-0.1*cur.size &&
				(!sameLine && (math.Abs(g.y-cur.lastY) <= nastaliqRise*cur.size || dy <= 1.5*cur.size) && gap <= wordGap*cur.size ||
					dy <= 1.5*cur.size && (cur.lastW == 0 && gap <= 0.35*cur.size || gap < 0 && g.x >= cur.lastX))
			// A font that draws its word spaces says where its words
			// end: glyphs of Arabic script with no space between them
			// are one word, however far apart its calligraphy sets
			// them, drawn from the left (in visual order) or from the
			// right (in logical order, see settle).
			drawn := arabic && spaced.has(g.font) && g.font == cur.font && dy <= spacedRise*cur.size &&
				g.x <= cur.x1+spacedReach*cur.size && g.x+g.w >= cur.x0-spacedReach*cur.size
			if drawn && !nastaliq {
				cur.drawn = true
			}
			limit := wordGap
			if arabic && g.font == cur.font {
				if w := narrow.of(g.font); w > 0 {
					limit = w
				}
			}
			if !nastaliq && !drawn && (!sameLine || !sameSize || gap > limit*cur.size || gap < -0.5*cur.size) {
				// A gap narrower than wordGap that parts words of a
				// font with narrow word spaces stays a space when the
				// line is rendered (see joins).
				if limit < wordGap && sameLine && gap > limit*cur.size && gap <= wordGap*cur.size {
					cur.spaceAfter = true
				}
				end()
			} else if g.x < cur.lastX-0.05*cur.size {
				cur.leftward++
			} else if g.x > cur.lastX+0.05*cur.size {
				cur.rightward++
			}
		}
		if cur == nil {
			if len(slab) == cap(slab) {
				slab = make([]frag, 0, 64)
			}
			slab = append(slab, frag{x0: g.x, x1: g.x, y: g.y, size: g.size, bold: true, font: g.font, firstX: g.x,
				spaces: [2]float64{math.NaN(), math.NaN()}})
			cur = &slab[len(slab)-1]
			frags = append(frags, cur)
		}
		if arabicScript(g.text) {
			cur.cuts = append(cur.cuts, len(cur.text))
		}
		cur.text = append(cur.text, g.text...)
		if after != nil && len(cur.text) == len(g.text) {
			cur.y = spaceBaseline(cur, after, spaced)
			cur.spaces[0] = after.x + after.w/2
		}
		cur.bold = cur.bold && g.bold
		cur.x1 = fmax(cur.x1, g.x+g.w)
		cur.x0 = fmin(cur.x0, g.x)
		cur.lastX, cur.lastY, cur.lastW, cur.lastText = g.x, g.y, g.w, g.text
	}
	end()
	return dropRepeats(joinSpacedLetters(frags))
}

// combine joins a TeX accent to its letter, as pdftotext does: TeX draws
// \accent as a spacing accent glyph (OT1 has no accented letters) over
// the letter, before it or after it, raised over a capital. When g or the
// fragment's last glyph is such an accent and the other a letter under
// it, the letter and its combining mark, composed, take the pair's place
// and combine reports true.
func (f *frag) combine(g *glyph) bool {
	if math.Abs(g.y-f.lastY) >= 0.5*fmax(g.size, f.size) || g.size > 1.25*f.size || f.size > 1.25*g.size ||
		f.lastW <= 0 || g.w <= 0 {
		return false
	}
	// The accent's middle lies over its letter.
	over := func(ax, aw, lx, lw float64) bool { m := ax + aw/2; return m > lx && m < lx+lw }
	if mark := spacingAccent([]byte(f.lastText)); mark != 0 && startsLetter(g.text) && over(f.lastX, f.lastW, g.x, g.w) {
		f.text = f.text[:len(f.text)-len(f.lastText)]
		if len(f.text) == 0 {
			// The accent began the fragment: the letter gives its
			// baseline and place.
			f.y, f.size, f.font, f.firstX, f.x0 = g.y, g.size, g.font, g.x, g.x
		}
		f.lastText = unorm.NFC.String(g.text + string(mark))
		f.lastX, f.lastY, f.lastW = g.x, g.y, g.w
	} else if mark := spacingAccent([]byte(g.text)); mark != 0 && startsLetter(f.lastText) && over(g.x, g.w, f.lastX, f.lastW) {
		f.text = f.text[:len(f.text)-len(f.lastText)]
		f.lastText = unorm.NFC.String(f.lastText + string(mark))
	} else {
		return false
	}
	f.text = append(f.text, f.lastText...)
	f.bold = f.bold && g.bold
	f.x0, f.x1 = fmin(f.x0, g.x), fmax(f.x1, g.x+g.w)
	return true
}

// startsLetter reports whether s starts with a letter.
func startsLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// settle finishes a fragment. A word of Arabic script joined by its drawn
// spaces (see buildFrags) was drawn from the right, in logical order, as
// cairo draws it, when most of its glyphs were drawn left of the one
// before them and the spaces drawn around it agree (the one before it
// lies to its right, the one after it to its left; with neither, its
// last glyph must lie wholly left of its first); a line is laid out in
// visual order, so its glyphs are turned round, but for the numbers in
// it, which are drawn from the left whichever way their line runs. Word
// processors draw from the left, and a Nastaliq letter may sit anywhere
// over its word, so no one letter tells.
func (f *frag) settle() {
	if !f.drawn || len(f.cuts) < 2 || f.cuts[0] != 0 || f.leftward <= f.rightward {
		return
	}
	mid := (f.x0 + f.x1) / 2
	before, after := f.spaces[0], f.spaces[1]
	var fromRight bool
	switch {
	case !math.IsNaN(before) || !math.IsNaN(after):
		fromRight = !(before <= mid) && !(after >= mid) // NaN compares false
	default:
		fromRight = f.lastX+f.lastW <= f.firstX
	}
	if !fromRight {
		return
	}
	// The glyphs as units, a number's digits one unit.
	type unit struct{ start, end int }
	var units []unit
	for k, c := range f.cuts {
		end := len(f.text)
		if k+1 < len(f.cuts) {
			end = f.cuts[k+1]
		}
		if n := len(units); n > 0 && isDigits(f.text[c:end]) && isDigits(f.text[units[n-1].start:units[n-1].end]) {
			units[n-1].end = end
			continue
		}
		units = append(units, unit{c, end})
	}
	out := make([]byte, 0, len(f.text))
	for k := len(units) - 1; k >= 0; k-- {
		out = append(out, f.text[units[k].start:units[k].end]...)
	}
	f.text = out
}

// isDigits reports whether b holds only digits (European, Arabic-Indic
// and their separators: bidirectional classes EN and AN).
func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, r := range string(b) {
		if c := bidiClass(r); c != bidi.EN && c != bidi.AN {
			return false
		}
	}
	return true
}

// fontSet is a set of the page's fonts by number (see glyph.font).
type fontSet []bool

func (s fontSet) has(id uint16) bool { return id != 0 && int(id) < len(s) && s[id] }

// spacedFonts finds the fonts that draw the spaces between their words:
// on the page, at least two of their space glyphs stand between two of
// their other glyphs near one baseline, and gaps between their glyphs on
// one baseline with no space glyph between them (gaps wider than wordGap)
// are at most twice as many. LibreOffice and word processors draw their
// spaces; TeX positions words apart instead, and a gap is all there is,
// though XeTeX may draw a space glyph here and there (for a zero width
// non-joiner, see below): a font whose words are mostly set apart by
// gaps is read by its gaps. A Nastaliq font that draws its spaces has
// gaps inside words too (its calligraphy sets letters apart), but fewer
// than its spaces.
func spacedFonts(glyphs []glyph, dir uint8) fontSet {
	var drawn, gaps []int  // by font: the spaces drawn between its glyphs, the gaps
	var prev, space *glyph // the last glyph drawn, and the space after it
	for i := range glyphs {
		g := &glyphs[i]
		if g.dir != dir {
			continue
		}
		if g.space {
			space = g
			continue
		}
		if prev != nil && g.font != 0 && prev.font == g.font {
			if int(g.font) >= len(drawn) {
				drawn = append(drawn, make([]int, int(g.font)+1-len(drawn))...)
				gaps = append(gaps, make([]int, int(g.font)+1-len(gaps))...)
			}
			switch {
			// XeTeX draws a zero width non-joiner as a space glyph and
			// a kern taking its width back: the next glyph starts where
			// the space does, and says nothing of word spaces.
			case space != nil:
				if space.font == g.font && math.Abs(prev.y-space.y) <= spacedRise*space.size &&
					math.Abs(g.y-space.y) <= spacedRise*space.size && math.Abs(g.x-space.x) > 0.05*space.size {
					drawn[g.font]++
				}
			case math.Abs(g.y-prev.y) <= 0.1*g.size && glyphGap(prev, g) > wordGap*g.size:
				gaps[g.font]++
			}
		}
		prev, space = g, nil
	}
	var set fontSet
	for id, n := range drawn {
		if n >= 2 && 2*n >= gaps[id] {
			if set == nil {
				set = make(fontSet, len(drawn))
			}
			set[id] = true
		}
	}
	return set
}

// glyphGap is the room between two glyphs drawn one after the other:
// right of a's box when b lies right of it, else left of it (a line drawn
// from the right).
func glyphGap(a, b *glyph) float64 {
	if b.x >= a.x {
		return b.x - (a.x + a.w)
	}
	return a.x - (b.x + b.w)
}

// Narrow word spaces (see narrowWordGaps): of a font's gaps between
// glyphs of Arabic script on one baseline, at least narrowAbut must abut
// (within abutSlack em), at least narrowMin must be narrow (between
// narrowFloor em and wordGap), no fewer than the wider ones and one for
// every narrowShare abutting ones at least (a word space every few
// letters, where a Naskh font's positive kerns, after a letter that does
// not join the next, come once in a hundred glyphs: the surah table of
// quran's manual), and at most a tenth as many as those two kinds may be anything else (glyphs
// overlapping, or a hair apart). The font's word gap is then half the
// tenth percentile of its narrow gaps (a justified line shrinks its
// spaces by a third at most), at least narrowFloor.
const (
	narrowAbut  = 10
	narrowMin   = 3
	abutSlack   = 0.01
	narrowFloor = 0.02
	narrowShare = 10
)

// narrowWordGaps finds the fonts of Arabic script whose word spaces are
// narrower than wordGap, and the gap (em) above which their glyphs are
// words apart: 0 for a font read by wordGap. XeTeX places each glyph of a
// word at the end of the one before (Naskh joins its letters by their
// advances), so a gap between glyphs of Arabic script is a word space
// however narrow: Alkalami's space is under a twentieth of an em. Fonts
// whose letters do not abut (Nastaliq's cascades, a writer that positions
// each glyph by rounding) keep wordGap. Glyphs without advance (marks)
// are left out.
func narrowWordGaps(glyphs []glyph, dir uint8) fontGaps {
	type tally struct {
		abut, narrow, wide, odd int
		gaps                    []float64
	}
	var ts []tally // by font
	var prev *glyph
	x1 := 0.0 // the right edge of the run of glyphs prev ends
	for i := range glyphs {
		g := &glyphs[i]
		if g.dir != dir || g.w <= 0 && !g.space {
			continue
		}
		if g.space || g.font == 0 || !arabicScript(g.text) {
			prev = nil
			continue
		}
		if prev == nil || prev.font != g.font || math.Abs(prev.y-g.y) > 0.1*g.size || math.Abs(prev.size-g.size) > 0.01*g.size {
			prev, x1 = g, g.x+g.w
			continue
		}
		if int(g.font) >= len(ts) {
			ts = append(ts, make([]tally, int(g.font)+1-len(ts))...)
		}
		t := &ts[g.font]
		switch gap := (g.x - x1) / g.size; {
		case math.Abs(gap) <= abutSlack:
			t.abut++
		case gap > narrowFloor && gap <= wordGap:
			t.narrow++
			if len(t.gaps) < 1024 {
				t.gaps = append(t.gaps, gap)
			}
		case gap > wordGap:
			t.wide++
		default:
			t.odd++
		}
		prev, x1 = g, fmax(x1, g.x+g.w)
	}
	var out fontGaps
	for id, t := range ts {
		if t.abut < narrowAbut || t.narrow < narrowMin || t.narrow < t.wide || narrowShare*t.narrow < t.abut ||
			10*t.odd > t.abut+t.narrow {
			continue
		}
		if out == nil {
			out = make(fontGaps, len(ts))
		}
		slices.Sort(t.gaps)
		out[id] = fmax(narrowFloor, t.gaps[len(t.gaps)/10]/2)
	}
	return out
}

// fontGaps is the word gap (em) of each of the page's fonts by number (see
// glyph.font), 0 where wordGap applies.
type fontGaps []float64

func (g fontGaps) of(id uint16) float64 {
	if int(id) < len(g) {
		return g[id]
	}
	return 0
}

// spaceBaseline is the baseline of a fragment of Arabic script next to a
// drawn space: a font that draws its spaces sets them on the line's
// baseline, while the letters of a Nastaliq word are drawn above and
// below it, its first or last one too.
func spaceBaseline(f *frag, space *glyph, spaced fontSet) float64 {
	if space.font != f.font || !spaced.has(f.font) || !arabicScript(string(f.text)) ||
		math.Abs(space.y-f.y) > spacedRise*f.size || math.Abs(space.size-f.size) > 0.1*f.size {
		return f.y
	}
	return space.y
}

// repeatOffset is how far (in em) a fragment may lie from an earlier one
// with the same text and still be the same text drawn again; repeatCell
// (points) is the cell of the grid the earlier fragments are looked up
// in, and bounds that distance; repeatScan bounds the fragments compared
// in one cell (a hostile page can put many in one).
const (
	repeatOffset = 0.3
	repeatCell   = 24.0
	repeatScan   = 32
)

// repeatKey keys the grid by a fragment's text and cell: a hash of the
// text (fragments are compared byte for byte, so a collision costs a
// comparison, never a wrong drop), so that looking up costs no string.
func repeatKey(textHash uint64, cx, cy int) uint64 {
	return textHash ^ uint64(cx)*0x9E3779B97F4A7C15 ^ uint64(cy)*0xC2B2AE3D27D4EB4F
}

// fnv1a is the 64-bit FNV-1a hash of b.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// dropRepeats drops the fragments that repeat an earlier one's text at
// (nearly) the same place in the same size: a watermark or stamp drawn
// several times over itself (each stamping pass adds a copy), text drawn
// again for a glow, a shadow or an outline. A reader sees it once; printed
// five times it would also get five lines, as no line takes two fragments
// over each other.
func dropRepeats(frags []*frag) []*frag {
	if len(frags) < 2 {
		return frags
	}
	cell := func(v float64) int { return int(math.Floor(v / repeatCell)) }
	seen := make(map[uint64][]*frag, len(frags))
	out := make([]*frag, 0, len(frags))
	for _, f := range frags {
		th := fnv1a(f.text)
		cx, cy := cell(f.x0), cell(f.y)
		if repeated(seen, f, th, cx, cy) {
			continue
		}
		k := repeatKey(th, cx, cy)
		seen[k] = append(seen[k], f)
		out = append(out, f)
	}
	return out
}

// repeated reports whether f repeats a fragment in seen, in the cell
// (cx, cy) of its origin or around it.
func repeated(seen map[uint64][]*frag, f *frag, textHash uint64, cx, cy int) bool {
	// A copy lies within tol of f (below), at most repeatOffset of its
	// size (a copy's size is within 10% of f's): the neighbouring cells
	// are looked in only when f is that close to their edge.
	reach := fmin(repeatCell, repeatOffset*f.size/0.9)
	near := func(v float64, c int) (lo, hi int) {
		if v-float64(c)*repeatCell < reach {
			lo = -1
		}
		if float64(c+1)*repeatCell-v < reach {
			hi = 1
		}
		return lo, hi
	}
	x0, x1 := near(f.x0, cx)
	y0, y1 := near(f.y, cy)
	for dx := x0; dx <= x1; dx++ {
		for dy := y0; dy <= y1; dy++ {
			prev := seen[repeatKey(textHash, cx+dx, cy+dy)]
			for _, g := range prev[max(0, len(prev)-repeatScan):] {
				if !bytes.Equal(f.text, g.text) {
					continue
				}
				// Marks and narrow letters repeat one character apart
				// (fathas on neighbouring letters, a row of kashidas): the
				// copy must lie within half its width, or exactly on the
				// original.
				tol := fmin(repeatCell, fmax(0.01*g.size, fmin(repeatOffset*g.size, 0.5*fmax(f.x1-f.x0, g.x1-g.x0))))
				if math.Abs(f.x0-g.x0) <= tol && math.Abs(f.y-g.y) <= tol && math.Abs(f.size-g.size) <= 0.1*g.size {
					return true
				}
			}
		}
	}
	return false
}

// Letter-spaced text (a heading set with Tc character spacing, with soul's
// \so or microtype's \textls, or a logo placed letter by letter) comes as
// one fragment per letter: its gaps are wider than wordGap. A run of such
// letters joins into words when its gaps are uniform and small: either
// the run also has wider gaps (or white-space glyphs) between its words,
// so that the uniform small ones can only be letter spacing, or they are
// clearly narrower than the line's word spaces (TeX stretches and shrinks
// those from line to line; the page's count when the line has no other
// words), or the run is a long one of capitals (six single capitals in a
// row with even gaps are a spaced word, not six one-letter words). A
// letter gap is also narrower than the letters: wider gaps are the cells
// of a table or a character chart, or letters typed apart in a monospaced
// font. Right-to-left scripts are not letter-spaced (Arabic stretches its
// words with kashida instead), and their isolated letters stay apart.
const (
	maxLetterGap    = 1.5  // em: a gap wider than this ends a run
	letterGapSpread = 0.35 // the letter gaps lie within this fraction of the narrowest (plus 0.06 em)
	wordGapFactor   = 1.4  // a word gap in a run is this much wider than the widest letter gap
	letterWordRatio = 0.75 // letter gaps below this share of the line's word space are letter spacing
	longSpacedRun   = 6    // single capitals in a row that make a spaced word ...
	longRunRatio    = 1.25 // ... as long as their gaps stay below this share of the word space
	maxGapToWidth   = 0.8  // letter gaps stay below this share of the letters' mean advance
	maxLetterRise   = 0.3  // em: baselines of one spaced word may differ this much (a bouncing logo)
)

// joinSpacedLetters merges the runs of letter-spaced fragments (in content
// order) into words; other fragments are kept as they are.
func joinSpacedLetters(frags []*frag) []*frag {
	if len(frags) < 3 {
		return frags
	}
	ws := -1.0 // the page's word space, measured when a run needs it
	out := make([]*frag, 0, len(frags))
	for i := 0; i < len(frags); {
		j := i
		if spacedLetter(frags[i]) {
			for j+1 < len(frags) && spacedLetter(frags[j+1]) && sameSpacedRun(frags[j], frags[j+1]) {
				j++
			}
		}
		if j-i+1 >= 3 {
			if ws < 0 {
				ws = wordSpace(frags)
			}
			out = append(out, spacedRun(frags[i:j+1], lineWordSpace(frags, i, j, ws))...)
		} else {
			out = append(out, frags[i:j+1]...)
		}
		i = j + 1
	}
	return out
}

// spacedLetter reports whether f can be part of a letter-spaced word: one
// or two letters or digits (a kerned pair may have joined).
func spacedLetter(f *frag) bool {
	// Most fragments are words: longer than two characters of any script.
	if len(f.text) > 2*utf8.UTFMax || utf8.RuneCount(f.text) > 2 {
		return false
	}
	n := 0
	for _, r := range string(f.text) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) ||
			unicode.In(r, unicode.Arabic, unicode.Hebrew, unicode.Syriac, unicode.Thaana, unicode.Nko) {
			return false
		}
		n++
	}
	return n >= 1 && n <= 2
}

// sameSpacedRun reports whether b may follow a in a run of spaced letters.
func sameSpacedRun(a, b *frag) bool {
	gap := (b.x0 - a.x1) / a.size
	return math.Abs(a.size-b.size) <= 0.1*a.size && math.Abs(a.y-b.y) <= maxLetterRise*a.size &&
		gap >= -0.05 && gap <= maxLetterGap
}

// spacedRun joins a run of spaced letters (see joinSpacedLetters) into
// words, or returns it unchanged when its gaps are not letter spacing.
func spacedRun(run []*frag, ws float64) []*frag {
	gaps := make([]float64, len(run)-1)
	lo := math.Inf(1)
	for k := range gaps {
		gaps[k] = (run[k+1].x0 - run[k].x1) / run[k].size
		if !run[k].spaceAfter {
			lo = fmin(lo, gaps[k])
		}
	}
	if math.IsInf(lo, 1) {
		return run
	}
	letterMax := lo + fmax(0.06, letterGapSpread*lo)
	letter := make([]bool, len(gaps))
	var words, letters, single, alpha int
	var sum float64
	for k, g := range gaps {
		switch {
		case !run[k].spaceAfter && g <= letterMax:
			letter[k] = true
			letters++
			sum += g
		case run[k].spaceAfter || g >= wordGapFactor*letterMax:
			words++
		default:
			return run // neither letter nor word spacing: not uniform
		}
	}
	var upper, runes int
	var width float64
	for _, f := range run {
		n := utf8.RuneCount(f.text)
		if n == 1 {
			single++
		}
		r, _ := utf8.DecodeRune(f.text)
		if unicode.IsLetter(r) {
			alpha++
		}
		if unicode.IsUpper(r) {
			upper++
		}
		runes += n
		width += (f.x1 - f.x0) / f.size
	}
	mean := sum / float64(max(letters, 1))
	switch {
	case letters < 2 || 3*single < 2*len(run) || 3*alpha < 2*len(run) || mean > maxGapToWidth*width/float64(runes):
		return run
	case words > 0, mean <= letterWordRatio*ws:
	case single >= longSpacedRun && upper == len(run) && mean <= longRunRatio*ws:
	default:
		return run
	}
	var out []*frag
	var cur *frag
	var ys float64
	var n int
	flush := func() {
		if cur != nil {
			cur.y = ys / float64(n)
			out = append(out, cur)
		}
	}
	for k, f := range run {
		if k == 0 || !letter[k-1] {
			flush()
			c := *f
			c.text = slices.Clone(f.text)
			cur, ys, n = &c, f.y, 1
			continue
		}
		cur.text = append(cur.text, f.text...)
		cur.x0, cur.x1 = fmin(cur.x0, f.x0), fmax(cur.x1, f.x1)
		cur.bold = cur.bold && f.bold
		cur.spaceAfter = f.spaceAfter
		cur.lastX, cur.lastText = f.lastX, f.lastText
		ys += f.y
		n++
	}
	flush()
	return out
}

// lineWordSpace is the word space (in em) of the line of the run
// frags[i..j]: the median gap between the fragments next to the run in the
// content stream on its baseline, where one of them is a longer word; the
// page's word space ws when there are none.
func lineWordSpace(frags []*frag, i, j int, ws float64) float64 {
	var gs []float64
	add := func(a, b *frag) {
		if math.Abs(a.size-b.size) > 0.1*a.size || utf8.RuneCount(a.text) < 3 && utf8.RuneCount(b.text) < 3 {
			return
		}
		if g := (b.x0 - a.x1) / a.size; g > wordGap && g < 1 {
			gs = append(gs, g)
		}
	}
	onLine := func(f *frag) bool { return math.Abs(f.y-frags[i].y) <= maxLetterRise*frags[i].size }
	for k := i - 1; k >= 0 && onLine(frags[k]) && onLine(frags[k+1]); k-- {
		add(frags[k], frags[k+1])
	}
	for k := j + 1; k < len(frags) && onLine(frags[k]) && onLine(frags[k-1]); k++ {
		add(frags[k-1], frags[k])
	}
	if len(gs) == 0 {
		return ws
	}
	slices.Sort(gs)
	return gs[len(gs)/2]
}

// wordSpace is the page's typical gap between words, in em: the median of
// the gaps between neighbouring fragments on one baseline where one of
// them is a longer word (so that spaced letters do not count); 0.3 em when
// the page has too few.
func wordSpace(frags []*frag) float64 {
	var gs []float64
	for k := 1; k < len(frags); k++ {
		a, b := frags[k-1], frags[k]
		if math.Abs(a.y-b.y) > 0.1*a.size || math.Abs(a.size-b.size) > 0.1*a.size {
			continue
		}
		if utf8.RuneCount(a.text) < 3 && utf8.RuneCount(b.text) < 3 {
			continue
		}
		if g := (b.x0 - a.x1) / a.size; g > wordGap && g < 1 {
			gs = append(gs, g)
		}
	}
	if len(gs) < 5 {
		return 0.3
	}
	slices.Sort(gs)
	return gs[len(gs)/2]
}

func groupLines(frags []*frag) []*line {
	sorted := slices.Clone(frags)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].y < sorted[j].y })
	var lines []*line
	for _, f := range sorted {
		// The fragment joins the most recent line within reach of its
		// baseline where it overlaps nothing: two fragments over each
		// other cannot be read as one line.
		var into *line
		for i := len(lines) - 1; i >= 0 && i >= len(lines)-3; i-- {
			l := lines[i]
			if f.y-l.y > 0.5*fmax(l.size, f.size) {
				break
			}
			if !l.overlaps(f) {
				into = l
				break
			}
		}
		if into == nil {
			lines = append(lines, &line{frags: []*frag{f}, y: f.y, size: f.size, ysize: f.size})
			continue
		}
		// A line begun by a footnote mark takes the baseline of the
		// larger word it marks, so that what is set below that
		// baseline (the E of TeX) is within reach. In a formula (a big
		// operator's limit, a numerator over its fraction) the line
		// keeps its baseline: its subscripts would be out of reach.
		if d := f.y - into.y; f.size > 1.2*into.ysize && d > 0.1*into.ysize && d <= 0.6*into.ysize && into.marks(f) {
			into.y, into.ysize = f.y, f.size
		}
		into.frags = append(into.frags, f)
		into.size = fmax(into.size, f.size)
	}
	for _, l := range lines {
		sort.SliceStable(l.frags, func(i, j int) bool { return l.frags[i].x0 < l.frags[j].x0 })
	}
	return lines
}

// marks reports whether the fragment that gives l its baseline is a
// footnote mark (digits or a sign such as * or †, not a formula's letter)
// set against f: after the word it marks (starting where f ends, f ending
// in a letter or digit) or before a footnote's text (f starting with a
// letter less than half an em after it).
func (l *line) marks(f *frag) bool {
	word := func(r rune) bool {
		return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !(r >= 0x1D400 && r <= 0x1D7FF)
	}
	last, _ := utf8.DecodeLastRune(f.text)
	first, _ := utf8.DecodeRune(f.text)
	for _, g := range l.frags {
		if g.y != l.y || utf8.RuneCount(g.text) > 2 || bytes.ContainsFunc(g.text, unicode.IsLetter) {
			continue
		}
		if word(last) && math.Abs(g.x0-f.x1) <= 0.15*f.size ||
			unicode.IsLetter(first) && word(first) && f.x0 >= g.x1 && f.x0-g.x1 <= 0.5*f.size {
			return true
		}
	}
	return false
}

// overlaps reports whether f covers more than half of the width of a
// fragment already in the line, or the other way round.
func (l *line) overlaps(f *frag) bool {
	for _, g := range l.frags {
		o := fmin(f.x1, g.x1) - fmax(f.x0, g.x0)
		if o > 0 && o > 0.5*fmin(f.x1-f.x0, g.x1-g.x0) && !kernedIn(f, g) && !kernedIn(g, f) {
			return true
		}
	}
	return false
}

// kernedIn reports whether s is a piece of o's word set over its edge: the
// raised, smaller A of the LaTeX logo kerned back into the L; a TeX
// accent raised over a capital. It is at most two characters, raised
// over o's baseline by less than half o's size, and either a spacing
// accent over o or set across o's edge between half and nine tenths of
// o's size (one letter may be as large: LaTeX 2.09's small a is a
// smaller glyph of the same font size); text drawn over other text (a stamp, a heading over a
// footnote) is larger, further off or wider, and a subscript, below,
// belongs to the line above it no more than before.
func kernedIn(s, o *frag) bool {
	dy := o.y - s.y
	if len(s.text) > 8 || utf8.RuneCount(s.text) > 2 || dy <= 0.1*fmin(s.size, o.size) || dy >= 0.5*o.size {
		return false
	}
	if spacingAccent(s.text) != 0 {
		return s.size <= 1.1*o.size && s.x0 >= o.x0-0.2*o.size && s.x1 <= o.x1+0.2*o.size
	}
	return s.size >= 0.5*o.size && (s.size <= 0.9*o.size || s.size <= 1.01*o.size && utf8.RuneCount(s.text) == 1) &&
		(s.x0 < o.x0 && s.x1 > o.x0 || s.x0 < o.x1 && s.x1 > o.x1)
}

// spacingAccent is the combining mark of the spacing accent b (TeX draws
// an accent as a glyph of its own over the letter), or 0 when b is not
// one.
func spacingAccent(b []byte) rune {
	r, n := utf8.DecodeRune(b)
	if n != len(b) {
		return 0
	}
	switch r {
	case '\u02C6':
		return '\u0302'
	case '\u02DC':
		return '\u0303'
	case '\u00A8':
		return '\u0308'
	case '\u00B4':
		return '\u0301'
	case '`':
		return '\u0300'
	case '\u00B8':
		return '\u0327'
	case '\u02C7':
		return '\u030C'
	case '\u02D8':
		return '\u0306'
	case '\u00AF':
		return '\u0304'
	case '\u02D9':
		return '\u0307'
	case '\u02DD':
		return '\u030B'
	case '\u02DB':
		return '\u0328'
	case '\u02DA':
		return '\u030A'
	}
	return 0
}

// charWidth is the page's typical advance per character: the grid on which
// wide gaps become runs of spaces.
func charWidth(glyphs []glyph, dir uint8) float64 {
	// A histogram of widths in 1/64 units finds the median without a slice
	// of every width: a dense page has thousands of glyphs.
	var hist [1024]uint32
	var over []float64 // the rare wider ones, exactly
	count := 0
	for i := range glyphs {
		g := &glyphs[i]
		if g.dir != dir || g.space || g.w <= 0 {
			continue
		}
		n := utf8.RuneCountInString(g.text)
		if n == 0 {
			continue
		}
		w := g.w / float64(n)
		if b := int(w * 64); b < len(hist) {
			hist[b]++
		} else {
			over = append(over, w)
		}
		count++
	}
	if count == 0 {
		return 5
	}
	w, mid := 0.0, uint32(count/2)
	seen := uint32(0)
	for b, c := range hist {
		if seen+c > mid {
			w = (float64(b) + 0.5) / 64
			break
		}
		seen += c
	}
	if w == 0 && seen <= mid {
		slices.Sort(over)
		w = over[int(mid-seen)]
	}
	if w < 1 {
		w = 1
	}
	return w
}

func renderLines(out *strings.Builder, lines []*line, cw float64) {
	minX := math.Inf(1)
	for _, l := range lines {
		minX = fmin(minX, l.frags[0].x0)
	}
	var buf []byte
	for i, l := range lines {
		if i > 0 {
			out.WriteByte('\n')
			// A wide vertical gap (a new paragraph or section) shows as a
			// blank line.
			if gap := l.y - lines[i-1].y; gap > 2*fmax(l.size, lines[i-1].size) {
				out.WriteByte('\n')
			}
		}
		buf = renderLine(buf[:0], l, minX, cw)
		out.Write(buf)
	}
}

// renderLine appends one line's text: fragments without a gap join, an
// ordinary gap is one space, a wide one pads to the fragment's column on
// the character grid that starts at minX.
//
// The line is then put in logical order (see logicalLine): right-to-left
// text is laid out by position, in visual order.
func renderLine(buf []byte, l *line, minX, cw float64) []byte {
	start := len(buf)
	buf = renderVisual(buf, l, minX, cw)
	if lg, ok := logicalLine(buf[start:]); ok {
		buf = append(buf[:start], lg...)
	}
	return buf
}

// renderVisual is renderLine in visual order.
func renderVisual(buf []byte, l *line, minX, cw float64) []byte {
	col := 0
	for k, f := range l.frags {
		target := int(math.Round((f.x0 - minX) / cw))
		if k > 0 {
			prev := l.frags[k-1]
			if !prev.spaceAfter && joins(prev, f) {
				buf = append(buf, f.text...)
				col += utf8.RuneCount(f.text)
				continue
			}
			if gap := f.x0 - prev.x1; gap < 3*cw {
				target = col + 1 // an ordinary word space
			} else {
				target = max(target, col+1) // a gutter: keep the column
			}
		}
		for ; col < target; col++ {
			buf = append(buf, ' ')
		}
		buf = append(buf, f.text...)
		col += utf8.RuneCount(f.text)
	}
	return buf
}

// joins reports whether f continues prev's word. On one baseline a gap up
// to wordGap still joins (fragments split by a size change, kerning). A
// superscript, subscript or neighbour on another baseline joins only the
// word it touches, and is set apart from one it does not however small
// the gap: that is how pdftotext treats text on different baselines.
func joins(prev, f *frag) bool {
	gap := f.x0 - prev.x1
	small := fmin(f.size, prev.size)
	if math.Abs(f.y-prev.y) > 0.1*small {
		return gap <= 0.01*small
	}
	return gap <= wordGap*fmax(prev.size, f.size)
}

// mainSize is the font size that covers most of a line's characters: a
// heading's size, not that of a footnote mark in it.
func (l *line) mainSize() float64 {
	best, bestN := l.size, -1
	count := map[float64]int{}
	for _, f := range l.frags {
		k := math.Round(f.size*2) / 2
		count[k] += len(f.text)
		if count[k] > bestN {
			best, bestN = k, count[k]
		}
	}
	return best
}

// bold reports whether most of the line is set in bold (a heading may
// name a command in a typewriter face).
func (l *line) bold() bool {
	b, all := 0, 0
	for _, f := range l.frags {
		all += len(f.text)
		if f.bold {
			b += len(f.text)
		}
	}
	return 2*b > all
}

// Columns. A gutter is a vertical strip, at least minGutter character
// widths wide and away from the page's text edges, that no line's text
// crosses (word spaces are part of a line's text; the wide gaps between
// table cells and between columns are not) on most lines. It makes the page
// a column layout only when both sides carry running text: enough lines of
// several words each. Tables and forms, whose cells hold a few words, and
// pages with a single column never qualify.
const (
	minGutter        = 1.5 // character widths
	minColumnLines   = 6   // lines of text on each side
	minWordsPerLine  = 4.0 // average words per line on each side
	maxGutterCrosses = 0.1 // fraction of lines that may cross it (headings, figures)
	minCellGap       = 2.0 // character widths: a gap between table cells, not a word space
)

// readingOrder splits the lines into blocks to be read one after the other:
// one block, the lines as they are, unless the page has columns; then
// full-width lines stay where they are and the lines between them are read
// column by column, left column first.
func readingOrder(lines []*line, cw float64) [][]*line {
	g0, g1, ok := columnGutter(lines, cw)
	if !ok {
		return [][]*line{lines}
	}
	var blocks [][]*line
	var full, left, right []*line
	flush := func() {
		if len(full) > 0 {
			blocks = append(blocks, full)
			full = nil
		}
		if len(left) > 0 {
			blocks = append(blocks, left)
			left = nil
		}
		if len(right) > 0 {
			blocks = append(blocks, right)
			right = nil
		}
	}
	for _, l := range lines {
		var lf, rf []*frag
		crosses := false
		for _, f := range l.frags {
			switch {
			case f.x1 <= g0+0.5*cw:
				lf = append(lf, f)
			case f.x0 >= g1-0.5*cw:
				rf = append(rf, f)
			default:
				crosses = true
			}
		}
		if crosses {
			if len(left) > 0 || len(right) > 0 {
				flush()
			}
			full = append(full, l)
			continue
		}
		if len(full) > 0 {
			blocks = append(blocks, full)
			full = nil
		}
		if len(lf) > 0 {
			left = append(left, &line{frags: lf, y: l.y, size: l.size})
		}
		if len(rf) > 0 {
			right = append(right, &line{frags: rf, y: l.y, size: l.size})
		}
	}
	flush()
	return blocks
}

// columnGutter finds the widest strip that qualifies as a column gutter.
func columnGutter(lines []*line, cw float64) (g0, g1 float64, ok bool) {
	if len(lines) < 2*minColumnLines {
		return 0, 0, false
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		minX = fmin(minX, l.frags[0].x0)
		for _, f := range l.frags {
			maxX = fmax(maxX, f.x1)
		}
	}
	width := maxX - minX
	if width < 20*cw {
		return 0, 0, false
	}
	// Coverage of each character cell across the page by the lines' text,
	// where a line's text runs from fragment to fragment over word spaces.
	cells := int(width/cw) + 1
	cover := make([]int, cells)
	for _, l := range lines {
		start := l.frags[0].x0
		end := l.frags[0].x1
		mark := func(a, b float64) {
			i0 := max(0, int((a-minX)/cw))
			i1 := min(cells-1, int((b-minX)/cw))
			for i := i0; i <= i1; i++ {
				cover[i]++
			}
		}
		for _, f := range l.frags[1:] {
			if f.x0-end >= 2*cw {
				mark(start, end)
				start = f.x0
			}
			end = fmax(end, f.x1)
		}
		mark(start, end)
	}
	limit := int(maxGutterCrosses * float64(len(lines)))
	// Candidate strips: runs of cells covered by few lines, inside the
	// middle of the text width (a ragged margin is no gutter).
	best := 0
	for i := 0; i < cells; {
		if cover[i] > limit {
			i++
			continue
		}
		j := i
		for j < cells && cover[j] <= limit {
			j++
		}
		a, b := minX+float64(i)*cw, minX+float64(j)*cw
		mid := (a + b) / 2
		if float64(j-i) >= minGutter && mid > minX+0.2*width && mid < maxX-0.2*width && j-i > best {
			if runningText(lines, a, b) && !tableRows(lines, a, b, cw) {
				best, g0, g1, ok = j-i, a, b, true
			}
		}
		i = j
	}
	return g0, g1, ok
}

// tableRows reports whether the lines that have text on both sides of the
// strip a..b are mostly rows of a table: on at least one side they hold a
// cell gap of their own (a gap of minCellGap character widths), which a
// column of prose, set with word spaces, does not. A wide table grid has
// a clear strip between two of its columns, with several words on each
// side, but its rows must be read whole: a row's key and its value belong
// together.
func tableRows(lines []*line, a, b, cw float64) bool {
	mid := (a + b) / 2
	both, rows := 0, 0
	for _, l := range lines {
		var left, right bool
		cell := false
		var prev *frag
		for _, f := range l.frags {
			switch {
			case f.x1 <= mid:
				left = true
			case f.x0 >= mid:
				right = true
			}
			// A gap on one side of the strip, not the strip itself.
			if prev != nil && f.x0-prev.x1 >= minCellGap*cw && !(prev.x1 <= mid && f.x0 >= mid) {
				cell = true
			}
			prev = f
		}
		if left && right {
			both++
			if cell {
				rows++
			}
		}
	}
	return both >= minColumnLines && 2*rows >= both
}

// runningText reports whether both sides of the strip a..b carry enough
// lines of several words: columns of prose, not cells of a table.
func runningText(lines []*line, a, b float64) bool {
	var nl, nr, wl, wr int
	mid := (a + b) / 2
	for _, l := range lines {
		var cl, cr int
		for _, f := range l.frags {
			switch {
			case f.x1 <= mid:
				cl++
			case f.x0 >= mid:
				cr++
			}
		}
		if cl > 0 {
			nl++
			wl += cl
		}
		if cr > 0 {
			nr++
			wr += cr
		}
	}
	return nl >= minColumnLines && nr >= minColumnLines &&
		float64(wl)/float64(nl) >= minWordsPerLine && float64(wr)/float64(nr) >= minWordsPerLine
}
