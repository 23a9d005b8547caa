package pdftext

import (
	"cmp"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The sketch: the pre-scan of a document whose outline gives its sections.
// Such a document needs no headings, so its pages need not be laid out:
// the sketch reads each page's content streams once for what the page map
// says (how much text, how many images) without placing a glyph. Text is
// counted through the fonts, as extraction would read it, so a page
// without a text layer still shows 0; tables are not looked for.

// sketch counts what one page paints.
type sketch struct {
	d     *Document
	forms map[int]bool
	ops   int
	text  int // characters shown, white space excluded
	// glyphs counts the glyphs shown that are not white space, unmapped
	// those without known text (see pageStats).
	glyphs, unmapped int
	images           int
	segments         int      // path segments drawn (see pageStats)
	strings          [][]byte // the string operands since the last operator
	lost             error    // the first content that could not be read (see pageStats)
}

// maxSketchBuf bounds the content buffer the sketch keeps between pages.
const maxSketchBuf = 4 << 20

// sketchPage fills info's text length and image count from page n's
// content, forms included.
func (d *Document) sketchPage(n int, info *PageInfo) {
	p := &d.pages[n-1]
	if d.sketchBuf == nil {
		d.sketchBuf = make([]byte, 0, 64<<10)
	}
	content, lost, err := d.pageContent(p, d.sketchBuf)
	if cap(content) > cap(d.sketchBuf) && cap(content) <= maxSketchBuf {
		d.sketchBuf = content[:0]
	}
	if err != nil {
		info.Err = err.Error()
		info.TextStatus = TextUnreadable
		return
	}
	s := &sketch{d: d, forms: map[int]bool{}, lost: lost}
	s.run(content, p.resources, 0)
	s.annotations(p)
	info.TextLen, info.Images = s.text, s.images
	info.Glyphs, info.Unmapped = s.glyphs, s.unmapped
	info.TextStatus = withImages(contentStatus(s.glyphs, s.unmapped, s.lost), s.glyphs, s.images, s.segments)
	if s.lost != nil {
		info.Err = s.lost.Error()
	}
}

func (s *sketch) run(data []byte, res types.Dict, depth int) {
	l := &lexer{data: data, noNumbers: true}
	var font counter
	var name []byte               // the last name operand
	fonts := map[string]counter{} // by resource name: pages switch fonts often
	for s.ops < maxOps {
		// The common tokens inline, without the lexer's call: white space,
		// numbers and brackets carry nothing the sketch counts, and most
		// keywords are operators it skips.
		i := l.pos
		for i < len(data) && isSpace(data[i]) {
			i++
		}
		var t token
		switch {
		case i >= len(data):
			return
		case isRegular(data[i]):
			c := data[i]
			start := i
			for i < len(data) && isRegular(data[i]) {
				i++
			}
			l.pos = i
			if c == '.' || c == '-' || c == '+' || (c >= '0' && c <= '9') {
				continue // a number (the lexer's noNumbers)
			}
			t = token{kind: tokKeyword, b: data[start:i]}
		case data[i] == '[' || data[i] == ']' || data[i] == '{' || data[i] == '}':
			l.pos = i + 1
			continue
		default:
			l.pos = i
			t = l.next()
		}
		switch t.kind {
		case tokEOF:
			return
		case tokString:
			if len(s.strings) < maxStack {
				s.strings = append(s.strings, t.b)
			}
			continue
		case tokName:
			name = t.b
			continue
		case tokKeyword:
		default:
			continue
		}
		s.ops++
		switch string(t.b) {
		case "Tf":
			c, ok := fonts[string(name)]
			if !ok {
				c = s.fontResource(res, name)
				fonts[string(name)] = c
			}
			font = c
		case "Tj", "TJ", "'", "\"":
			for _, str := range s.strings {
				s.text += font.visible(s.d, str)
				g, u := font.unread(str)
				s.glyphs, s.unmapped = s.glyphs+g, s.unmapped+u
			}
		case "Do":
			s.xobject(res, name, depth)
		case "BI":
			if l.skipInlineImageDict() {
				s.images++
			}
		case "l", "c", "v", "y":
			s.segments++
		}
		s.strings, name = s.strings[:0], nil
		l.scratch = l.scratch[:0]
	}
}

// counter counts the characters a font shows without loading the font
// where its dictionary tells enough: a simple font in a standard encoding
// shows a character a byte, code 32 its space; an Identity-encoded
// composite font's codes are two bytes each. Other fonts are loaded and
// read as the interpreter reads them.
type counter struct {
	font    *font // nil: counted by kind
	twoByte bool
	// simple holds, for a loaded simple font, each code's characters
	// that are not white space; unmapped its codes without text.
	simple   *[256]uint8
	unmapped *[256]bool
}

// unread counts the glyphs of a shown string that are not white space, and
// those of them whose text is unknown (fonts counted by kind have none).
// Unlike the interpreter it does not see ActualText, which may give text
// to glyphs counted unmapped here.
func (c counter) unread(s []byte) (glyphs, unmapped int) {
	switch {
	case c.simple != nil:
		for _, b := range s {
			if c.unmapped[b] {
				glyphs++
				unmapped++
			} else if c.simple[b] > 0 {
				glyphs++
			}
		}
		return glyphs, unmapped
	case c.font != nil:
		for len(s) > 0 {
			code, k := c.font.nextCode(s)
			if k <= 0 {
				k = 1
			}
			s = s[k:]
			text, _ := c.font.glyph(code)
			switch {
			case text == "":
				glyphs++
				unmapped++
			case !isBlank(text):
				glyphs++
			}
		}
		return glyphs, unmapped
	}
	// Counted by kind: a glyph a character, all of them known.
	return c.visible(nil, s), 0
}

func (c counter) visible(d *Document, s []byte) int {
	switch {
	case c.simple != nil:
		n := 0
		for _, b := range s {
			n += int(c.simple[b])
		}
		return n
	case c.font != nil:
		return visibleChars(c.font, s)
	case c.twoByte:
		return len(s) / 2
	}
	n := 0
	for _, b := range s {
		if b != ' ' {
			n++
		}
	}
	return n
}

// visibleChars counts the characters of a shown string that are not white
// space, decoded as the interpreter decodes them.
func visibleChars(f *font, s []byte) int {
	n := 0
	for len(s) > 0 {
		code, k := f.nextCode(s)
		if k <= 0 {
			k = 1
		}
		s = s[k:]
		text, _ := f.glyph(code)
		for len(text) > 0 {
			r, size := utf8.DecodeRuneInString(text)
			text = text[size:]
			if !unicode.IsSpace(r) {
				n++
			}
		}
	}
	return n
}

func (s *sketch) fontResource(res types.Dict, name []byte) counter {
	ref, ok := s.d.dict(res["Font"])[string(name)]
	ir, indirect := ref.(types.IndirectRef)
	if c, ok := s.d.counters[int(ir.ObjectNumber)]; indirect && ok {
		// Pages share their fonts: a font's table is worth making once.
		return c
	}
	c := s.counter(ref, ok)
	if indirect {
		if s.d.counters == nil {
			s.d.counters = map[int]counter{}
		}
		s.d.counters[int(ir.ObjectNumber)] = c
	}
	return c
}

func (s *sketch) counter(ref types.Object, ok bool) counter {
	fd := s.d.dict(ref)
	if !ok || fd == nil {
		return counter{font: s.d.fallbackFont()}
	}
	switch s.d.name(fd["Subtype"]) {
	case "Type1", "TrueType", "MMType1":
		// Codes map to text through a standard encoding, unless a
		// ToUnicode map or the encoding's differences say otherwise
		// (subset fonts number their glyphs 1, 2, 3…).
		if _, ok := fd["ToUnicode"]; !ok && s.d.dict(fd["Encoding"]) == nil {
			return counter{}
		}
	case "Type0":
		if e := s.d.name(fd["Encoding"]); e == "Identity-H" || e == "Identity-V" {
			return counter{twoByte: true}
		}
	}
	f := s.d.font(ref)
	if f.kind != simpleFont {
		return counter{font: f}
	}
	var t [256]uint8
	var u [256]bool
	for code := range t {
		t[code] = uint8(min(visibleChars(f, []byte{byte(code)}), 255))
		u[code] = f.text[code] == ""
	}
	return counter{simple: &t, unmapped: &u}
}

// xobject counts a painted image, or sketches a form (its own resources,
// or the page's in old files), once per nesting to refuse cycles.
func (s *sketch) xobject(res types.Dict, name []byte, depth int) {
	x := s.d.xobject(res, string(name))
	if x.image {
		s.images++
	}
	if !x.form || depth >= maxTreeDepth || s.forms[x.objNr] {
		return
	}
	if x.objNr >= 0 {
		s.forms[x.objNr] = true
		defer delete(s.forms, x.objNr)
	}
	data, formRes, err := s.d.formContent(x.sd, res)
	if err != nil {
		s.lost = cmp.Or(s.lost, fmt.Errorf("form %s cannot be read: %w", name, err))
		return
	}
	saved := s.strings
	s.strings = nil
	s.run(data, formRes, depth+1)
	s.strings = saved[:0]
}
