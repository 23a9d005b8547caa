package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/font"
	"golang.org/x/text/encoding/charmap"
)

// The PDF writer lays the outline out on A4 pages in the standard fonts
// Helvetica and Helvetica-Bold (every PDF reader has them, so nothing is
// embedded) with WinAnsiEncoding: text is real text, wrapped by the fonts'
// metrics, so pdftotext and our pdftext read it back. Characters outside
// Windows-1252 are written as '?'.

const (
	pageW, pageH = 595.28, 841.89 // A4 in points
	margin       = 56.0
	bodySize     = 11.0
	leading      = 1.35 // line height as a multiple of the font size
	cellPad      = 4.0
)

type pdfFont struct {
	res  string // resource name
	name string // base font
}

var (
	regular = pdfFont{"F1", "Helvetica"}
	bold    = pdfFont{"F2", "Helvetica-Bold"}
)

// winAnsi encodes text for a standard font's WinAnsiEncoding.
func winAnsi(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r == '\t' {
			r = ' '
		}
		b, ok := charmap.Windows1252.EncodeRune(r)
		if !ok || b < 0x20 {
			b = '?'
		}
		out = append(out, b)
	}
	return out
}

// unencodable counts the outline's characters that WinAnsiEncoding has no
// code for, with up to eight distinct ones as examples.
func unencodable(s Spec) (n int, examples []rune) {
	seen := map[rune]bool{}
	count := func(t string) {
		for _, r := range t {
			if r == '\t' || r == '\n' || r == '\r' {
				continue
			}
			if b, ok := charmap.Windows1252.EncodeRune(r); ok && b >= 0x20 {
				continue
			}
			n++
			if !seen[r] && len(examples) < 8 {
				seen[r] = true
				examples = append(examples, r)
			}
		}
	}
	count(s.Title)
	for _, b := range s.Blocks {
		count(b.Text)
		for _, it := range b.Items {
			count(it)
		}
		for _, row := range b.Rows {
			for _, c := range row {
				count(c)
			}
		}
	}
	return n, examples
}

// widths are a standard font's WinAnsi character widths (1/1000 em),
// read once from pdfcpu's metrics.
type widths [256]int

func newWidths(f pdfFont) *widths {
	var w widths
	for c := range w {
		cw, err := font.CharWidth(f.name, rune(c))
		if err != nil {
			cw = 556
		}
		w[c] = cw
	}
	return &w
}

// metrics are built on first use, not when the plugin starts (describe
// needs none).
var metrics = sync.OnceValue(func() map[string]*widths {
	return map[string]*widths{regular.name: newWidths(regular), bold.name: newWidths(bold)}
})

// width is the width of encoded text in points.
func width(f pdfFont, enc []byte, size float64) float64 {
	m := metrics()[f.name]
	w := 0
	for _, c := range enc {
		w += m[c]
	}
	return float64(w) * size / 1000
}

// wrap breaks text into lines no wider than maxW; a word wider than a line
// is broken by characters. Line widths are kept as they grow.
func wrap(f pdfFont, text string, size, maxW float64) [][]byte {
	var lines [][]byte
	space := width(f, []byte{' '}, size)
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		var line []byte
		lineW := 0.0
		for _, word := range strings.Fields(para) {
			w := winAnsi(word)
			ww := width(f, w, size)
			if len(line) > 0 && lineW+space+ww <= maxW {
				line = append(append(line, ' '), w...)
				lineW += space + ww
				continue
			}
			if len(line) == 0 && ww <= maxW {
				line, lineW = w, ww
				continue
			}
			if len(line) > 0 {
				lines = append(lines, line)
				line, lineW = nil, 0
			}
			for ww > maxW && len(w) > 1 {
				n, nw := 0, 0.0
				for n < len(w) {
					cw := width(f, w[n:n+1], size)
					if nw+cw > maxW && n > 0 {
						break
					}
					nw += cw
					n++
				}
				lines = append(lines, w[:n])
				w = w[n:]
				ww = width(f, w, size)
			}
			line, lineW = w, ww
		}
		lines = append(lines, line)
	}
	return lines
}

// pdfString writes a literal string, escaping what must be.
func pdfString(b []byte) string {
	var s strings.Builder
	s.WriteByte('(')
	for _, c := range b {
		switch c {
		case '(', ')', '\\':
			s.WriteByte('\\')
			s.WriteByte(c)
		default:
			s.WriteByte(c)
		}
	}
	s.WriteByte(')')
	return s.String()
}

// layout is the page being filled.
type layout struct {
	pages []*bytes.Buffer
	cur   *bytes.Buffer
	y     float64
}

func (l *layout) newPage() {
	l.cur = &bytes.Buffer{}
	l.pages = append(l.pages, l.cur)
	l.y = pageH - margin
}

// need starts a new page unless h points fit above the bottom margin.
func (l *layout) need(h float64) {
	if l.cur == nil || l.y-h < margin {
		l.newPage()
	}
}

func (l *layout) text(f pdfFont, size, x float64, line []byte) {
	fmt.Fprintf(l.cur, "BT /%s %.1f Tf %.2f %.2f Td %s Tj ET\n", f.res, size, x, l.y-size, pdfString(line))
}

// lines writes wrapped lines at x, breaking pages between lines.
func (l *layout) lines(f pdfFont, size, x, maxW float64, text string) {
	for _, ln := range wrap(f, text, size, maxW) {
		l.need(size * leading)
		l.text(f, size, x, ln)
		l.y -= size * leading
	}
}

// table draws a grid: equal columns, wrapped cells, the header row bold
// and repeated after a page break.
func (l *layout) table(rows [][]string) {
	cols := len(rows[0])
	colW := (pageW - 2*margin) / float64(cols)
	size := bodySize - 1
	drawRow := func(row []string, f pdfFont) {
		cells := make([][][]byte, cols)
		h := 0.0
		for i, c := range row {
			cells[i] = wrap(f, c, size, colW-2*cellPad)
			h = max(h, float64(len(cells[i]))*size*leading+2*cellPad)
		}
		// A row taller than a page is cut by the page; rows are kept whole
		// otherwise.
		l.need(min(h, pageH-2*margin))
		top := l.y
		for i := range cols {
			x := margin + float64(i)*colW
			fmt.Fprintf(l.cur, "%.2f %.2f %.2f %.2f re S\n", x, top-h, colW, h)
			y := top - cellPad
			for _, ln := range cells[i] {
				fmt.Fprintf(l.cur, "BT /%s %.1f Tf %.2f %.2f Td %s Tj ET\n", f.res, size, x+cellPad, y-size, pdfString(ln))
				y -= size * leading
			}
		}
		l.y = top - h
	}
	for r, row := range rows {
		f := regular
		if r == 0 {
			f = bold
		}
		drawRow(row, f)
	}
	l.y -= bodySize * 0.8
}

// renderPDF writes the outline as a PDF 1.4 file.
func renderPDF(s Spec, now time.Time) ([]byte, error) {
	l := &layout{}
	l.newPage()
	textW := pageW - 2*margin
	if t := strings.TrimSpace(s.Title); t != "" {
		l.lines(bold, 20, margin, textW, oneLine(t))
		l.y -= 10
	}
	for _, bl := range s.Blocks {
		switch bl.Type {
		case "heading":
			size := []float64{16, 14, 12.5, 12, 11.5, 11}[bl.Level-1]
			l.y -= size * 0.5
			l.need(size*leading + bodySize*leading*2) // keep with the next lines
			l.lines(bold, size, margin, textW, oneLine(bl.Text))
			l.y -= 2
		case "paragraph":
			l.lines(regular, bodySize, margin, textW, strings.TrimSpace(bl.Text))
			l.y -= bodySize * 0.6
		case "list":
			for i, it := range bl.Items {
				marker := []byte{0x95} // bullet in WinAnsi
				if bl.Ordered {
					marker = []byte(fmt.Sprintf("%d.", i+1))
				}
				l.need(bodySize * leading)
				l.text(regular, bodySize, margin+6, marker)
				l.lines(regular, bodySize, margin+22, textW-22, oneLine(it))
			}
			l.y -= bodySize * 0.6
		case "table":
			l.table(bl.Rows)
		}
	}

	// Objects: 1 catalog, 2 pages, 3 F1, 4 F2, 5 info, then per page its
	// page object and content stream.
	var objs []string
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	add("<< /Type /Catalog /Pages 2 0 R >>")
	add("") // pages, filled below
	add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	add(fmt.Sprintf("<< /Title %s /Producer (agenthost docgen) /CreationDate (D:%s) >>",
		pdfString(winAnsi(s.Title)), now.UTC().Format("20060102150405Z")))
	var kids []string
	for _, pg := range l.pages {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		if _, err := zw.Write(pg.Bytes()); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		content := add(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String()))
		page := add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>",
			pageW, pageH, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))

	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes(), nil
}
