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
	var out strings.Builder
	for dir := range uint8(4) {
		frags := buildFrags(glyphs, dir)
		if len(frags) == 0 {
			continue
		}
		lines := groupLines(frags)
		if out.Len() > 0 {
			out.WriteString("\n\n")
		}
		renderLines(&out, lines, charWidth(glyphs, dir))
	}
	return out.String()
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
	var cur *line
	for _, f := range sorted {
		if cur != nil && f.y-cur.y <= 0.5*max(cur.size, f.size) {
			cur.frags = append(cur.frags, f)
			cur.size = max(cur.size, f.size)
			continue
		}
		cur = &line{frags: []*frag{f}, y: f.y, size: f.size}
		lines = append(lines, cur)
	}
	for _, l := range lines {
		sort.SliceStable(l.frags, func(i, j int) bool { return l.frags[i].x0 < l.frags[j].x0 })
	}
	return lines
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
			gap := f.x0 - prev.x1
			if gap <= wordGap*max(prev.size, f.size) && !prev.spaceAfter {
				buf = append(buf, f.text...)
				col += utf8.RuneCount(f.text)
				continue
			}
			target = max(target, col+1)
			if gap < 3*cw {
				target = col + 1 // an ordinary word space
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
