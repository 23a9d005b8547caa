package pdftext

import (
	"slices"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// CMaps map character codes, of one to four bytes, to Unicode (a font's
// ToUnicode) or to CIDs (a Type0 font's encoding). One parser reads both
// kinds; ranges are kept as ranges, so a <0000> <FFFF> range costs one entry.

type codespace struct {
	n      int // bytes per code
	lo, hi uint32
}

type uniRange struct {
	lo, hi uint32
	dst    []uint16 // UTF-16 of lo's text; the last unit counts up through the range
	array  []string // or one text per code, for the array form of bfrange
}

type cidRange struct {
	lo, hi, cid uint32
}

type cmap struct {
	spaces    []codespace
	uniSingle map[uint32]string
	uniRanges []uniRange
	cidSingle map[uint32]uint32
	cidRanges []cidRange
	vertical  bool
	// identity marks the predefined Identity-H/V: two-byte codes, CID = code.
	identity bool
}

// maxCMapEntries bounds what a hostile CMap can make us store.
const maxCMapEntries = 1 << 20

// identityCMap returns the predefined Identity-H or Identity-V CMap.
func identityCMap(vertical bool) *cmap {
	return &cmap{
		spaces:   []codespace{{n: 2, lo: 0, hi: 0xFFFF}},
		identity: true,
		vertical: vertical,
	}
}

// parseCMap reads an embedded CMap program. Unknown operators and
// PostScript around the mapping sections are skipped. usecmap of a
// predefined CMap is honoured for the Identity ones only (we carry no other
// predefined CMaps).
func parseCMap(data []byte) *cmap {
	c := &cmap{uniSingle: map[uint32]string{}, cidSingle: map[uint32]uint32{}}
	l := &lexer{data: data}
	var ops []token
	entries := 0
	for {
		t := l.next()
		if t.kind == tokEOF {
			break
		}
		if t.kind != tokKeyword {
			if t.kind == tokArrayOpen {
				ops = append(ops, token{kind: tokArrayOpen, b: nil})
				continue
			}
			if t.kind == tokArrayClose {
				ops = append(ops, t)
				continue
			}
			ops = append(ops, t)
			if len(ops) > 1<<16 {
				ops = ops[:0] // junk without operators: do not grow without bound
			}
			continue
		}
		switch string(t.b) {
		case "endcodespacerange":
			for i := 0; i+1 < len(ops); i += 2 {
				lo, hi := ops[i], ops[i+1]
				if lo.kind != tokString || hi.kind != tokString || len(lo.b) == 0 || len(lo.b) > 4 {
					continue
				}
				c.spaces = append(c.spaces, codespace{n: len(lo.b), lo: beUint(lo.b), hi: beUint(hi.b)})
			}
		case "endbfchar":
			for i := 0; i+1 < len(ops) && entries < maxCMapEntries; i += 2 {
				src, dst := ops[i], ops[i+1]
				if src.kind != tokString || len(src.b) > 4 {
					continue
				}
				switch dst.kind {
				case tokString:
					c.uniSingle[beUint(src.b)] = utf16Text(dst.b)
				case tokName:
					if r, ok := glyphRune(string(dst.b)); ok {
						c.uniSingle[beUint(src.b)] = string(r)
					}
				}
				entries++
			}
		case "endbfrange":
			c.parseBFRanges(ops, &entries)
		case "endcidrange", "endnotdefrange":
			if string(t.b) == "endnotdefrange" {
				break // notdef ranges name the glyph for undefined codes: no text
			}
			for i := 0; i+2 < len(ops) && entries < maxCMapEntries; i += 3 {
				lo, hi, cid := ops[i], ops[i+1], ops[i+2]
				if lo.kind != tokString || hi.kind != tokString || cid.kind != tokNumber {
					continue
				}
				c.cidRanges = append(c.cidRanges, cidRange{lo: beUint(lo.b), hi: beUint(hi.b), cid: uint32(max(cid.num, 0))})
				entries++
			}
		case "endcidchar":
			for i := 0; i+1 < len(ops) && entries < maxCMapEntries; i += 2 {
				src, cid := ops[i], ops[i+1]
				if src.kind != tokString || cid.kind != tokNumber {
					continue
				}
				c.cidSingle[beUint(src.b)] = uint32(max(cid.num, 0))
				entries++
			}
		case "usecmap":
			if len(ops) > 0 && ops[len(ops)-1].kind == tokName {
				switch string(ops[len(ops)-1].b) {
				case "Identity-H":
					c.identity = true
				case "Identity-V":
					c.identity, c.vertical = true, true
				}
			}
		case "def":
			if len(ops) >= 2 && ops[len(ops)-2].kind == tokName && string(ops[len(ops)-2].b) == "WMode" {
				c.vertical = ops[len(ops)-1].num == 1
			}
		}
		ops = ops[:0]
		// Mapping sections are read from the operands collected since the
		// begin keyword; the tokens' bytes point into scratch, which must
		// survive until the end keyword, so it is reset only here.
		if string(t.b) != "begincodespacerange" && string(t.b) != "beginbfchar" &&
			string(t.b) != "beginbfrange" && string(t.b) != "begincidrange" && string(t.b) != "begincidchar" {
			l.scratch = l.scratch[:0]
		}
	}
	if c.identity && len(c.spaces) == 0 {
		c.spaces = []codespace{{n: 2, lo: 0, hi: 0xFFFF}}
	}
	slices.SortFunc(c.spaces, func(a, b codespace) int { return a.n - b.n })
	sort.SliceStable(c.uniRanges, func(i, j int) bool { return c.uniRanges[i].lo < c.uniRanges[j].lo })
	sort.SliceStable(c.cidRanges, func(i, j int) bool { return c.cidRanges[i].lo < c.cidRanges[j].lo })
	return c
}

func (c *cmap) parseBFRanges(ops []token, entries *int) {
	for i := 0; i+2 < len(ops) && *entries < maxCMapEntries; {
		lo, hi := ops[i], ops[i+1]
		if lo.kind != tokString || hi.kind != tokString || len(lo.b) > 4 {
			i++
			continue
		}
		r := uniRange{lo: beUint(lo.b), hi: beUint(hi.b)}
		if r.hi < r.lo {
			r.lo, r.hi = r.hi, r.lo
		}
		dst := ops[i+2]
		switch dst.kind {
		case tokString:
			r.dst = utf16Units(dst.b)
			i += 3
		case tokArrayOpen:
			j := i + 3
			for ; j < len(ops) && ops[j].kind != tokArrayClose; j++ {
				if ops[j].kind == tokString {
					r.array = append(r.array, utf16Text(ops[j].b))
				}
			}
			i = j + 1
			if len(r.array) == 0 {
				continue
			}
		default:
			i += 3
			continue
		}
		c.uniRanges = append(c.uniRanges, r)
		*entries++
	}
}

// beUint reads up to four bytes, big-endian.
func beUint(b []byte) uint32 {
	var v uint32
	for i, x := range b {
		if i == 4 {
			break
		}
		v = v<<8 | uint32(x)
	}
	return v
}

func utf16Units(b []byte) []uint16 {
	if len(b) == 1 {
		return []uint16{uint16(b[0])} // a one-byte destination: treat as the code point
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return u
}

// utf16Text decodes a destination string, UTF-16BE by the specification.
func utf16Text(b []byte) string {
	return unitsText(utf16Units(b))
}

func unitsText(u []uint16) string {
	if len(u) == 1 && !utf16.IsSurrogate(rune(u[0])) {
		return string(rune(u[0]))
	}
	rs := utf16.Decode(u)
	var buf []byte
	for _, r := range rs {
		buf = utf8.AppendRune(buf, r)
	}
	return string(buf)
}

// lookup returns the text for a code, if the CMap maps it.
func (c *cmap) lookup(code uint32) (string, bool) {
	if s, ok := c.uniSingle[code]; ok {
		return s, true
	}
	rs := c.uniRanges
	// Ranges are sorted by their first code; the candidates are the last
	// few starting at or before code (overlaps are rare and small).
	i := sort.Search(len(rs), func(i int) bool { return rs[i].lo > code }) - 1
	for k := 0; i >= 0 && k < 8; i, k = i-1, k+1 {
		r := &rs[i]
		if code > r.hi {
			continue
		}
		off := code - r.lo
		if r.array != nil {
			if int(off) < len(r.array) {
				return r.array[off], true
			}
			return "", false
		}
		if len(r.dst) == 0 {
			return "", false
		}
		if off == 0 {
			return unitsText(r.dst), true
		}
		u := slices.Clone(r.dst)
		u[len(u)-1] += uint16(off)
		return unitsText(u), true
	}
	return "", false
}

// cid maps a code to a CID through the cidchar and cidrange sections.
func (c *cmap) cid(code uint32) uint32 {
	if c.identity && len(c.cidSingle) == 0 && len(c.cidRanges) == 0 {
		return code
	}
	if v, ok := c.cidSingle[code]; ok {
		return v
	}
	rs := c.cidRanges
	i := sort.Search(len(rs), func(i int) bool { return rs[i].lo > code }) - 1
	for k := 0; i >= 0 && k < 8; i, k = i-1, k+1 {
		if code <= rs[i].hi {
			return rs[i].cid + (code - rs[i].lo)
		}
	}
	if c.identity {
		return code
	}
	return 0
}

// nextCode splits the next character code off s by the codespace ranges
// (PDF 32000-1 9.7.6.2): the shortest prefix inside a range of its length
// wins. Bytes that match no range are consumed as the shortest code length,
// so one bad byte does not swallow the rest of the string.
func (c *cmap) nextCode(s []byte) (code uint32, n int) {
	if len(c.spaces) == 0 {
		if len(s) >= 2 {
			return uint32(s[0])<<8 | uint32(s[1]), 2
		}
		return uint32(s[0]), 1
	}
	var v uint32
	k := 0
	for _, sp := range c.spaces {
		for k < sp.n && k < len(s) {
			v = v<<8 | uint32(s[k])
			k++
		}
		if k < sp.n {
			break
		}
		if v >= sp.lo && v <= sp.hi {
			return v, sp.n
		}
	}
	n = min(c.spaces[0].n, len(s))
	return beUint(s[:n]), n
}
