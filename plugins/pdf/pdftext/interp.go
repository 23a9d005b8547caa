package pdftext

import (
	"fmt"
	"math"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The content-stream interpreter: it follows the graphics state (q/Q, cm),
// the text state (Tf, Tc, Tw, Tz, TL, Ts, Tr) and the text and line matrices
// (BT, Td, TD, Tm, T*), and for every shown glyph (Tj, TJ, ', ") records its
// text, origin, advance and size in device space. Form XObjects (Do) run
// with their own matrix and resources. Everything that paints (paths,
// colours, images, shadings) is skipped, except that the pre-scan counts
// images and rectangles.

// matrix is a PDF transformation matrix [a b c d e f]; points are row
// vectors, so p' = p × M, and m.mul(n) applies m first, then n.
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m matrix) apply(x, y float64) (float64, float64) {
	return x*m[0] + y*m[2] + m[4], x*m[1] + y*m[3] + m[5]
}

// glyph is one shown character code with its text, in a frame rotated so
// that its baseline runs along +x: x, y are the origin (y grows downwards,
// towards the next line), w the advance, size the font size, all in device
// units (points). dir says which way the baseline runs on the page:
// 0 left to right, 1 top to bottom, 2 right to left (upside down), 3 bottom
// to top.
type glyph struct {
	text  string
	x, y  float64
	w     float64
	size  float64
	dir   uint8
	space bool // white space: a word break, not output
	bold  bool
	// font tells the page's typefaces apart (1, 2, … in the order they
	// are first used; 0 past the last number): the fonts of one BaseFont,
	// subsets a writer split a typeface into (LibreOffice puts its spaces
	// in one and the letters in others), have one number. Whether a
	// typeface draws the spaces between its words is known per number.
	font uint16
}

type gstate struct {
	ctm       matrix
	font      *font
	fontSize  float64
	charSpace float64
	wordSpace float64
	hScale    float64
	leading   float64
	rise      float64
}

// pageStats is what the pre-scan learns from interpreting a page besides
// its glyphs.
type pageStats struct {
	images int // image XObjects and inline images painted
	rects  int // rectangles (re) and stroked line segments: ruling of tables
	// segments counts the path segments (l, c, v, y) the page draws:
	// text converted to outlines is thousands of curves.
	segments int
	// shown counts the glyphs shown that are not white space, unmapped
	// those of them whose text is unknown (a font without a Unicode
	// mapping for them and no ActualText around them).
	shown, unmapped int
	// lost is the first content (a content stream, a form) that could not
	// be read: the page's text is then incomplete.
	lost error
}

// lose records content that could not be read; st may be nil.
func (st *pageStats) lose(err error) {
	if st != nil && st.lost == nil {
		st.lost = err
	}
}

type interp struct {
	d      *Document
	st     *pageStats
	gs     gstate
	stack  []gstate
	tm     matrix
	tlm    matrix
	glyphs []glyph
	// pageW, pageH bound the device space; glyphs outside are dropped, as
	// poppler does (text parked off the page is not meant to be read).
	pageW, pageH float64
	// forms holds the form XObjects being run, to refuse cycles.
	forms map[int]bool
	// placed, when set, collects the image XObjects painted (PageImages).
	placed *[]placedImage
	ops    int
	// marked holds the open marked-content sequences (BMC/BDC … EMC); one
	// with /ActualText replaces the glyphs shown inside it by that text.
	marked []markedContent
	// fontIDs numbers the typefaces used on the page (see glyph.font);
	// the last font asked for is remembered, glyphs come in runs of one.
	fontIDs    map[fontKey]uint16
	lastFont   *font
	lastFontID uint16
}

type markedContent struct {
	actual    string
	hasActual bool
	start     int // index of the first glyph shown inside
}

// maxOps bounds the operators interpreted per page (including forms run
// repeatedly): a hostile page cannot spin forever.
const maxOps = 20_000_000

// maxGlyphs bounds the glyphs kept per page (a dense page has 10,000): a
// hostile page cannot fill memory with them.
const maxGlyphs = 1 << 19

// maxStack bounds q nesting and operand stacks.
const maxStack = 1 << 12

func newInterp(d *Document, p *page, st *pageStats) *interp {
	in := &interp{d: d, st: st, forms: map[int]bool{}}
	var base matrix
	base, in.pageW, in.pageH = p.deviceMatrix()
	in.gs = gstate{ctm: base, hScale: 1}
	return in
}

// deviceMatrix takes the page's default user space to device space: the
// crop box's corner at the origin, rotation applied, y growing downwards;
// w and h are the page's displayed size.
func (p *page) deviceMatrix() (m matrix, w, h float64) {
	c := p.crop
	switch p.rotate {
	case 90:
		return matrix{0, 1, 1, 0, -c[1], -c[0]}, c.height(), c.width()
	case 180:
		return matrix{-1, 0, 0, 1, c[2], -c[1]}, c.width(), c.height()
	case 270:
		return matrix{0, -1, -1, 0, c[3], c[2]}, c.height(), c.width()
	}
	return matrix{1, 0, 0, -1, -c[0], c[3]}, c.width(), c.height()
}

type operand struct {
	kind tokKind
	num  float64
	b    []byte
	arr  []operand
}

// run interprets one content stream with the given resources.
func (in *interp) run(data []byte, res types.Dict, depth int) {
	l := &lexer{data: data}
	var ops []operand
	var arena []operand
	var marks []int
	for in.ops < maxOps {
		t := l.next()
		switch t.kind {
		case tokEOF:
			return
		case tokKeyword:
		case tokArrayOpen, tokDictOpen:
			if len(marks) < maxStack {
				marks = append(marks, len(ops))
			}
			continue
		case tokArrayClose, tokDictClose:
			if len(marks) == 0 {
				continue
			}
			m := marks[len(marks)-1]
			marks = marks[:len(marks)-1]
			if m > len(ops) {
				m = len(ops)
			}
			start := len(arena)
			arena = append(arena, ops[m:]...)
			kind := tokArrayOpen
			if t.kind == tokDictClose {
				kind = tokDictOpen
			}
			ops = append(ops[:m], operand{kind: kind, arr: arena[start:]})
			continue
		default:
			if len(ops) < maxStack {
				ops = append(ops, operand{kind: t.kind, num: t.num, b: t.b})
			}
			continue
		}
		in.ops++
		op := t.b
		if len(marks) > 0 {
			// An operator inside an array: malformed; drop the open marks.
			marks = marks[:0]
		}
		switch string(op) {
		case "BI":
			in.inlineImage(l)
		default:
			in.operator(string(op), ops, res, depth)
		}
		ops = ops[:0]
		arena = arena[:0]
		l.scratch = l.scratch[:0]
	}
}

func nums(ops []operand, n int) ([]float64, bool) {
	if len(ops) < n {
		return nil, false
	}
	var buf [6]float64
	v := buf[:n]
	for i, o := range ops[len(ops)-n:] {
		if o.kind != tokNumber {
			return nil, false
		}
		v[i] = o.num
	}
	return v, true
}

func (in *interp) operator(op string, ops []operand, res types.Dict, depth int) {
	gs := &in.gs
	switch op {
	case "q":
		if len(in.stack) < maxStack {
			in.stack = append(in.stack, in.gs)
		}
	case "Q":
		if n := len(in.stack); n > 0 {
			in.gs = in.stack[n-1]
			in.stack = in.stack[:n-1]
		}
	case "cm":
		if v, ok := nums(ops, 6); ok {
			gs.ctm = matrix{v[0], v[1], v[2], v[3], v[4], v[5]}.mul(gs.ctm)
		}
	case "BT":
		in.tm, in.tlm = identity, identity
	case "Tf":
		if len(ops) >= 2 && ops[len(ops)-2].kind == tokName && ops[len(ops)-1].kind == tokNumber {
			gs.font = in.fontResource(res, string(ops[len(ops)-2].b))
			gs.fontSize = ops[len(ops)-1].num
		}
	case "Tc":
		if v, ok := nums(ops, 1); ok {
			gs.charSpace = v[0]
		}
	case "Tw":
		if v, ok := nums(ops, 1); ok {
			gs.wordSpace = v[0]
		}
	case "Tz":
		if v, ok := nums(ops, 1); ok {
			gs.hScale = v[0] / 100
		}
	case "TL":
		if v, ok := nums(ops, 1); ok {
			gs.leading = v[0]
		}
	case "Ts":
		if v, ok := nums(ops, 1); ok {
			gs.rise = v[0]
		}
	case "Td":
		if v, ok := nums(ops, 2); ok {
			in.moveLine(v[0], v[1])
		}
	case "TD":
		if v, ok := nums(ops, 2); ok {
			gs.leading = -v[1]
			in.moveLine(v[0], v[1])
		}
	case "Tm":
		if v, ok := nums(ops, 6); ok {
			in.tm = matrix{v[0], v[1], v[2], v[3], v[4], v[5]}
			in.tlm = in.tm
		}
	case "T*":
		in.moveLine(0, -gs.leading)
	case "Tj":
		if len(ops) >= 1 && ops[len(ops)-1].kind == tokString {
			in.show(ops[len(ops)-1].b)
		}
	case "'":
		in.moveLine(0, -gs.leading)
		if len(ops) >= 1 && ops[len(ops)-1].kind == tokString {
			in.show(ops[len(ops)-1].b)
		}
	case "\"":
		if len(ops) >= 3 && ops[len(ops)-3].kind == tokNumber && ops[len(ops)-2].kind == tokNumber {
			gs.wordSpace = ops[len(ops)-3].num
			gs.charSpace = ops[len(ops)-2].num
		}
		in.moveLine(0, -gs.leading)
		if len(ops) >= 1 && ops[len(ops)-1].kind == tokString {
			in.show(ops[len(ops)-1].b)
		}
	case "TJ":
		if len(ops) >= 1 && ops[len(ops)-1].kind == tokArrayOpen {
			for _, e := range ops[len(ops)-1].arr {
				switch e.kind {
				case tokString:
					in.show(e.b)
				case tokNumber:
					in.adjust(e.num)
				}
			}
		}
	case "Do":
		if len(ops) >= 1 && ops[len(ops)-1].kind == tokName {
			in.xobject(res, string(ops[len(ops)-1].b), depth)
		}
	case "BMC", "BDC":
		mc := markedContent{start: len(in.glyphs)}
		if op == "BDC" && len(ops) >= 1 && ops[len(ops)-1].kind == tokDictOpen {
			mc.actual, mc.hasActual = actualText(ops[len(ops)-1].arr)
		}
		if len(in.marked) < maxStack {
			in.marked = append(in.marked, mc)
		}
	case "EMC":
		if n := len(in.marked); n > 0 {
			mc := in.marked[n-1]
			in.marked = in.marked[:n-1]
			if mc.hasActual {
				in.replaceActual(mc)
			}
		}
	case "re":
		if in.st != nil {
			in.st.rects++
		}
	case "S", "s":
		// Stroked paths draw table rules as often as rectangles do.
		if in.st != nil {
			in.st.rects++
		}
	case "l", "c", "v", "y":
		if in.st != nil {
			in.st.segments++
		}
	}
}

// actualText finds /ActualText in a property list given as the operands
// between << and >>, and decodes it (a text string: UTF-16BE with a byte
// order mark, else PDFDocEncoding, which agrees with Latin-1 on text).
func actualText(kv []operand) (string, bool) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i].kind != tokName || string(kv[i].b) != "ActualText" || kv[i+1].kind != tokString {
			continue
		}
		b := kv[i+1].b
		if len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF {
			return utf16Text(b[2:]), true
		}
		rs := make([]rune, len(b))
		for k, c := range b {
			rs[k] = rune(c)
		}
		return string(rs), true
	}
	return "", false
}

// replaceActual puts the actual text in place of the glyphs shown inside a
// marked-content sequence: one glyph where the first was, as wide as all.
func (in *interp) replaceActual(mc markedContent) {
	if mc.start >= len(in.glyphs) {
		return // nothing was shown: nowhere to put the text
	}
	first := in.glyphs[mc.start]
	last := in.glyphs[len(in.glyphs)-1]
	g := first
	g.text = visualText(mc.actual)
	g.space = isBlank(mc.actual)
	if last.dir == first.dir {
		g.w = max(first.w, last.x+last.w-first.x)
	}
	in.glyphs = append(in.glyphs[:mc.start], g)
	if mc.actual == "" {
		in.glyphs = in.glyphs[:mc.start]
	}
}

func (in *interp) moveLine(tx, ty float64) {
	in.tlm = matrix{1, 0, 0, 1, tx, ty}.mul(in.tlm)
	in.tm = in.tlm
}

// adjust applies a TJ number: thousandths of an em, moving left when
// positive (horizontal writing) or down (vertical).
func (in *interp) adjust(n float64) {
	gs := &in.gs
	if gs.font != nil && gs.font.vertical {
		ty := -n / 1000 * gs.fontSize
		in.tm[4] += ty * in.tm[2]
		in.tm[5] += ty * in.tm[3]
		return
	}
	tx := -n / 1000 * gs.fontSize * gs.hScale
	in.tm[4] += tx * in.tm[0]
	in.tm[5] += tx * in.tm[1]
}

func (in *interp) fontResource(res types.Dict, name string) *font {
	ref, ok := in.d.dict(res["Font"])[name]
	if !ok {
		return in.d.fallbackFont()
	}
	return in.d.font(ref)
}

// show places the glyphs of one string and advances the text matrix.
func (in *interp) show(s []byte) {
	gs := &in.gs
	f := gs.font
	if f == nil {
		f = in.d.fallbackFont()
		gs.font = f
	}
	fs := gs.fontSize
	for len(s) > 0 {
		code, n := f.nextCode(s)
		if n <= 0 {
			n = 1
		}
		s = s[n:]
		text, w0 := f.glyph(code)
		// Tw widens the single-byte code 32, whatever glyph it shows.
		wordSpace := n == 1 && code == 32 && f.oneByteSpace
		if f.vertical {
			in.emit(text, f, 0, isBlank(text))
			// Vertical fonts advance by DW2's default, one em downwards.
			ty := -fs + gs.charSpace
			if wordSpace {
				ty += gs.wordSpace
			}
			in.tm[4] += ty * in.tm[2]
			in.tm[5] += ty * in.tm[3]
			continue
		}
		tx := w0*fs + gs.charSpace
		if wordSpace {
			tx += gs.wordSpace
		}
		tx *= gs.hScale
		// The glyph's box is its own advance: spacing added after it is a
		// gap (poppler subtracts Tc and Tw likewise), and a space whose
		// spacing takes its width back is no word break.
		box := w0 * fs * gs.hScale
		blank := isBlank(text)
		if blank && tx < 0.1*fs*gs.hScale {
			in.tm[4] += tx * in.tm[0]
			in.tm[5] += tx * in.tm[1]
			continue
		}
		if blank || tx < box {
			box = tx
		}
		in.emit(text, f, box, blank)
		in.tm[4] += tx * in.tm[0]
		in.tm[5] += tx * in.tm[1]
	}
}

// emit records one glyph whose box is tx wide in text space (its advance
// without the spacing after it).
func (in *interp) emit(text string, f *font, tx float64, space bool) {
	if in.st != nil && !space {
		in.st.shown++
		if text == "" && !in.inActualText() {
			in.st.unmapped++
		}
	}
	// A glyph without text of its own is kept inside an ActualText
	// sequence: it places the text that replaces it (a letter that a
	// subset font's ToUnicode leaves out, given by its Span).
	if (text == "" && !space && !in.inActualText()) || len(in.glyphs) >= maxGlyphs {
		return
	}
	gs := &in.gs
	m := in.tm.mul(gs.ctm)
	x, y := m.apply(0, gs.rise)
	// The baseline direction and the glyph's up direction in device space.
	bx, by := m[0], m[1]
	ux, uy := m[2], m[3]
	scaleX := math.Hypot(bx, by)
	size := gs.fontSize * math.Hypot(ux, uy) * f.sizeScale
	if size <= 0 || math.IsNaN(size) || math.IsInf(size, 0) {
		return
	}
	if x < -1 || y < -1 || x > in.pageW+1 || y > in.pageH+1 {
		return
	}
	w := tx * scaleX
	g := glyph{text: text, w: w, size: size, space: space, bold: f.bold, font: in.fontID(f)}
	switch {
	case math.Abs(bx) >= math.Abs(by) && bx >= 0:
		g.dir, g.x, g.y = 0, x, y
	case math.Abs(bx) >= math.Abs(by) && bx*uy-by*ux > 0:
		// Mirrored, not turned round (device space flips y, so an
		// upright glyph's matrix has a negative determinant): XeTeX's
		// reversed E. The glyph reads on its line, its ink left of its
		// origin.
		g.dir, g.x, g.y = 0, x-w, y
	case math.Abs(bx) >= math.Abs(by):
		g.dir, g.x, g.y = 2, -x, -y
	case by > 0:
		g.dir, g.x, g.y = 1, y, -x
	default:
		g.dir, g.x, g.y = 3, -y, x
	}
	if f.vertical {
		// Vertical writing runs top to bottom in columns read right to left.
		g.dir, g.x, g.y, g.w = 1, y, -x, gs.fontSize*math.Hypot(ux, uy)
	}
	g.text = visualText(expandLigature(text))
	in.glyphs = append(in.glyphs, g)
}

// fontKey is a typeface: its BaseFont name, or the font itself when it
// has none.
type fontKey struct {
	name string
	f    *font
}

// fontID is the number of f's typeface on the page (see glyph.font).
func (in *interp) fontID(f *font) uint16 {
	if f == in.lastFont {
		return in.lastFontID
	}
	in.lastFont = f
	in.lastFontID = in.lookupFontID(f)
	return in.lastFontID
}

func (in *interp) lookupFontID(f *font) uint16 {
	k := fontKey{name: f.name}
	if f.name == "" {
		k.f = f
	}
	id, ok := in.fontIDs[k]
	if !ok {
		if in.fontIDs == nil {
			in.fontIDs = map[fontKey]uint16{}
		}
		if n := len(in.fontIDs); n < math.MaxUint16 {
			id = uint16(n + 1)
			in.fontIDs[k] = id
		}
	}
	return id
}

// shown is the page's glyphs once its content has run: glyphs kept for an
// ActualText whose sequence never ended (see emit) have no text and go.
func (in *interp) shown() []glyph {
	out := in.glyphs[:0]
	for _, g := range in.glyphs {
		if g.text != "" || g.space {
			out = append(out, g)
		}
	}
	return out
}

// inActualText reports whether a marked-content sequence with /ActualText
// is open: its glyphs' own text does not matter.
func (in *interp) inActualText() bool {
	for _, m := range in.marked {
		if m.hasActual {
			return true
		}
	}
	return false
}

// isBlank reports whether a glyph's text is only white space (and not
// empty: an unmapped glyph is no word break).
func isBlank(s string) bool {
	if s == " " {
		return true
	}
	return s != "" && strings.TrimSpace(s) == ""
}

// expandLigature writes the Latin ligatures (U+FB00..FB06) as their letters,
// which is what readers search for and what pdftotext prints.
func expandLigature(s string) string {
	switch s {
	case "\uFB00":
		return "ff"
	case "\uFB01":
		return "fi"
	case "\uFB02":
		return "fl"
	case "\uFB03":
		return "ffi"
	case "\uFB04":
		return "ffl"
	case "\uFB05", "\uFB06":
		return "st"
	}
	return s
}

// xobject runs a form XObject, or counts an image one.
func (in *interp) xobject(res types.Dict, name string, depth int) {
	x := in.d.xobject(res, name)
	if x.image && in.st != nil {
		in.st.images++
	}
	if x.image && in.placed != nil && len(*in.placed) < maxPageImages {
		*in.placed = append(*in.placed, placedImage{sd: x.sd, ctm: in.gs.ctm})
	}
	if !x.form || depth >= maxTreeDepth || in.forms[x.objNr] {
		return // an image, not a form, too deep, or a form that draws itself
	}
	if x.objNr >= 0 {
		in.forms[x.objNr] = true
		defer delete(in.forms, x.objNr)
	}
	data, formRes, err := in.d.formContent(x.sd, res)
	if err != nil {
		in.st.lose(fmt.Errorf("form %s cannot be read: %w", name, err))
		return
	}
	sd := x.sd
	saved := in.gs
	savedStack := len(in.stack)
	savedTm, savedTlm := in.tm, in.tlm
	if v := in.d.array(sd.Dict["Matrix"]); len(v) == 6 {
		var m matrix
		for i := range 6 {
			m[i], _ = in.d.number(v[i])
		}
		in.gs.ctm = m.mul(in.gs.ctm)
	}
	in.run(data, formRes, depth+1)
	in.gs = saved
	in.stack = in.stack[:min(savedStack, len(in.stack))]
	in.tm, in.tlm = savedTm, savedTlm
}

// inlineImage skips BI <dict> ID <data> EI, counting the image.
func (in *interp) inlineImage(l *lexer) {
	if l.skipInlineImageDict() && in.st != nil {
		in.st.images++
	}
}
