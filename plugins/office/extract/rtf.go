package extract

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

const mimeRTF = "application/rtf"

// rtfSkip are the destinations whose text is not the document's: tables of
// fonts, colours and styles, metadata, pictures, embedded objects' data,
// field instructions (their results are kept).
var rtfSkip = map[string]bool{
	"fonttbl": true, "colortbl": true, "stylesheet": true, "info": true, "pict": true,
	"objdata": true, "objclass": true, "fldinst": true, "themedata": true, "colorschememapping": true,
	"datastore": true, "latentstyles": true, "listtable": true, "listoverridetable": true,
	"rsidtbl": true, "generator": true, "xmlnstbl": true, "mmathPr": true, "filetbl": true,
	"revtbl": true, "pgdsctbl": true, "protusertbl": true, "bkmkstart": true, "bkmkend": true,
	"annotation": true,
	"atnid":      true, "atnauthor": true, "xe": true, "tc": true, "sp": true,
	"nonshppict": true, "blipuid": true, "passwordhash": true, "factoidname": true,
	"defchp": true, "defpap": true, "wgrffmtfilter": true, "pnseclvl": true, "template": true,
	"docvar": true, "listpicture": true, "userprops": true, "ftnsep": true, "ftnsepc": true,
	"aftnsep": true, "aftnsepc": true, "ftncn": true, "aftncn": true, "oldcprops": true,
	"oldpprops": true, "oldsprops": true, "oldtprops": true, "fchars": true, "lchars": true,
}

// rtfAsides are the destinations read as parts of their own, as a Word
// document's are: headers, footers and footnotes.
var rtfAsides = map[string]string{
	"header": "header", "headerl": "header", "headerr": "header", "headerf": "header",
	"footer": "footer", "footerl": "footer", "footerr": "footer", "footerf": "footer",
	"footnote": "footnotes",
}

// rtfSymbols are control words that stand for one character.
var rtfSymbols = map[string]string{
	"tab": "\t", "emdash": "—", "endash": "–", "emspace": "\u2003", "enspace": "\u2002",
	"qmspace": "\u2005", "bullet": "•", "lquote": "‘", "rquote": "’", "ldblquote": "“",
	"rdblquote": "”", "zwj": "\u200d", "zwnj": "\u200c", "ltrmark": "", "rtlmark": "",
	"line": "\n", "cell": "\t",
}

// rtfState is what a group inherits and a closing brace restores.
type rtfState struct {
	skip bool
	uc   int
	enc  encoding.Encoding
	font int
}

// rtfParser turns RTF into paragraphs of text.
type rtfParser struct {
	src   []byte
	pos   int
	st    rtfState
	stack []rtfState
	paras []string
	cur   strings.Builder
	// dst is where text goes: cur, or titleB inside \title.
	dst    *strings.Builder
	titleB strings.Builder
	bytes  []byte // \'hh bytes waiting to be decoded together (DBCS)
	fonts  map[int]encoding.Encoding
	// fontDef is the font being defined in the font table, and fontTable
	// the depth of the group that holds it.
	fontDef   int
	fontTable int
	skipChars int // characters still to skip after \uN
	// highSurrogate is the first half of a UTF-16 surrogate pair written
	// by \uN, waiting for its second half; 0 for none.
	highSurrogate rune
	inTitle       bool
	// An aside (header, footer, footnote) collects its paragraphs apart
	// until its group closes: asidePart names it, asideDepth is its
	// group's depth, asideB its current paragraph.
	asidePart  string
	asideDepth int
	asideB     strings.Builder
	asides     map[string][]string
}

// extractRTF reads Rich Text Format: the document's paragraphs (tables'
// cells tab-separated, fields by their results, characters by their code
// pages and \u escapes), without the font, colour and style tables,
// pictures and comments; headers, footers and footnotes as parts of their
// own. References as for Word documents: Part "document" (or "header",
// "footer", "footnotes"), Paragraph, Location "paragraph:A-B".
func extractRTF(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(`{\rtf`)) {
		return fmt.Errorf("%w: not an RTF document (no {\\rtf header)", ErrMalformed)
	}
	p := &rtfParser{src: b, st: rtfState{uc: 1, enc: charmap.Windows1252}, fonts: map[int]encoding.Encoding{}, fontTable: -1}
	p.dst = &p.cur
	if err := p.run(ctx); err != nil {
		return err
	}
	n, _ := emitParagraphs(s, "document", p.paras, in.lim.BlockBytes)
	for _, part := range []string{"header", "footer", "footnotes"} {
		if k, _ := emitParagraphs(s, part, p.asides[part], in.lim.BlockBytes); k > 0 {
			s.structure[part] = k
		}
	}
	s.structure["format"] = "rtf"
	s.structure["paragraphs"] = n
	if t := headingText(p.titleB.String()); t != "" {
		s.structure["title"] = t
	}
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}

func (p *rtfParser) run(ctx context.Context) error {
	for p.pos < len(p.src) {
		if p.pos&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		c := p.src[p.pos]
		switch c {
		case '{':
			p.flushBytes()
			if len(p.stack) >= 1024 {
				return fmt.Errorf("%w: RTF groups nested more than 1024 deep", ErrMalformed)
			}
			p.stack = append(p.stack, p.st)
			p.pos++
		case '}':
			p.flushBytes()
			if len(p.stack) > 0 {
				if p.fontTable == len(p.stack) {
					p.fontTable = -1
				}
				p.st = p.stack[len(p.stack)-1]
				p.stack = p.stack[:len(p.stack)-1]
			}
			if p.asidePart != "" && len(p.stack) < p.asideDepth {
				p.endParagraph()
				p.asidePart, p.dst = "", &p.cur
			}
			if p.inTitle && p.st.skip {
				p.inTitle, p.dst = false, &p.cur
			}
			p.pos++
		case '\\':
			p.control()
		case '\r', '\n':
			p.pos++
		default:
			p.flushBytes()
			start := p.pos
			for p.pos < len(p.src) && !strings.ContainsRune("{}\\\r\n", rune(p.src[p.pos])) {
				p.pos++
			}
			p.text(p.src[start:p.pos])
		}
	}
	p.flushBytes()
	p.endParagraph()
	return nil
}

// text adds literal text of the current group, in its code page.
func (p *rtfParser) text(b []byte) {
	for p.skipChars > 0 && len(b) > 0 {
		b = b[1:]
		p.skipChars--
	}
	if len(b) == 0 || p.st.skip && !p.inTitle {
		return
	}
	p.bytes = append(p.bytes, b...)
}

// flushBytes decodes the pending bytes in the group's code page.
func (p *rtfParser) flushBytes() {
	if len(p.bytes) == 0 {
		return
	}
	p.loneSurrogate()
	enc := p.st.enc
	if f, ok := p.fonts[p.st.font]; ok {
		enc = f
	}
	out, err := enc.NewDecoder().Bytes(p.bytes)
	if err != nil || !utf8.Valid(out) {
		out = []byte(strings.ToValidUTF8(string(p.bytes), "\uFFFD"))
	}
	p.dst.Write(out)
	p.bytes = p.bytes[:0]
}

func (p *rtfParser) write(s string) {
	p.flushBytes()
	p.loneSurrogate()
	if !p.st.skip || p.inTitle {
		p.dst.WriteString(s)
	}
}

func (p *rtfParser) endParagraph() {
	p.flushBytes()
	p.loneSurrogate()
	if p.st.skip {
		return
	}
	if p.asidePart != "" {
		if p.asides == nil {
			p.asides = map[string][]string{}
		}
		p.asides[p.asidePart] = append(p.asides[p.asidePart], p.asideB.String())
		p.asideB.Reset()
		return
	}
	p.paras = append(p.paras, p.cur.String())
	p.cur.Reset()
}

// control reads one control word or symbol at p.pos (a backslash).
func (p *rtfParser) control() {
	p.pos++
	if p.pos >= len(p.src) {
		return
	}
	c := p.src[p.pos]
	if !isASCIILetter(c) {
		p.pos++
		switch c {
		case '\'':
			if p.pos+2 <= len(p.src) {
				if v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+2]), 16, 8); err == nil {
					p.pos += 2
					if p.skipChars > 0 {
						p.skipChars--
						return
					}
					if !p.st.skip || p.inTitle {
						p.bytes = append(p.bytes, byte(v))
					}
					return
				}
			}
		case '\\', '{', '}':
			p.text([]byte{c})
		case '~':
			p.write("\u00a0")
		case '_':
			p.write("\u2011")
		case '*':
			// An ignorable destination: skipped unless it is one we read.
			if p.pos < len(p.src) && p.src[p.pos] == '\\' {
				end := p.pos + 1
				for end < len(p.src) && isASCIILetter(p.src[end]) {
					end++
				}
				if w := string(p.src[p.pos+1 : end]); w != "shppict" && w != "fldrslt" {
					p.st.skip = true
				}
			}
		case '\r', '\n':
			p.endParagraph()
		}
		return
	}
	start := p.pos
	for p.pos < len(p.src) && isASCIILetter(p.src[p.pos]) && p.pos-start < 32 {
		p.pos++
	}
	word := string(p.src[start:p.pos])
	num, hasNum := 0, false
	ns := p.pos
	if p.pos < len(p.src) && p.src[p.pos] == '-' {
		p.pos++
	}
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' && p.pos-ns < 11 {
		p.pos++
	}
	if p.pos > ns {
		if v, err := strconv.Atoi(string(p.src[ns:p.pos])); err == nil {
			num, hasNum = v, true
		}
	}
	if p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	p.word(word, num, hasNum)
}

func (p *rtfParser) word(w string, num int, hasNum bool) {
	if p.skipChars > 0 && w != "u" {
		// A control word counts as one of the characters \uN stands for.
		p.skipChars--
		return
	}
	if w == "fonttbl" {
		p.flushBytes()
		p.fontTable = len(p.stack)
		p.st.skip = true
		return
	}
	if rtfSkip[w] {
		p.flushBytes()
		p.st.skip = true
		return
	}
	if part, ok := rtfAsides[w]; ok {
		p.flushBytes()
		if p.asidePart != "" || p.st.skip {
			p.st.skip = true // an aside inside an aside, or in skipped text
			return
		}
		p.asidePart, p.asideDepth, p.dst = part, len(p.stack), &p.asideB
		return
	}
	if s, ok := rtfSymbols[w]; ok {
		p.write(s)
		return
	}
	switch w {
	case "bin":
		// Binary data: skipped whole, whatever bytes it holds.
		p.flushBytes()
		if hasNum && num > 0 {
			p.pos = min(len(p.src), p.pos+num)
		}
	case "par", "sect", "page", "row", "nestrow":
		p.endParagraph()
	case "u":
		if hasNum {
			p.unicode(num)
			p.skipChars = p.st.uc
		}
	case "uc":
		if hasNum && num >= 0 && num < 16 {
			p.st.uc = num
		}
	case "ansicpg":
		if e := codePage(num); e != nil {
			p.st.enc = e
		}
	case "mac":
		p.st.enc = charmap.Macintosh
	case "pc":
		p.st.enc = charmap.CodePage437
	case "pca":
		p.st.enc = charmap.CodePage850
	case "f":
		p.flushBytes()
		if p.fontTable >= 0 && len(p.stack) >= p.fontTable {
			p.fontDef = num
		} else {
			p.st.font = num
		}
	case "fcharset":
		if p.fontTable >= 0 {
			if e := charsetEncoding(num); e != nil {
				p.fonts[p.fontDef] = e
			}
		}
	case "cpg":
		if p.fontTable >= 0 {
			if e := codePage(num); e != nil {
				p.fonts[p.fontDef] = e
			}
		}
	case "title":
		p.flushBytes()
		p.inTitle, p.dst = true, &p.titleB
	}
}

// unicode writes the character of \uN. N is a signed 16-bit number (RTF
// 1.9.1: U+F0B7 is \u-3913), so a character beyond the Basic Multilingual
// Plane comes as a UTF-16 surrogate pair of two \uN, each with its own
// fallback: the first half waits for the second. A half without its
// other half is a replacement character, as is any N out of range; an N
// past 16 bits that is a code point (some writers put it so) is kept.
func (p *rtfParser) unicode(n int) {
	if p.st.skip && !p.inTitle {
		return // a half kept here would surface in the text after the group
	}
	if n < 0 {
		n += 65536
	}
	r := rune(n)
	switch {
	case n < 0 || n > unicode.MaxRune:
		r = utf8.RuneError
	case utf16.IsSurrogate(r) && r < 0xDC00: // a high (first) half
		p.flushBytes()
		p.loneSurrogate()
		p.highSurrogate = r
		return
	case utf16.IsSurrogate(r): // a low (second) half
		if p.highSurrogate != 0 {
			r = utf16.DecodeRune(p.highSurrogate, r)
			p.highSurrogate = 0
		} else {
			r = utf8.RuneError
		}
	}
	p.write(string(r))
}

// loneSurrogate writes a first half of a surrogate pair that no second
// half followed as a replacement character.
func (p *rtfParser) loneSurrogate() {
	if p.highSurrogate == 0 {
		return
	}
	p.highSurrogate = 0
	if !p.st.skip || p.inTitle {
		p.dst.WriteRune(utf8.RuneError)
	}
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// codePage is the encoding of a Windows code page number, nil when unknown.
func codePage(n int) encoding.Encoding {
	switch n {
	case 437:
		return charmap.CodePage437
	case 850:
		return charmap.CodePage850
	case 852:
		return charmap.CodePage852
	case 866:
		return charmap.CodePage866
	case 874:
		return charmap.Windows874
	case 932:
		return japanese.ShiftJIS
	case 936:
		return simplifiedchinese.GBK
	case 949:
		return korean.EUCKR
	case 950:
		return traditionalchinese.Big5
	case 1250:
		return charmap.Windows1250
	case 1251:
		return charmap.Windows1251
	case 1252:
		return charmap.Windows1252
	case 1253:
		return charmap.Windows1253
	case 1254:
		return charmap.Windows1254
	case 1255:
		return charmap.Windows1255
	case 1256:
		return charmap.Windows1256
	case 1257:
		return charmap.Windows1257
	case 1258:
		return charmap.Windows1258
	case 10000:
		return charmap.Macintosh
	case 20866:
		return charmap.KOI8R
	case 28591:
		return charmap.ISO8859_1
	case 65001:
		return encoding.Nop
	}
	return nil
}

// charsetEncoding is the encoding of an RTF/Windows font charset.
func charsetEncoding(n int) encoding.Encoding {
	switch n {
	// 0 (ANSI) and 1 (default) are the document's own code page.
	case 77:
		return charmap.Macintosh
	case 128:
		return japanese.ShiftJIS
	case 129:
		return korean.EUCKR
	case 134:
		return simplifiedchinese.GBK
	case 136:
		return traditionalchinese.Big5
	case 161:
		return charmap.Windows1253
	case 162:
		return charmap.Windows1254
	case 163:
		return charmap.Windows1258
	case 177:
		return charmap.Windows1255
	case 178:
		return charmap.Windows1256
	case 186:
		return charmap.Windows1257
	case 204:
		return charmap.Windows1251
	case 222:
		return charmap.Windows874
	case 238:
		return charmap.Windows1250
	case 255:
		return charmap.CodePage437
	}
	return nil
}
