package main

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// The subsetter is our own: no maintained Go module on the proxy subsets a
// TrueType font in memory (go-text/typesetting parses and shapes but does
// not subset; tdewolff/font is not served; pdfcpu's font.Subset reads its
// fonts from gob files installed on disk, which the sandbox has none of).
// It keeps every glyph id (the PDF's CIDs are the glyph ids, CIDToGIDMap
// Identity), empties the glyf entries of the glyphs the document does not
// use (keeping the components of composite glyphs it does), rebuilds loca
// in the long format, zeroes the unused horizontal metrics (the PDF's /W
// array gives the widths), keeps only the tables a PDF viewer reads from an
// embedded TrueType program (PDF 32000-1, 9.9: head, hhea, maxp, hmtx,
// loca, glyf, cvt, fpgm, prep; OS/2, an empty cmap and a post without
// glyph names besides), and fixes the checksums.
// The emptied glyphs and zeroes compress to almost nothing in the
// FlateDecode stream.

// sfntTables are a TrueType file's tables by tag.
type sfntTables map[string][]byte

// readTables reads a TrueType file's table directory.
func readTables(b []byte) (sfntTables, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("font file of %d bytes", len(b))
	}
	if v := binary.BigEndian.Uint32(b); v != 0x00010000 && v != 0x74727565 {
		return nil, fmt.Errorf("not a TrueType font (version %#x)", v)
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	if len(b) < 12+16*n {
		return nil, fmt.Errorf("truncated table directory")
	}
	t := sfntTables{}
	for i := range n {
		e := b[12+16*i:]
		off, ln := binary.BigEndian.Uint32(e[8:]), binary.BigEndian.Uint32(e[12:])
		if uint64(off)+uint64(ln) > uint64(len(b)) {
			return nil, fmt.Errorf("table %q beyond the file", e[:4])
		}
		t[string(e[:4])] = b[off : off+ln]
	}
	for _, tag := range []string{"head", "hhea", "maxp", "hmtx", "loca", "glyf"} {
		if t[tag] == nil {
			return nil, fmt.Errorf("no %s table", tag)
		}
	}
	if len(t["head"]) < 54 || len(t["hhea"]) < 36 || len(t["maxp"]) < 6 {
		return nil, fmt.Errorf("short head, hhea or maxp table")
	}
	return t, nil
}

func (t sfntTables) numGlyphs() int { return int(binary.BigEndian.Uint16(t["maxp"][4:])) }

func (t sfntTables) numHMetrics() int { return int(binary.BigEndian.Uint16(t["hhea"][34:])) }

// glyph returns glyph gid's glyf entry (empty for a glyph without outline).
func (t sfntTables) glyph(gid int) ([]byte, error) {
	loca, glyf := t["loca"], t["glyf"]
	long := binary.BigEndian.Uint16(t["head"][50:]) == 1
	var start, end uint32
	if long {
		if len(loca) < 4*(gid+2) {
			return nil, fmt.Errorf("loca too short for glyph %d", gid)
		}
		start, end = binary.BigEndian.Uint32(loca[4*gid:]), binary.BigEndian.Uint32(loca[4*gid+4:])
	} else {
		if len(loca) < 2*(gid+2) {
			return nil, fmt.Errorf("loca too short for glyph %d", gid)
		}
		start, end = 2*uint32(binary.BigEndian.Uint16(loca[2*gid:])), 2*uint32(binary.BigEndian.Uint16(loca[2*gid+2:]))
	}
	if start > end || end > uint32(len(glyf)) {
		return nil, fmt.Errorf("glyph %d's entry beyond glyf", gid)
	}
	return glyf[start:end], nil
}

// components are the glyph ids a composite glyph is made of.
func components(g []byte) []int {
	if len(g) < 10 || int16(binary.BigEndian.Uint16(g)) >= 0 {
		return nil
	}
	var ids []int
	p := 10
	for p+4 <= len(g) {
		flags := binary.BigEndian.Uint16(g[p:])
		ids = append(ids, int(binary.BigEndian.Uint16(g[p+2:])))
		p += 4
		if flags&0x0001 != 0 { // ARG_1_AND_2_ARE_WORDS
			p += 4
		} else {
			p += 2
		}
		switch {
		case flags&0x0008 != 0: // WE_HAVE_A_SCALE
			p += 2
		case flags&0x0040 != 0: // WE_HAVE_AN_X_AND_Y_SCALE
			p += 4
		case flags&0x0080 != 0: // WE_HAVE_A_TWO_BY_TWO
			p += 8
		}
		if flags&0x0020 == 0 { // MORE_COMPONENTS
			break
		}
	}
	return ids
}

// subsetTTF writes a TrueType file with the outlines of the glyphs in used
// (and of .notdef and every component they need) and empty entries for
// all others, glyph ids unchanged.
func subsetTTF(t sfntTables, used map[uint16]bool) ([]byte, error) {
	n := t.numGlyphs()
	keep := make([]bool, n)
	todo := []int{0}
	for g := range used {
		todo = append(todo, int(g))
	}
	for len(todo) > 0 {
		g := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if g >= n || keep[g] {
			continue
		}
		keep[g] = true
		data, err := t.glyph(g)
		if err != nil {
			return nil, err
		}
		todo = append(todo, components(data)...)
	}

	var glyf []byte
	loca := make([]byte, 4*(n+1))
	for g := range n {
		binary.BigEndian.PutUint32(loca[4*g:], uint32(len(glyf)))
		if !keep[g] {
			continue
		}
		data, err := t.glyph(g)
		if err != nil {
			return nil, err
		}
		glyf = append(glyf, data...)
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
	}
	binary.BigEndian.PutUint32(loca[4*n:], uint32(len(glyf)))

	hmtx := append([]byte(nil), t["hmtx"]...)
	nh := t.numHMetrics()
	for g := range n {
		if keep[g] {
			continue
		}
		// The last long metric's advance is every later glyph's: it stays.
		if g < nh && g != nh-1 && 4*g+4 <= len(hmtx) {
			copy(hmtx[4*g:4*g+4], []byte{0, 0, 0, 0})
		} else if g >= nh && 4*nh+2*(g-nh)+2 <= len(hmtx) {
			copy(hmtx[4*nh+2*(g-nh):], []byte{0, 0})
		}
	}

	head := append([]byte(nil), t["head"]...)
	binary.BigEndian.PutUint32(head[8:], 0)  // checkSumAdjustment, set below
	binary.BigEndian.PutUint16(head[50:], 1) // indexToLocFormat: long

	out := sfntTables{"head": head, "hhea": t["hhea"], "maxp": t["maxp"], "hmtx": hmtx, "loca": loca, "glyf": glyf,
		"cmap": emptyCmap(), "post": post3(t["post"])}
	for _, tag := range []string{"OS/2", "cvt ", "fpgm", "prep"} {
		if b := t[tag]; b != nil {
			out[tag] = b
		}
	}
	return writeTTF(out), nil
}

// emptyCmap is a cmap that maps no character: the PDF reaches glyphs by
// their ids, but a TrueType file without a cmap is refused by some
// parsers (x/image's sfnt among them). One format 4 subtable (Windows,
// Unicode BMP) with only the closing 0xFFFF segment.
func emptyCmap() []byte {
	b := make([]byte, 4+8+24)
	binary.BigEndian.PutUint16(b[2:], 1) // one subtable
	binary.BigEndian.PutUint16(b[4:], 3) // Windows
	binary.BigEndian.PutUint16(b[6:], 1) // Unicode BMP
	binary.BigEndian.PutUint32(b[8:], 12)
	st := b[12:]
	binary.BigEndian.PutUint16(st[0:], 4)  // format
	binary.BigEndian.PutUint16(st[2:], 24) // length
	binary.BigEndian.PutUint16(st[6:], 2)  // segCountX2
	binary.BigEndian.PutUint16(st[8:], 2)  // searchRange
	binary.BigEndian.PutUint16(st[12:], 0) // rangeShift
	binary.BigEndian.PutUint16(st[14:], 0xFFFF)
	binary.BigEndian.PutUint16(st[18:], 0xFFFF) // startCode
	binary.BigEndian.PutUint16(st[20:], 1)      // idDelta
	return b
}

// post3 is the font's post table cut to its header, version 3 (no glyph
// names): 32 bytes instead of the names of every glyph.
func post3(orig []byte) []byte {
	b := make([]byte, 32)
	copy(b, orig)
	binary.BigEndian.PutUint32(b, 0x00030000)
	return b
}

// writeTTF lays tables out in tag order, each on a 4-byte boundary, with
// their checksums and the head table's checkSumAdjustment.
func writeTTF(t sfntTables) []byte {
	tags := make([]string, 0, len(t))
	for tag := range t {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	n := len(tags)
	pow := 1
	for pow*2 <= n {
		pow *= 2
	}
	log2 := 0
	for 1<<(log2+1) <= pow {
		log2++
	}
	out := make([]byte, 12+16*n)
	binary.BigEndian.PutUint32(out, 0x00010000)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], uint16(pow*16))
	binary.BigEndian.PutUint16(out[8:], uint16(log2))
	binary.BigEndian.PutUint16(out[10:], uint16(n*16-pow*16))
	headAt := 0
	for i, tag := range tags {
		data := t[tag]
		e := out[12+16*i:]
		copy(e, tag)
		binary.BigEndian.PutUint32(e[4:], checksum(data))
		binary.BigEndian.PutUint32(e[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(e[12:], uint32(len(data)))
		if tag == "head" {
			headAt = len(out)
		}
		out = append(out, data...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-checksum(out))
	return out
}

// checksum is the sum of a table's big-endian uint32s, zero-padded.
func checksum(b []byte) uint32 {
	var s uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		s += binary.BigEndian.Uint32(w[:])
	}
	return s
}
