package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
)

// The PDF writer lays the outline out on A4 pages in DejaVu Sans (and its
// bold), falling back per character to Droid Sans Fallback for Chinese,
// Japanese and Korean (fonts.go). The fonts are embedded as Type0 fonts
// (CIDFontType2, Identity-H, CIDToGIDMap Identity) subset to the glyphs
// the document uses, with a /W widths array and a /ToUnicode CMap: text is
// real text in every script the fonts cover, wrapped by the glyphs' real
// widths, and pdftotext and our pdftext read it back. A character no font
// has is written as '?' and the result's note names it.
//
// Every document uses the embedded fonts, Latin-1 text too, rather than
// the standard Helvetica in WinAnsiEncoding it was written in before: a
// one-page Latin document grows by its fonts' subsets (a page of German,
// bold and regular, is 19 KB), which is small beside one code path, one
// look for a document mixing scripts, and a PDF that renders the same in
// every viewer (the standard fonts are substituted by whatever the viewer
// has, and PDF/A asks for every font embedded).

const (
	pageW, pageH = 595.28, 841.89 // A4 in points
	margin       = 56.0
	bodySize     = 11.0
	leading      = 1.35 // line height as a multiple of the font size
	cellPad      = 4.0
)

// unencodable counts the outline's characters that no embedded font has a
// glyph for, with up to eight distinct ones as examples.
func unencodable(fs *fontSet, s Spec) (n int, examples []rune) {
	seen := map[rune]bool{}
	count := func(t string) {
		for _, r := range t {
			if r == '\t' || r < 0x20 || r == 0x7F || ignorable(r) || unicode.IsSpace(r) || fs.covered(r) {
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

// width is the width of glyphs in points.
func width(gs []glyph, size float64) float64 {
	w := 0
	for _, g := range gs {
		w += int(g.w)
	}
	return float64(w) * size / 1000
}

// cjk characters are written without spaces between words: a line may
// break before or after any of them.
func cjk(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFFEF
}

// Japanese and Chinese line breaking keeps closing punctuation and small
// kana with the character before, opening punctuation with the one after.
const (
	noBreakBefore = "、。，．・：；？！ー」』）】〕〉》〗〙〛ゝゞぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ）］｝，．：；！？%)]},.:;!?"
	noBreakAfter  = "「『（【〔〈《〖〘〚（［｛([{"
)

// token is a piece of a line that is not broken, rs[start:end] of its
// paragraph: a word, or one CJK character; space, when not -1, is the
// position of the space before it.
type token struct {
	start, end, space int
}

// tokens splits a paragraph at spaces and at the break opportunities
// around CJK characters.
func tokens(rs []rune) []token {
	var out []token
	space := -1
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			space = i
			i++
			continue
		}
		start := i
		for i++; i < len(rs) && !unicode.IsSpace(rs[i]); i++ {
			a, b := rs[i-1], rs[i]
			if (cjk(a) || cjk(b)) && !strings.ContainsRune(noBreakBefore, b) && !strings.ContainsRune(noBreakAfter, a) {
				out = append(out, token{start, i, space})
				start, space = i, -1
			}
		}
		out = append(out, token{start, i, space})
		space = -1
	}
	return out
}

// textLine is a wrapped line, its glyphs in visual order; rtl says it is
// of a right-to-left paragraph (and aligned right).
type textLine struct {
	gs  []glyph
	rtl bool
}

// wrap breaks text into lines no wider than maxW; a word wider than a line
// is broken by characters. Line widths are kept as they grow.
func wrap(fs *fontSet, st style, text string, size, maxW float64) []textLine {
	var lines []textLine
	space, _ := fs.lookup(st, ' ')
	spaceW := width([]glyph{space}, size)
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		rs := []rune(para)
		lv, base := levels(rs)
		flush := func(line []glyph) {
			lines = append(lines, textLine{visual(line), base == 1})
		}
		var line []glyph
		lineW := 0.0
		for _, tk := range tokens(rs) {
			w := fs.shapeRunes(st, rs[tk.start:tk.end], lv[tk.start:tk.end])
			if len(w) == 0 {
				continue
			}
			ww := width(w, size)
			sep, sepW := space, spaceW
			if tk.space < 0 {
				sepW = 0
			} else {
				sep.level = lv[tk.space]
			}
			if len(line) > 0 && lineW+sepW+ww <= maxW {
				if tk.space >= 0 {
					line = append(line, sep)
				}
				line = append(line, w...)
				lineW += sepW + ww
				continue
			}
			if len(line) == 0 && ww <= maxW {
				line, lineW = w, ww
				continue
			}
			if len(line) > 0 {
				flush(line)
				line, lineW = nil, 0
			}
			for ww > maxW && len(w) > 1 {
				n, nw := 0, 0.0
				for n < len(w) {
					cw := width(w[n:n+1], size)
					if nw+cw > maxW && n > 0 {
						break
					}
					nw += cw
					n++
				}
				flush(w[:n])
				w = w[n:]
				ww = width(w, size)
			}
			line, lineW = w, ww
		}
		flush(line)
	}
	return lines
}

// textString writes a text string (the document information's title) as
// UTF-16BE with its byte-order mark, which holds every script.
func textString(s string) string {
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

// layout is the page being filled.
type layout struct {
	fs    *fontSet
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

// show writes a line of glyphs with its baseline at (x, y): one text
// object, the font switched where the glyphs' font changes; each glyph is
// its two-byte glyph id (Identity-H).
func (l *layout) show(size, x, y float64, line []glyph) {
	if len(line) == 0 {
		return
	}
	l.fs.use(line)
	fmt.Fprintf(l.cur, "BT %.2f %.2f Td", x, y)
	font := -1
	const hex = "0123456789ABCDEF"
	for i, g := range line {
		if int(g.font) != font {
			if i > 0 {
				l.cur.WriteString("> Tj")
			}
			font = int(g.font)
			fmt.Fprintf(l.cur, " /%s %.1f Tf <", l.fs.fonts[font].res, size)
		}
		l.cur.Write([]byte{hex[g.gid>>12], hex[g.gid>>8&15], hex[g.gid>>4&15], hex[g.gid&15]})
	}
	l.cur.WriteString("> Tj ET\n")
}

func (l *layout) text(size, x float64, line []glyph) { l.show(size, x, l.y-size, line) }

// lineX is where a line of a box at x, maxW wide, starts: at x, or for a
// right-to-left line so that it ends at the box's right edge.
func lineX(ln textLine, size, x, maxW float64) float64 {
	if ln.rtl {
		return x + maxW - width(ln.gs, size)
	}
	return x
}

// lines writes wrapped lines at x, breaking pages between lines.
func (l *layout) lines(st style, size, x, maxW float64, text string) {
	for _, ln := range wrap(l.fs, st, text, size, maxW) {
		l.need(size * leading)
		l.text(size, lineX(ln, size, x, maxW), ln.gs)
		l.y -= size * leading
	}
}

// table draws a grid: equal columns, wrapped cells, the header row bold
// and repeated after a page break.
func (l *layout) table(rows [][]string) {
	cols := len(rows[0])
	colW := (pageW - 2*margin) / float64(cols)
	size := bodySize - 1
	drawRow := func(row []string, st style) {
		cells := make([][]textLine, cols)
		h := 0.0
		for i, c := range row {
			cells[i] = wrap(l.fs, st, c, size, colW-2*cellPad)
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
				l.show(size, lineX(ln, size, x+cellPad, colW-2*cellPad), y-size, ln.gs)
				y -= size * leading
			}
		}
		l.y = top - h
	}
	for r, row := range rows {
		st := regularStyle
		if r == 0 {
			st = boldStyle
		}
		drawRow(row, st)
	}
	l.y -= bodySize * 0.8
}

// missingGlyphs are the outline's characters no embedded font has: how
// many, and up to eight distinct ones.
type missingGlyphs struct {
	n        int
	examples []rune
}

// renderPDF writes the outline as a PDF 1.4 file.
func renderPDF(s Spec, now time.Time) ([]byte, missingGlyphs, error) {
	fs, err := newFontSet()
	if err != nil {
		return nil, missingGlyphs{}, err
	}
	var miss missingGlyphs
	miss.n, miss.examples = unencodable(fs, s)
	l := &layout{fs: fs}
	l.newPage()
	textW := pageW - 2*margin
	if t := strings.TrimSpace(s.Title); t != "" {
		l.lines(boldStyle, 20, margin, textW, oneLine(t))
		l.y -= 10
	}
	for _, bl := range s.Blocks {
		switch bl.Type {
		case "heading":
			size := []float64{16, 14, 12.5, 12, 11.5, 11}[bl.Level-1]
			l.y -= size * 0.5
			l.need(size*leading + bodySize*leading*2) // keep with the next lines
			l.lines(boldStyle, size, margin, textW, oneLine(bl.Text))
			l.y -= 2
		case "paragraph":
			l.lines(regularStyle, bodySize, margin, textW, strings.TrimSpace(bl.Text))
			l.y -= bodySize * 0.6
		case "list":
			for i, it := range bl.Items {
				marker := "•"
				if bl.Ordered {
					marker = fmt.Sprintf("%d.", i+1)
				}
				l.need(bodySize * leading)
				l.text(bodySize, margin+6, fs.shape(regularStyle, marker))
				l.lines(regularStyle, bodySize, margin+22, textW-22, oneLine(it))
			}
			l.y -= bodySize * 0.6
		case "table":
			l.table(bl.Rows)
		}
	}

	// Objects: 1 catalog, 2 pages, 3 info, then the fonts in use (four
	// objects and the font file each), then per page its page object and
	// content stream.
	var objs []string
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	add("<< /Type /Catalog /Pages 2 0 R >>")
	add("") // pages, filled below
	add(fmt.Sprintf("<< /Title %s /Producer (agenthost docgen) /CreationDate (D:%s) >>",
		textString(s.Title), now.UTC().Format("20060102150405Z00'00'")))
	var zd deflater
	var fontRes []string
	for _, f := range fs.fonts {
		if len(f.used) == 0 {
			continue
		}
		obj, err := f.objects(&zd, add)
		if err != nil {
			return nil, missingGlyphs{}, err
		}
		fontRes = append(fontRes, fmt.Sprintf("/%s %d 0 R", f.res, obj))
	}
	var kids []string
	for _, pg := range l.pages {
		z, err := zd.deflate(pg.Bytes())
		if err != nil {
			return nil, missingGlyphs{}, err
		}
		content := add(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(z), z))
		page := add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /Font << %s >> >> /Contents %d 0 R >>",
			pageW, pageH, strings.Join(fontRes, " "), content))
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
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R /Info 3 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes(), miss, nil
}

// deflater compresses the PDF's streams with one zlib writer, reset for
// each (a new writer allocates about a megabyte, once per page before), at
// zlib's default level (the best level made a PDF under 1% smaller, in
// markedly more time).
type deflater struct{ zw *zlib.Writer }

func (d *deflater) deflate(b []byte) ([]byte, error) {
	var z bytes.Buffer
	if d.zw == nil {
		d.zw = zlib.NewWriter(&z)
	} else {
		d.zw.Reset(&z)
	}
	zw := d.zw
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("compressing a stream: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing a stream: %w", err)
	}
	return z.Bytes(), nil
}

// objects adds the font's PDF objects (the Type0 font, its CIDFontType2
// descendant, the descriptor, the subset font file and the ToUnicode CMap)
// and returns the Type0 font's object number.
func (f *embFont) objects(zd *deflater, add func(string) int) (int, error) {
	used := map[uint16]bool{}
	for g := range f.used {
		used[g] = true
	}
	ttf, err := subsetTTF(f.tables, used)
	if err != nil {
		return 0, fmt.Errorf("subsetting %s: %w", f.name, err)
	}
	z, err := zd.deflate(ttf)
	if err != nil {
		return 0, err
	}
	name := subsetTag(f.used) + "+" + f.name
	file := add(fmt.Sprintf("<< /Length %d /Length1 %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(z), len(ttf), z))

	head, hhea := f.tables["head"], f.tables["hhea"]
	scale := func(b []byte, at int) int {
		return int(float64(int16(uint16(b[at])<<8|uint16(b[at+1]))) * 1000 / f.unitsPerEm)
	}
	ascent, descent := scale(hhea, 4), scale(hhea, 6)
	capHeight := ascent
	if os2 := f.tables["OS/2"]; len(os2) >= 90 && uint16(os2[0])<<8|uint16(os2[1]) >= 2 {
		capHeight = scale(os2, 88)
	}
	desc := add(fmt.Sprintf("<< /Type /FontDescriptor /FontName /%s /Flags 32 /FontBBox [%d %d %d %d] /ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %d 0 R >>",
		name, scale(head, 36), scale(head, 38), scale(head, 40), scale(head, 42), ascent, descent, capHeight, file))

	gids := sortedGIDs(f.used)
	var w strings.Builder
	for i := 0; i < len(gids); {
		j := i
		fmt.Fprintf(&w, " %d [", gids[i])
		for j < len(gids) && gids[j]-gids[i] == uint16(j-i) {
			fmt.Fprintf(&w, " %d", f.advance(gids[j]))
			j++
		}
		w.WriteString(" ]")
		i = j
	}
	cid := add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW 1000 /W [%s ] /CIDToGIDMap /Identity >>",
		name, desc, w.String()))

	cmap, err := zd.deflate(toUnicode(gids, f.used))
	if err != nil {
		return 0, err
	}
	tu := add(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(cmap), cmap))
	return add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>",
		name, cid, tu)), nil
}

// toUnicode is the CMap that maps each glyph id back to its text, so that
// text is copied and extracted as written.
func toUnicode(gids []uint16, used map[uint16][]rune) []byte {
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	for i := 0; i < len(gids); i += 100 {
		chunk := gids[i:min(i+100, len(gids))]
		fmt.Fprintf(&b, "%d beginbfchar\n", len(chunk))
		for _, g := range chunk {
			fmt.Fprintf(&b, "<%04X> <", g)
			for _, u := range utf16.Encode(used[g]) {
				fmt.Fprintf(&b, "%04X", u)
			}
			b.WriteString(">\n")
		}
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.Bytes()
}
