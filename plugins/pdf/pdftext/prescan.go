package pdftext

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pre-scan: one pass over every page that learns the document's shape
// without keeping its text, so that a caller can decide which pages and
// sections to extract. Per page it measures the text, counts images and
// guesses whether there is a table; over the document it finds the body
// font size, takes lines set clearly larger as headings, and cuts the
// document into sections along the outline, or along the headings when
// there is no outline.

// Prescan is the shape of a document.
type Prescan struct {
	Pages   []PageInfo
	Outline []OutlineItem
	// BodySize is the font size (points, rounded to a half) that most of
	// the document's characters are set in.
	BodySize float64
	Headings []Heading
	// Sections come from the outline (SectionsFrom "outline") or, without
	// one, from the headings ("headings"); none when neither exists.
	Sections     []Section
	SectionsFrom string
	// Sketched: the pages were sketched, not laid out (a document with an
	// outline, see Document.Prescan): no headings, no body size, no table
	// guesses.
	Sketched bool
}

// PageInfo is one page of the page map.
type PageInfo struct {
	Page int // 1-based
	// Width and Height are the page's size as displayed (crop box, rotation
	// applied), in points.
	Width, Height float64
	// TextLen counts the characters of text, white space excluded; 0 means
	// the page has no text layer (a scan, a picture).
	TextLen int
	// Images counts image XObjects and inline images painted on the page
	// (each time painted).
	Images int
	// Table is the table heuristic: several lines whose words stand in
	// aligned columns, or ruled boxes around aligned text.
	Table bool
	// Err is set when the page's content, or part of it, could not be
	// read (TextStatus then says which); the rest of the page map is still
	// valid.
	Err string `json:",omitempty"`
	// TextStatus is TextUnreadable or TextPartial when the page shows
	// glyphs whose text is unknown: Glyphs shown, Unmapped of them;
	// TextImageOnly when it shows (almost) no text but images.
	TextStatus       TextStatus `json:",omitempty"`
	Glyphs, Unmapped int
}

// Heading is a line set in a font clearly larger than the body text, or a
// little larger and bold.
type Heading struct {
	Page  int
	Title string
	// Level 1 is the largest heading size in the document, 2 the next…
	Level int
	Size  float64
	Bold  bool
	// Top is the heading's distance from the top of its page, as a
	// fraction of the page height.
	Top float64
}

// Section is a run of pages belonging to one outline item or heading.
// Sections nest: a level-2 section lies inside the level-1 one before it.
type Section struct {
	Title string
	Level int // 1 for top-level sections
	// StartPage and EndPage are inclusive. A section that ends where the
	// next one starts mid-page shares that page with it.
	StartPage, EndPage int
}

// headingRatio: a line is a heading when its font is this much larger than
// the body text (TeX's \Large over 12 pt is 1.2, Word's Heading 3 1.15);
// boldHeadingRatio when the whole line is bold (LaTeX's subsection over
// 11 pt body is 12 pt bold: 1.09).
const (
	headingRatio     = 1.15
	boldHeadingRatio = 1.05
)

// maxHeadingLines: a "heading" of more lines is a paragraph in a large font.
const maxHeadingLines = 3

// maxHeadingLevels bounds the distinct heading sizes kept as levels.
const maxHeadingLevels = 6

// Prescan reads the whole document once. With an outline, the outline gives
// the sections and each page is only sketched (sketch.go): its text counted
// through its fonts and its images, without laying it out, a fraction of
// what extraction costs; Headings and BodySize stay empty and Table false
// (Sketched says so). Without an outline it interprets every page's content
// to find the headings that cut the sections (about 1 ms per page of dense
// text natively). Errors on single pages are reported in their PageInfo
// and do not fail the pre-scan.
func (d *Document) Prescan() (ps Prescan, err error) {
	if len(d.Outline()) == 0 || len(d.outlineFlat) == 0 {
		return d.prescan(nil)
	}
	defer recoverTo(&err, "prescan")
	ps.Outline = d.Outline()
	ps.Sketched = true
	for n := 1; n <= len(d.pages); n++ {
		info := d.pageSize(n)
		d.sketchPage(n, &info)
		ps.Pages = append(ps.Pages, info)
	}
	ps.Sections = outlineSections(d.outlineFlat, len(d.pages))
	ps.SectionsFrom = "outline"
	return ps, nil
}

// pageSize is page n's entry in the page map with its size as displayed.
func (d *Document) pageSize(n int) PageInfo {
	p := &d.pages[n-1]
	info := PageInfo{Page: n, Width: p.crop.width(), Height: p.crop.height()}
	if p.rotate == 90 || p.rotate == 270 {
		info.Width, info.Height = info.Height, info.Width
	}
	return info
}

// ExtractAll is Prescan and the text of every page (texts[n-1] is page n's,
// as PageText gives it) in one pass: each page is interpreted once, where
// Prescan then PageText would interpret it twice. A page that fails has ""
// and its error in its PageInfo.
func (d *Document) ExtractAll() (ps Prescan, texts []string, err error) {
	texts = make([]string, len(d.pages))
	ps, err = d.prescan(func(n int, glyphs []glyph) { texts[n-1] = layoutText(glyphs, true) })
	return ps, texts, err
}

// prescan runs the pre-scan; each, when set, also gets every page's glyphs.
func (d *Document) prescan(each func(n int, glyphs []glyph)) (ps Prescan, err error) {
	defer recoverTo(&err, "prescan")
	ps.Outline = d.Outline()
	sizes := map[float64]int{}
	var cands []headingCand
	for n := 1; n <= len(d.pages); n++ {
		info, pc := d.scanPage(n, sizes, each)
		ps.Pages = append(ps.Pages, info)
		cands = append(cands, pc...)
	}
	ps.BodySize = bodySize(sizes)
	ps.Headings = headings(cands, ps.BodySize)
	switch {
	case len(d.outlineFlat) > 0:
		ps.Sections = outlineSections(d.outlineFlat, len(d.pages))
		ps.SectionsFrom = "outline"
	case len(ps.Headings) > 0:
		ps.Sections = headingSections(ps.Headings, len(d.pages))
		ps.SectionsFrom = "headings"
	}
	return ps, nil
}

type headingCand struct {
	page      int
	text      string
	size      float64
	bold      bool
	top       float64
	lineIndex int
	y         float64
}

// scanPage measures one page and returns its heading candidates (lines
// that could be headings once the body size is known).
func (d *Document) scanPage(n int, sizes map[float64]int, each func(n int, glyphs []glyph)) (info PageInfo, cands []headingCand) {
	info = d.pageSize(n)
	var st pageStats
	glyphs, err := d.pageGlyphsSafe(n, &st)
	if err != nil {
		st.lose(err)
	} else if each != nil {
		// Layout only reads the glyphs; the measuring below reads them too.
		each(n, glyphs)
	}
	info.Images = st.images
	info.Glyphs, info.Unmapped = st.shown, st.unmapped
	info.TextStatus = withImages(contentStatus(st.shown, st.unmapped, st.lost), st.shown, st.images, st.segments)
	if st.lost != nil {
		info.Err = st.lost.Error()
	}
	// A run of glyphs of one size adds to sizes once: a map with float
	// keys takes the runtime's slow generic path, which cost 2% of the
	// plugin's time under wazero when done per glyph. The sums and keys
	// are the same (a NaN size still gets an entry per glyph).
	runSize, runChars, inRun := 0.0, 0, false
	for i := range glyphs {
		g := &glyphs[i]
		if g.space {
			continue
		}
		k := 0
		for _, r := range g.text {
			if !unicode.IsSpace(r) {
				k++
			}
		}
		info.TextLen += k
		if s := math.Round(g.size*2) / 2; !inRun || s != runSize {
			if inRun {
				sizes[runSize] += runChars
			}
			runSize, runChars, inRun = s, 0, true
		}
		runChars += k
	}
	if inRun {
		sizes[runSize] += runChars
	}
	frags := buildFrags(glyphs, 0)
	if len(frags) == 0 {
		return info, nil
	}
	lines := groupLines(frags)
	cw := charWidth(glyphs, 0)
	info.Table = looksLikeTable(lines, cw, st.rects)
	minX := math.Inf(1)
	for _, l := range lines {
		minX = min(minX, l.frags[0].x0)
	}
	var buf []byte
	for i, l := range lines {
		buf = renderLine(buf[:0], l, minX, cw)
		text := strings.Join(strings.Fields(string(buf)), " ")
		if len(text) < 2 || len(text) > 200 || !strings.ContainsFunc(text, unicode.IsLetter) {
			continue
		}
		if isLeader(text) {
			continue // a table of contents line
		}
		cands = append(cands, headingCand{page: n, text: text, size: l.mainSize(), bold: l.bold(),
			top: l.y / max(info.Height, 1), lineIndex: i, y: l.y})
	}
	return info, cands
}

// pageGlyphsSafe is pageGlyphs with its own recover, so that one hostile
// page costs its entry in the page map, not the pre-scan.
func (d *Document) pageGlyphsSafe(n int, st *pageStats) (g []glyph, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pdftext: page %d: %w: panic: %v", n, ErrMalformed, r)
		}
	}()
	g, _, err = d.pageGlyphs(n, st)
	return g, err
}

// bodySize is the most used font size, by characters.
func bodySize(sizes map[float64]int) float64 {
	best, bestN := 0.0, 0
	for s, n := range sizes {
		if n > bestN || (n == bestN && s < best) {
			best, bestN = s, n
		}
	}
	return best
}

// headings keeps the candidates set clearly larger than the body, joins
// consecutive lines of one heading (same page and size, adjacent lines), and
// numbers the sizes into levels, largest first.
func headings(cands []headingCand, body float64) []Heading {
	if body <= 0 {
		return nil
	}
	var hs []Heading
	lines := []int{} // lines joined into each heading
	var last *headingCand
	for i := range cands {
		c := &cands[i]
		if c.size < body*headingRatio && !(c.bold && c.size >= body*boldHeadingRatio) {
			last = nil
			continue
		}
		if last != nil && last.page == c.page && last.size == c.size && last.bold == c.bold &&
			c.lineIndex == last.lineIndex+1 && c.y-last.y < 2*c.size && len(hs) > 0 {
			hs[len(hs)-1].Title += " " + c.text
			lines[len(lines)-1]++
			last = c
			continue
		}
		hs = append(hs, Heading{Page: c.page, Title: c.text, Size: c.size, Bold: c.bold, Top: c.top})
		lines = append(lines, 1)
		last = c
	}
	// A size used for hundreds of lines is not a heading size but a second
	// body font (a large-print appendix, a slide deck): drop it. Levels go
	// by size alone: a heading that names a command in a typewriter face is
	// not less of a heading for being half bold.
	perSize := map[float64]int{}
	for i, h := range hs {
		if lines[i] <= maxHeadingLines {
			perSize[h.Size]++
		}
	}
	var levels []float64
	for s, n := range perSize {
		if n <= 400 {
			levels = append(levels, s)
		}
	}
	slices.Sort(levels)
	slices.Reverse(levels)
	if len(levels) > maxHeadingLevels {
		levels = levels[:maxHeadingLevels]
	}
	out := hs[:0]
	for i, h := range hs {
		lv := slices.Index(levels, h.Size)
		if lv < 0 || lines[i] > maxHeadingLines || utf8.RuneCountInString(h.Title) > 200 {
			continue
		}
		h.Level = lv + 1
		out = append(out, h)
	}
	return out
}

// isLeader tells table-of-contents lines by their dot leaders.
func isLeader(s string) bool {
	return strings.Contains(s, ". . . .") || strings.Contains(s, "....") || strings.Contains(s, "…")
}

// topOfPage: a section whose start lies in the top part of its page leaves
// that page to itself, the section before it ends on the page before.
const topOfPage = 0.2

// outlineSections turns the outline, in document order, into sections; a
// section ends where the next item of the same or a higher level begins.
func outlineSections(items []flatItem, pages int) []Section {
	var out []Section
	for i, it := range items {
		if it.page < 1 {
			continue
		}
		s := Section{Title: it.title, Level: it.level + 1, StartPage: it.page, EndPage: pages}
		for _, next := range items[i+1:] {
			if next.page < 1 || next.level > it.level {
				continue
			}
			s.EndPage = sectionEnd(s.StartPage, next.page, next.top)
			break
		}
		out = append(out, s)
	}
	return out
}

func headingSections(hs []Heading, pages int) []Section {
	var out []Section
	for i, h := range hs {
		s := Section{Title: h.Title, Level: h.Level, StartPage: h.Page, EndPage: pages}
		for _, next := range hs[i+1:] {
			if next.Level > h.Level {
				continue
			}
			s.EndPage = sectionEnd(s.StartPage, next.Page, next.Top)
			break
		}
		out = append(out, s)
	}
	return out
}

func sectionEnd(start, nextPage int, nextTop float64) int {
	end := nextPage
	if nextTop >= 0 && nextTop < topOfPage {
		end = nextPage - 1
	}
	return max(end, start)
}

// looksLikeTable is the table heuristic: at least three lines that each
// have two or more wide gaps (column gutters), where most gutters line up
// with a gutter of another such line; or ruled boxes (many rectangles and
// strokes) around two such lines.
func looksLikeTable(lines []*line, cw float64, rules int) bool {
	type row struct{ starts []float64 }
	var rows []row
	for _, l := range lines {
		var starts []float64
		for k := 1; k < len(l.frags); k++ {
			if l.frags[k].x0-l.frags[k-1].x1 >= 2.5*cw {
				starts = append(starts, l.frags[k].x0)
			}
		}
		if len(starts) >= 1 {
			rows = append(rows, row{starts: append([]float64{l.frags[0].x0}, starts...)})
		}
	}
	aligned := 0
	for i, r := range rows {
		if len(r.starts) < 3 {
			continue
		}
		for j, o := range rows {
			if i == j {
				continue
			}
			match := 0
			for _, x := range r.starts {
				for _, y := range o.starts {
					if math.Abs(x-y) <= cw {
						match++
						break
					}
				}
			}
			if match >= 3 {
				aligned++
				break
			}
		}
	}
	return aligned >= 3 || (rules >= 12 && aligned >= 2)
}

// OutlineSections returns the sections the pre-scan would cut along the
// outline, without interpreting any page: the outline alone decides them.
// ok is false when the document has no outline, where the pre-scan cuts
// sections along headings instead (which takes every page).
func (d *Document) OutlineSections() (secs []Section, ok bool, err error) {
	defer recoverTo(&err, "outline sections")
	d.Outline()
	if len(d.outlineFlat) == 0 {
		return nil, false, nil
	}
	return outlineSections(d.outlineFlat, len(d.pages)), true, nil
}
