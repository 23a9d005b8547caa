package pdftext

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Fonts turn the bytes of a shown string into character codes, each code
// into text and an advance width. Simple fonts (Type1, TrueType, Type3) have
// one-byte codes and get 256-entry tables built once at load, so showing a
// glyph is two array lookups. Type0 fonts have multi-byte codes through an
// encoding CMap, widths per CID from /W, and text from ToUnicode.

type fontKind uint8

const (
	simpleFont fontKind = iota
	type0Font
)

type font struct {
	kind fontKind
	name string // BaseFont without a subset prefix
	// Simple fonts.
	text  [256]string
	width [256]float64 // advance in text space units per unit font size
	// Type0 fonts.
	enc       *cmap
	toUnicode *cmap
	ucs2      bool // the encoding's codes are UCS-2 themselves (Uni*-UCS2-* CMaps)
	cidWidths map[uint32]float64
	cidRanges []cidWidthRange
	dw        float64
	vertical  bool
	// sizeScale relates the font size to the glyphs' real height: 1 except
	// for Type3 fonts, whose FontMatrix may scale glyph space differently.
	sizeScale float64
	// oneByteSpace: Tw applies to code 32 only when it is a one-byte code.
	oneByteSpace bool
	// bold: the font is a bold face, which the pre-scan's heading
	// heuristic weighs.
	bold bool
}

// isBold tells a bold face by its descriptor (FontWeight 600 and more, or
// the ForceBold flag) or, as most files only say it there, by its name.
func (d *Document) isBold(name string, desc types.Dict) bool {
	if w, ok := d.number(desc["FontWeight"]); ok && w >= 600 {
		return true
	}
	if v, ok := d.number(desc["Flags"]); ok && int(v)&(1<<18) != 0 {
		return true
	}
	n := strings.ToLower(name)
	for _, k := range []string{"bold", "black", "heavy", "semibold", "demi", "cmbx", "cmb10", "-bd", ",bd"} {
		if strings.Contains(n, k) {
			return true
		}
	}
	return false
}

type cidWidthRange struct {
	lo, hi uint32
	w      float64
}

// nextCode splits the next code off s.
func (f *font) nextCode(s []byte) (code uint32, n int) {
	if f.kind == simpleFont {
		return uint32(s[0]), 1
	}
	return f.enc.nextCode(s)
}

// glyph returns the text and horizontal advance (text space units per unit
// font size) of a code.
func (f *font) glyph(code uint32) (string, float64) {
	if f.kind == simpleFont {
		return f.text[code&0xFF], f.width[code&0xFF]
	}
	text, ok := "", false
	if f.toUnicode != nil {
		text, ok = f.toUnicode.lookup(code)
	}
	if !ok && f.ucs2 && code >= 32 && (code < 0xD800 || code > 0xDFFF) {
		text = string(rune(code))
	}
	cid := f.enc.cid(code)
	w, ok := f.cidWidths[cid]
	if !ok {
		w = f.dw
		rs := f.cidRanges
		if i := sort.Search(len(rs), func(i int) bool { return rs[i].lo > cid }) - 1; i >= 0 && cid <= rs[i].hi {
			w = rs[i].w
		}
	}
	return text, w
}

// font returns the parsed font for a font resource, from the cache when the
// dictionary is an indirect object (it nearly always is).
func (d *Document) font(ref types.Object) *font {
	objNr := -1
	if ir, ok := ref.(types.IndirectRef); ok {
		objNr = ir.ObjectNumber.Value()
		if f, ok := d.fonts[objNr]; ok {
			return f
		}
	}
	fd := d.dict(ref)
	var f *font
	if fd != nil {
		if d.name(fd["Subtype"]) == "Type0" {
			f = d.loadType0(fd)
		} else {
			f = d.loadSimple(fd)
		}
	}
	if f == nil {
		f = d.fallbackFont()
	}
	if objNr >= 0 {
		d.fonts[objNr] = f
	}
	return f
}

func (d *Document) fallbackFont() *font {
	if d.fallback == nil {
		d.fallback = defaultFont()
	}
	return d.fallback
}

// defaultFont stands in for a missing or broken font resource: Helvetica
// with StandardEncoding, so text still comes out with plausible spacing.
func defaultFont() *font {
	f := &font{kind: simpleFont, name: "Helvetica", sizeScale: 1, oneByteSpace: true}
	metrics, _ := stdMetrics("Helvetica")
	idx := latinIndex()
	for c := range 256 {
		f.text[c] = glyphText(standardEncoding[c])
		f.width[c] = metrics.width(standardEncoding[c], idx)
	}
	return f
}

func stripSubset(name string) string {
	if len(name) > 7 && name[6] == '+' {
		return name[7:]
	}
	return name
}

func (d *Document) loadSimple(fd types.Dict) *font {
	f := &font{kind: simpleFont, sizeScale: 1, oneByteSpace: true}
	f.name = stripSubset(d.name(fd["BaseFont"]))
	subtype := d.name(fd["Subtype"])
	desc := d.dict(fd["FontDescriptor"])
	flags := 0
	if v, ok := d.number(desc["Flags"]); ok {
		flags = int(v)
	}
	symbolic := flags&4 != 0 && flags&32 == 0
	f.bold = d.isBold(f.name, desc)

	metrics, _ := stdMetrics(f.name)
	symbolFont := metrics.symbol // Symbol has its own encoding and metrics

	// The base encoding: named in the font, else the font program's own.
	var names [256]string
	baseKnown := false
	encObj := d.deref(fd["Encoding"])
	setBase := func(n string) bool {
		switch n {
		case "WinAnsiEncoding":
			names = winAnsiEncoding
		case "MacRomanEncoding":
			names = macRomanEncoding
		case "StandardEncoding", "MacExpertEncoding":
			names = standardEncoding
		default:
			return false
		}
		return true
	}
	switch e := encObj.(type) {
	case types.Name:
		baseKnown = setBase(string(e))
	case types.Dict:
		baseKnown = setBase(d.name(e["BaseEncoding"]))
	}
	if !baseKnown {
		switch {
		case symbolFont:
			for _, g := range symbolGlyphs {
				names[g.code] = g.name
			}
		case d.builtinEncoding(desc, &names):
		case subtype == "TrueType" && symbolic:
			// Symbolic TrueType fonts address glyphs through the font's own
			// cmap; without ToUnicode the codes are the best guess left.
		case subtype == "Type3":
		default:
			names = standardEncoding
		}
	}
	if e, ok := encObj.(types.Dict); ok {
		code := -1
		for _, o := range d.array(e["Differences"]) {
			switch v := d.deref(o).(type) {
			case types.Integer:
				code = int(v)
			case types.Float:
				code = int(v)
			case types.Name:
				if code >= 0 && code < 256 {
					names[code] = string(v)
				}
				code++
			}
		}
	}

	var toU *cmap
	if tu := d.deref(fd["ToUnicode"]); tu != nil {
		toU = d.toUnicode(tu)
	}
	// A font whose names only number its glyphs (a TeX bitmap font) is
	// read through its TeX encoding; Zapf Dingbats' a1..a191 are real
	// names.
	numbered := numberedNames(&names) && !strings.Contains(strings.ToLower(f.name), "dingbat")
	var texEnc texEncoding
	if numbered {
		texEnc = d.texEncodingOf(fd, &names)
	}
	for c := range 256 {
		if toU != nil {
			if t, ok := toU.lookup(uint32(c)); ok {
				f.text[c] = t
				continue
			}
		}
		if n := names[c]; n != "" {
			if numbered {
				if k, ok := numberedGlyph(n); ok {
					f.text[c] = texText(texEnc, k)
					continue
				}
			}
			if t := glyphText(n); t != "" {
				f.text[c] = t
				continue
			}
			if r, ok := numericGlyphCode(n); ok {
				f.text[c] = string(r)
				continue
			}
			if n == ".notdef" {
				continue
			}
		}
		// No name, or one we cannot read: printable ASCII codes most
		// likely mean themselves (what poppler does for such fonts).
		if names[c] == "" && c >= 33 && c < 127 {
			f.text[c] = string(rune(c))
		}
	}
	if names[32] == "" && f.text[32] == "" {
		f.text[32] = " "
	}
	if toU == nil {
		tis620Fill(&f.text)
	}

	// Widths: the font's /Widths, else the standard font metrics.
	scale := 0.001
	if subtype == "Type3" {
		scale, f.sizeScale = d.type3Scale(fd)
	}
	missing, _ := d.number(desc["MissingWidth"])
	widths := d.array(fd["Widths"])
	if widths != nil {
		first, _ := d.number(fd["FirstChar"])
		for c := range 256 {
			f.width[c] = missing * scale
		}
		for i, o := range widths {
			c := int(first) + i
			if c < 0 || c > 255 {
				continue
			}
			if w, ok := d.number(o); ok {
				f.width[c] = w * scale
			}
		}
		return f
	}
	if symbolFont {
		for _, g := range symbolGlyphs {
			f.width[g.code] = float64(g.width) / 1000
		}
		return f
	}
	// A font without widths that is not a standard one gets Helvetica's:
	// a guess, but spacing stays plausible.
	idx := latinIndex()
	for c := range 256 {
		f.width[c] = metrics.width(names[c], idx)
	}
	return f
}

// type3Scale reads a Type 3 font's FontMatrix: scale takes glyph space to
// text space horizontally (widths are in glyph space), sizeScale relates
// the font size to the size of the glyphs. Glyph space is the font's own:
// 1000 units to the em with a FontMatrix of 0.001 (the usual), or a
// bitmap's pixels with a matrix of 1/resolution, and then the font size
// need not be the size of the text (pdfTeX sets PK fonts at 3 times it).
// The glyphs' widths tell the em best (text glyphs average half an em);
// for fonts of a few glyphs the FontBBox does (an em high).
func (d *Document) type3Scale(fd types.Dict) (scale, sizeScale float64) {
	scale, sizeScale = 0.001, 1
	m := d.array(fd["FontMatrix"])
	if len(m) != 6 {
		return scale, sizeScale
	}
	a, _ := d.number(m[0])
	dd, _ := d.number(m[3])
	if a != 0 {
		scale = a
	}
	if dd == 0 {
		return scale, sizeScale
	}
	var ws []float64
	for _, o := range d.array(fd["Widths"]) {
		if w, ok := d.number(o); ok && w > 0 {
			ws = append(ws, w*abs(scale))
		}
	}
	if len(ws) >= 8 {
		slices.Sort(ws)
		if em := ws[len(ws)/2] / 0.5; em > 0.7 && em < 1.4 {
			return scale, 1
		} else if em > 0 {
			return scale, em
		}
	}
	if bb, ok := d.boxOf(fd["FontBBox"]); ok && bb.height() > 0 {
		h := bb.height() * abs(dd)
		if h >= 0.5 && h <= 2 {
			return scale, 1
		}
		return scale, h
	}
	return scale, abs(dd) * 1000
}

// texEncodingOf guesses the TeX encoding of a font whose names number its
// glyphs: the codes that have a glyph are those with a glyph procedure
// (Type 3) or a width.
func (d *Document) texEncodingOf(fd types.Dict, names *[256]string) texEncoding {
	var used [256]bool
	var width [256]float64
	procs := d.dict(fd["CharProcs"])
	first, _ := d.number(fd["FirstChar"])
	for i, o := range d.array(fd["Widths"]) {
		if c := int(first) + i; c >= 0 && c < 256 {
			width[c], _ = d.number(o)
		}
	}
	for c, n := range names {
		if procs != nil {
			_, used[c] = procs[n]
		} else {
			used[c] = width[c] > 0
		}
	}
	return texEncodingOf(&used, &width)
}

func (d *Document) toUnicode(o types.Object) *cmap {
	switch v := o.(type) {
	case types.Name:
		if strings.HasPrefix(string(v), "Identity") {
			c := identityCMap(false)
			c.uniRanges = []uniRange{{lo: 0, hi: 0xFFFF, dst: []uint16{0}}}
			return c
		}
	case types.StreamDict:
		data, err := d.streamData(v)
		if err == nil {
			return parseCMap(data)
		}
	}
	return nil
}

func (d *Document) loadType0(fd types.Dict) *font {
	f := &font{kind: type0Font, sizeScale: 1, dw: 1}
	f.name = stripSubset(d.name(fd["BaseFont"]))
	switch e := d.deref(fd["Encoding"]).(type) {
	case types.Name:
		n := string(e)
		f.enc = identityCMap(strings.HasSuffix(n, "-V"))
		// Unicode-keyed predefined CMaps: the code is the text.
		f.ucs2 = strings.Contains(n, "UCS2") || strings.Contains(n, "UTF16")
	case types.StreamDict:
		if data, err := d.streamData(e); err == nil {
			f.enc = parseCMap(data)
			if u := d.name(e.Dict["UseCMap"]); strings.HasPrefix(u, "Identity") {
				f.enc.identity = true
			}
		}
	}
	if f.enc == nil {
		f.enc = identityCMap(false)
	}
	f.vertical = f.enc.vertical
	// One-byte codespaces (rare in Type0) let Tw apply to code 32.
	f.oneByteSpace = len(f.enc.spaces) > 0 && f.enc.spaces[0].n == 1
	if tu := d.deref(fd["ToUnicode"]); tu != nil {
		f.toUnicode = d.toUnicode(tu)
	}
	desc := d.array(fd["DescendantFonts"])
	var cid types.Dict
	if len(desc) > 0 {
		cid = d.dict(desc[0])
	}
	f.bold = d.isBold(f.name, d.dict(cid["FontDescriptor"]))
	if v, ok := d.number(cid["DW"]); ok {
		f.dw = v / 1000
	}
	f.cidWidths = map[uint32]float64{}
	w := d.array(cid["W"])
	for i := 0; i < len(w); {
		c1, ok := d.number(w[i])
		if !ok || i+1 >= len(w) {
			break
		}
		if arr := d.array(w[i+1]); arr != nil {
			for k, o := range arr {
				if v, ok := d.number(o); ok {
					f.cidWidths[uint32(c1)+uint32(k)] = v / 1000
				}
			}
			i += 2
			continue
		}
		if i+2 >= len(w) {
			break
		}
		c2, ok1 := d.number(w[i+1])
		v, ok2 := d.number(w[i+2])
		if ok1 && ok2 && c2 >= c1 {
			f.cidRanges = append(f.cidRanges, cidWidthRange{lo: uint32(c1), hi: uint32(c2), w: v / 1000})
		}
		i += 3
	}
	sort.Slice(f.cidRanges, func(i, j int) bool { return f.cidRanges[i].lo < f.cidRanges[j].lo })
	return f
}

// stdFont is the metrics of a standard font: a width table indexed like
// latinGlyphs, or one width for all glyphs (Courier), or Symbol's own set.
type stdFont struct {
	widths *[315]uint16
	fixed  float64
	symbol bool
}

// stdMetrics finds the metrics of a standard font, or of a common font
// metric-compatible with one (Arial is Helvetica's, Times New Roman is
// Times's, Courier New is Courier's).
func stdMetrics(name string) (stdFont, bool) {
	n := strings.ToLower(strings.NewReplacer(" ", "", ",", "-").Replace(name))
	bold := strings.Contains(n, "bold")
	italic := strings.Contains(n, "italic") || strings.Contains(n, "oblique")
	switch {
	case strings.HasPrefix(n, "courier"):
		return stdFont{fixed: 0.6}, true
	case strings.HasPrefix(n, "symbol"):
		return stdFont{symbol: true}, true
	case strings.HasPrefix(n, "helvetica"), strings.HasPrefix(n, "arial"):
		if bold {
			return stdFont{widths: &widthsHelveticaBold}, true
		}
		return stdFont{widths: &widthsHelvetica}, true
	case strings.HasPrefix(n, "times"):
		switch {
		case bold && italic:
			return stdFont{widths: &widthsTimesBoldItalic}, true
		case bold:
			return stdFont{widths: &widthsTimesBold}, true
		case italic:
			return stdFont{widths: &widthsTimesItalic}, true
		}
		return stdFont{widths: &widthsTimesRoman}, true
	}
	return stdFont{widths: &widthsHelvetica}, false
}

// width of the glyph with the given name, in text space units per unit
// font size; unknown glyphs get half an em.
func (s stdFont) width(name string, idx map[string]int) float64 {
	if s.fixed > 0 {
		return s.fixed
	}
	if i, ok := idx[name]; ok && s.widths != nil {
		return float64(s.widths[i]) / 1000
	}
	return 0.5
}

// latinIndex maps the standard Latin glyph names to their metric index.
// Built per font load (315 entries, microseconds) rather than kept as a
// mutable global.
func latinIndex() map[string]int {
	m := make(map[string]int, len(latinGlyphs))
	for i, n := range latinGlyphs {
		m[n] = i
	}
	return m
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// tisMin is how many Thai glyphs a font must have at their TIS-620 codes
// (and none elsewhere) to be read as TIS-620 (see tis620Fill).
const tisMin = 16

// tis620Fill reads a simple font without ToUnicode as TIS-620 (the Thai
// standard 620-2533, which puts the Thai block at 0xA1..0xFB: code c is
// U+0E00+c-0xA0, with 0xDB..0xDE unassigned) when its glyphs that read as
// Thai all sit at their TIS-620 codes: its codes of that range whose
// names say nothing then mean their TIS-620 letters. Thai TeX fonts are
// laid out so, and some misspell a letter's name (Norasi's
// ThaiCharacterPhoPla at PO PLA's code).
func tis620Fill(text *[256]string) {
	agree := 0
	for c := 0xA1; c <= 0xFB; c++ {
		r, n := utf8.DecodeRuneInString(text[c])
		if n == 0 || n != len(text[c]) || r < 0x0E00 || r > 0x0E7F {
			continue
		}
		if r != rune(0x0E00+c-0xA0) {
			return
		}
		agree++
	}
	if agree < tisMin {
		return
	}
	for c := 0xA1; c <= 0xFB; c++ {
		if text[c] == "" && (c < 0xDB || c > 0xDE) {
			text[c] = string(rune(0x0E00 + c - 0xA0))
		}
	}
}
