package pdftext

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Layout turns positioned glyphs into text. Three passes:
//
//  1. Fragments: glyphs that follow each other in the content stream on one
//     baseline, in one size, without a gap, form a fragment (a word or part
//     of one). A gap wider than wordGap of the font size, a white-space
//     glyph, a baseline or size change ends it. Glyphs drawn twice at the
//     same place (fake bold, shadows) are dropped.
//  2. Lines: fragments whose baselines lie within half a font size of each
//     other form a line, so that superscripts and subscripts stay in their
//     line, and lines are ordered top to bottom.
//  3. Text: within a line, fragments are ordered left to right and joined;
//     a gap becomes one space or, when it is wide, enough spaces to put the
//     fragment at its column on a grid of the page's typical character
//     width, which keeps tables readable, as pdftotext -layout does.
//
// Text in other directions (rotated pages, sideways labels) is laid out the
// same way in its own frame and comes after the upright text.

// wordGap is the gap, as a fraction of the font size, above which two
// glyphs belong to different words. Inter-word spaces are 0.2 em and more
// (TeX shrinks them to about 0.22), kerns and italic corrections stay
// below 0.1.
const wordGap = 0.12

type frag struct {
	x0, x1     float64
	y          float64
	size       float64
	text       []byte
	spaceAfter bool
	bold       bool    // every glyph is bold (fragments are words or less)
	lastX      float64 // origin of the last glyph, for the duplicate check
	lastText   string
}

type line struct {
	frags []*frag
	y     float64
	size  float64
}

func layoutText(glyphs []glyph) string {
	if len(glyphs) == 0 {
		return ""
	}
	lines := groupLines(buildFrags(glyphs, 0))
	// Text in the other directions (a sideways axis label, a rotated
	// table header) is laid out in its own frame, line by line, and each
	// line joins the upright ones as one row at the height of its middle,
	// where a reader's eye meets it and where pdftotext prints it.
	for dir := uint8(1); dir < 4; dir++ {
		frags := buildFrags(glyphs, dir)
		if len(frags) == 0 {
			continue
		}
		rot := groupLines(frags)
		cw := charWidth(glyphs, dir)
		for _, l := range rot {
			lines = append(lines, uprightLine(l, dir, cw))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].y < lines[j].y })
	var out strings.Builder
	renderLines(&out, lines, charWidth(glyphs, 0))
	return out.String()
}

// uprightLine turns a line laid out in a rotated frame into a one-fragment
// upright line covering the same place on the page.
func uprightLine(l *line, dir uint8, cw float64) *line {
	text := renderLine(nil, l, l.frags[0].x0, cw)
	u0, u1 := l.frags[0].x0, l.frags[0].x1
	for _, f := range l.frags {
		u0, u1 = min(u0, f.x0), max(u1, f.x1)
	}
	v0, v1 := l.y-l.size, l.y
	// Back from the frame to device space (see glyph): two corners.
	toDevice := func(u, v float64) (float64, float64) {
		switch dir {
		case 1:
			return -v, u
		case 2:
			return -u, -v
		default:
			return v, -u
		}
	}
	ax, ay := toDevice(u0, v0)
	bx, by := toDevice(u1, v1)
	x0, y0, x1, y1 := min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)
	f := &frag{x0: x0, x1: max(x1, x0+float64(len(text))*cw), y: (y0 + y1) / 2, size: l.size, text: text}
	return &line{frags: []*frag{f}, y: f.y, size: l.size}
}

func buildFrags(glyphs []glyph, dir uint8) []*frag {
	var frags []*frag
	var cur *frag
	for i := range glyphs {
		g := &glyphs[i]
		if g.dir != dir {
			continue
		}
		if g.space {
			if cur != nil {
				cur.spaceAfter = true
				cur = nil
			}
			continue
		}
		if cur != nil {
			dy := math.Abs(g.y - cur.y)
			// Fake bold: the same glyph again, a hair to the side.
			if g.text == cur.lastText && math.Abs(g.x-cur.lastX) < 0.1*g.size && dy < 0.2*g.size {
				continue
			}
			gap := g.x - cur.x1
			sameLine := dy <= 0.1*min(g.size, cur.size)
			sameSize := math.Abs(g.size-cur.size) <= 0.1*cur.size
			if !sameLine || !sameSize || gap > wordGap*cur.size || gap < -0.5*cur.size {
				cur = nil
			}
		}
		if cur == nil {
			cur = &frag{x0: g.x, x1: g.x, y: g.y, size: g.size, bold: true}
			frags = append(frags, cur)
		}
		cur.text = append(cur.text, g.text...)
		cur.bold = cur.bold && g.bold
		cur.x1 = max(cur.x1, g.x+g.w)
		cur.x0 = min(cur.x0, g.x)
		cur.lastX, cur.lastText = g.x, g.text
	}
	return frags
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
			if f.y-l.y > 0.5*max(l.size, f.size) {
				break
			}
			if !l.overlaps(f) {
				into = l
				break
			}
		}
		if into == nil {
			lines = append(lines, &line{frags: []*frag{f}, y: f.y, size: f.size})
			continue
		}
		into.frags = append(into.frags, f)
		into.size = max(into.size, f.size)
	}
	for _, l := range lines {
		sort.SliceStable(l.frags, func(i, j int) bool { return l.frags[i].x0 < l.frags[j].x0 })
	}
	return lines
}

// overlaps reports whether f covers more than half of the width of a
// fragment already in the line, or the other way round.
func (l *line) overlaps(f *frag) bool {
	for _, g := range l.frags {
		o := min(f.x1, g.x1) - max(f.x0, g.x0)
		if o > 0 && o > 0.5*min(f.x1-f.x0, g.x1-g.x0) {
			return true
		}
	}
	return false
}

// charWidth is the page's typical advance per character: the grid on which
// wide gaps become runs of spaces.
func charWidth(glyphs []glyph, dir uint8) float64 {
	var ws []float64
	for i := range glyphs {
		g := &glyphs[i]
		if g.dir != dir || g.space || g.w <= 0 {
			continue
		}
		n := utf8.RuneCountInString(g.text)
		if n == 0 {
			continue
		}
		ws = append(ws, g.w/float64(n))
	}
	if len(ws) == 0 {
		return 5
	}
	slices.Sort(ws)
	w := ws[len(ws)/2]
	if w < 1 {
		w = 1
	}
	return w
}

func renderLines(out *strings.Builder, lines []*line, cw float64) {
	minX := math.Inf(1)
	for _, l := range lines {
		minX = min(minX, l.frags[0].x0)
	}
	var buf []byte
	for i, l := range lines {
		if i > 0 {
			out.WriteByte('\n')
			// A wide vertical gap (a new paragraph or section) shows as a
			// blank line.
			if gap := l.y - lines[i-1].y; gap > 2*max(l.size, lines[i-1].size) {
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
func renderLine(buf []byte, l *line, minX, cw float64) []byte {
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
	small := min(f.size, prev.size)
	if math.Abs(f.y-prev.y) > 0.1*small {
		return gap <= 0.01*small
	}
	return gap <= wordGap*max(prev.size, f.size)
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
