package pdftext

// The built-in encoding of a CFF (Type1C) font program, for simple fonts
// embedded as FontFile3 without an /Encoding of their own (xdvipdfmx and
// Ghostscript write TeX's math fonts this way). CFF maps a code to a glyph
// index through its Encoding, the glyph index to a string id through its
// charset, and the string id to the glyph name through the standard strings
// or the font's String INDEX (Adobe Technical Note #5176). CID-keyed CFF
// fonts have no encoding and are not read here.

// cffStdStrings are the first standard strings (SIDs 0-228, the ISOAdobe
// charset), the only ones that name ordinary text glyphs; the expert set
// after them (small capitals, old-style figures) is left unnamed.
var cffStdStrings = [...]string{
	".notdef", "space", "exclam", "quotedbl", "numbersign", "dollar", "percent", "ampersand",
	"quoteright", "parenleft", "parenright", "asterisk", "plus", "comma", "hyphen", "period",
	"slash", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"colon", "semicolon", "less", "equal", "greater", "question", "at",
	"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R",
	"S", "T", "U", "V", "W", "X", "Y", "Z",
	"bracketleft", "backslash", "bracketright", "asciicircum", "underscore", "quoteleft",
	"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
	"s", "t", "u", "v", "w", "x", "y", "z",
	"braceleft", "bar", "braceright", "asciitilde", "exclamdown", "cent", "sterling", "fraction",
	"yen", "florin", "section", "currency", "quotesingle", "quotedblleft", "guillemotleft",
	"guilsinglleft", "guilsinglright", "fi", "fl", "endash", "dagger", "daggerdbl",
	"periodcentered", "paragraph", "bullet", "quotesinglbase", "quotedblbase", "quotedblright",
	"guillemotright", "ellipsis", "perthousand", "questiondown", "grave", "acute", "circumflex",
	"tilde", "macron", "breve", "dotaccent", "dieresis", "ring", "cedilla", "hungarumlaut",
	"ogonek", "caron", "emdash", "AE", "ordfeminine", "Lslash", "Oslash", "OE", "ordmasculine",
	"ae", "dotlessi", "lslash", "oslash", "oe", "germandbls", "onesuperior", "logicalnot", "mu",
	"trademark", "Eth", "onehalf", "plusminus", "Thorn", "onequarter", "divide", "brokenbar",
	"degree", "thorn", "threequarters", "twosuperior", "registered", "minus", "eth", "multiply",
	"threesuperior", "copyright", "Aacute", "Acircumflex", "Adieresis", "Agrave", "Aring",
	"Atilde", "Ccedilla", "Eacute", "Ecircumflex", "Edieresis", "Egrave", "Iacute",
	"Icircumflex", "Idieresis", "Igrave", "Ntilde", "Oacute", "Ocircumflex", "Odieresis",
	"Ograve", "Otilde", "Scaron", "Uacute", "Ucircumflex", "Udieresis", "Ugrave", "Yacute",
	"Ydieresis", "Zcaron", "aacute", "acircumflex", "adieresis", "agrave", "aring", "atilde",
	"ccedilla", "eacute", "ecircumflex", "edieresis", "egrave", "iacute", "icircumflex",
	"idieresis", "igrave", "ntilde", "oacute", "ocircumflex", "odieresis", "ograve", "otilde",
	"scaron", "uacute", "ucircumflex", "udieresis", "ugrave", "yacute", "ydieresis", "zcaron",
}

// cffStdStringCount is the number of standard strings; a font's own
// strings have SIDs from here on.
const cffStdStringCount = 391

type cffReader struct {
	b   []byte
	bad bool
}

func (r *cffReader) u8(off int) int {
	if off < 0 || off >= len(r.b) {
		r.bad = true
		return 0
	}
	return int(r.b[off])
}

func (r *cffReader) u16(off int) int { return r.u8(off)<<8 | r.u8(off+1) }

func (r *cffReader) offset(off, size int) int {
	v := 0
	for i := range size {
		v = v<<8 | r.u8(off+i)
	}
	return v
}

// index reads the INDEX at off: its items as [start, end) pairs and the
// offset after it.
func (r *cffReader) index(off int) (items [][2]int, next int) {
	count := r.u16(off)
	if count == 0 {
		return nil, off + 2
	}
	size := r.u8(off + 2)
	if size < 1 || size > 4 || count > len(r.b) {
		r.bad = true
		return nil, len(r.b)
	}
	base := off + 3 + (count+1)*size - 1
	prev := r.offset(off+3, size)
	for i := 1; i <= count && !r.bad; i++ {
		o := r.offset(off+3+i*size, size)
		if o < prev || base+o > len(r.b) {
			r.bad = true
			break
		}
		items = append(items, [2]int{base + prev, base + o})
		prev = o
	}
	return items, base + prev
}

// topDict reads the operators we need from a Top DICT: charset (15),
// Encoding (16), CharStrings (17), and whether ROS (12 30) marks a
// CID-keyed font.
func (r *cffReader) topDict(start, end int) (charset, encoding, charStrings int, cid bool) {
	var ops []int
	for i := start; i < end && !r.bad; {
		b0 := r.u8(i)
		switch {
		case b0 <= 21:
			op := b0
			i++
			if b0 == 12 {
				op = 1200 + r.u8(i)
				i++
			}
			last := 0
			if len(ops) > 0 {
				last = ops[len(ops)-1]
			}
			switch op {
			case 15:
				charset = last
			case 16:
				encoding = last
			case 17:
				charStrings = last
			case 1230:
				cid = true
			}
			ops = ops[:0]
		case b0 == 28:
			ops = append(ops, int(int16(r.u16(i+1))))
			i += 3
		case b0 == 29:
			ops = append(ops, int(int32(r.u16(i+1)<<16|r.u16(i+3))))
			i += 5
		case b0 == 30: // a real number: skip its nibbles
			i++
			for i < end {
				x := r.u8(i)
				i++
				if x&0x0F == 0x0F || x>>4 == 0x0F {
					break
				}
			}
			ops = append(ops, 0)
		case b0 >= 32 && b0 <= 246:
			ops = append(ops, b0-139)
			i++
		case b0 >= 247 && b0 <= 250:
			ops = append(ops, (b0-247)*256+r.u8(i+1)+108)
			i += 2
		case b0 >= 251 && b0 <= 254:
			ops = append(ops, -(b0-251)*256-r.u8(i+1)-108)
			i += 2
		default:
			i++
		}
	}
	return charset, encoding, charStrings, cid
}

// cffEncoding fills names from a CFF font's built-in encoding.
func cffEncoding(data []byte, names *[256]string) bool {
	r := &cffReader{b: data}
	hdr := r.u8(2)
	_, next := r.index(hdr) // Name INDEX
	top, next := r.index(next)
	strs, _ := r.index(next)
	if r.bad || len(top) == 0 {
		return false
	}
	charsetOff, encOff, csOff, cid := r.topDict(top[0][0], top[0][1])
	if r.bad || cid || csOff <= 0 {
		return false
	}
	glyphs, _ := r.index(csOff)
	n := len(glyphs)
	if r.bad || n == 0 {
		return false
	}
	name := func(sid int) string {
		switch {
		case sid < len(cffStdStrings):
			return cffStdStrings[sid]
		case sid >= cffStdStringCount && sid-cffStdStringCount < len(strs):
			s := strs[sid-cffStdStringCount]
			return string(data[s[0]:s[1]])
		}
		return ""
	}
	// charset: the SID of each glyph index (glyph 0 is .notdef).
	sids := make([]int, n)
	switch charsetOff {
	case 0: // ISOAdobe: glyph i is SID i
		for i := range sids {
			sids[i] = i
		}
	case 1, 2: // the expert charsets name no text glyphs we know
	default:
		format := r.u8(charsetOff)
		p := charsetOff + 1
		switch format {
		case 0:
			for g := 1; g < n; g++ {
				sids[g] = r.u16(p)
				p += 2
			}
		case 1, 2:
			for g := 1; g < n && !r.bad; {
				first := r.u16(p)
				var left int
				if format == 1 {
					left = r.u8(p + 2)
					p += 3
				} else {
					left = r.u16(p + 2)
					p += 4
				}
				for k := 0; k <= left && g < n; k++ {
					sids[g] = first + k
					g++
				}
			}
		}
	}
	if r.bad {
		return false
	}
	switch encOff {
	case 0:
		*names = standardEncoding
		return true
	case 1:
		return false // the expert encoding: nothing for text
	}
	format := r.u8(encOff)
	p := encOff + 1
	switch format & 0x7F {
	case 0:
		count := r.u8(p)
		p++
		for g := 1; g <= count && g < n; g++ {
			names[r.u8(p)] = name(sids[g])
			p++
		}
		p = encOff + 2 + count
	case 1:
		ranges := r.u8(p)
		p++
		g := 1
		for range ranges {
			first, left := r.u8(p), r.u8(p+1)
			p += 2
			for k := 0; k <= left && g < n; k++ {
				if c := first + k; c < 256 {
					names[c] = name(sids[g])
				}
				g++
			}
		}
	default:
		return false
	}
	if format&0x80 != 0 { // supplements: more codes for named glyphs
		sups := r.u8(p)
		p++
		for range sups {
			names[r.u8(p)] = name(r.u16(p + 1))
			p += 3
		}
	}
	return !r.bad
}
