package extract

import (
	"encoding/binary"
	"sort"
)

// Offsets and property codes of Word 97-2003 paragraph properties
// (MS-DOC 2.5.6, 2.9.{70,71}, 2.6.2).
const (
	fibFcPlcfBtePapx  = 0x0102 // the bin table of paragraph property pages
	fibLcbPlcfBtePapx = 0x0106
	sprmPFInTable     = 0x2416
	sprmPFTtp         = 0x2417
	sprmPItap         = 0x6649 // table depth: 2 and more in a nested table
	sprmPDtap         = 0x664A // a change of the table depth
	sprmPFInnerCell   = 0x244B // the mark ends a cell of a nested table
	sprmPFInnerTtp    = 0x244C // the mark ends a row of a nested table
	wordFkpSize       = 512
)

// wordMarks says, by the byte offset of a paragraph's mark in the
// WordDocument stream, which paragraphs lie in a table and which marks end
// table rows: the properties of Word's paragraph property pages (FKPs).
type wordMarks struct {
	pieces []wordPiece
	runs   []wordRun // sorted by start
}

// wordRun is a range of stream offsets whose paragraphs share properties.
type wordRun struct {
	start, end int
	wordPara
}

// wordPara is what a paragraph's properties say of its place in tables.
// A table's cells end with cell marks (0x07), one of them ending each
// row (rowTp); the cells of a table nested in a cell end with paragraph
// marks instead (innerCell, innerTtp for the row's end), and depth says
// how deep the paragraph lies (1 in a table, 2 in a table in its cell…).
type wordPara struct {
	inTable, rowTp      bool
	innerCell, innerTtp bool
	depth               int
}

// known reports whether paragraph properties were read at all.
func (m *wordMarks) known() bool { return m != nil && len(m.runs) > 0 }

// props returns the properties of the paragraph whose mark is at character
// position cp.
func (m *wordMarks) props(cp int) wordRun {
	if !m.known() {
		return wordRun{}
	}
	k := sort.Search(len(m.pieces), func(i int) bool { return m.pieces[i].cp1 > cp })
	if k == len(m.pieces) || cp < m.pieces[k].cp0 {
		return wordRun{}
	}
	p := m.pieces[k]
	off := p.off + (cp - p.cp0)
	if !p.compressed {
		off = p.off + 2*(cp-p.cp0)
	}
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].end > off })
	if i == len(m.runs) || off < m.runs[i].start {
		return wordRun{}
	}
	return m.runs[i]
}

// para returns the table properties of the paragraph whose mark is at
// character position cp; depth is 1 for a paragraph in a table that says
// no more.
func (m *wordMarks) para(cp int) wordPara {
	p := m.props(cp).wordPara
	if p.inTable && p.depth < 1 {
		p.depth = 1
	}
	if !p.inTable {
		p.depth = 0
	}
	return p
}

// wordTableMarks reads the paragraph property pages the bin table of the
// FIB points to. It returns nil when they are missing or damaged: tables
// then come out as paragraphs, and nothing else is lost.
func wordTableMarks(wd, table []byte, pieces []wordPiece) *wordMarks {
	if len(wd) < fibLcbPlcfBtePapx+4 {
		return nil
	}
	fc := int(binary.LittleEndian.Uint32(wd[fibFcPlcfBtePapx:]))
	lcb := int(binary.LittleEndian.Uint32(wd[fibLcbPlcfBtePapx:]))
	if lcb < 12 || (lcb-4)%8 != 0 || fc < 0 || fc+lcb > len(table) || fc+lcb < fc {
		return nil
	}
	plc := table[fc : fc+lcb]
	n := (lcb - 4) / 8
	m := &wordMarks{pieces: pieces}
	for k := range n {
		pn := int(binary.LittleEndian.Uint32(plc[4*(n+1)+4*k:]) & 0x3FFFFF)
		if (pn+1)*wordFkpSize > len(wd) {
			return nil
		}
		page := wd[pn*wordFkpSize : (pn+1)*wordFkpSize]
		crun := int(page[wordFkpSize-1])
		if 4*(crun+1)+13*crun > wordFkpSize-1 {
			return nil
		}
		for i := range crun {
			r := wordRun{start: int(binary.LittleEndian.Uint32(page[4*i:])), end: int(binary.LittleEndian.Uint32(page[4*i+4:]))}
			if o := 2 * int(page[4*(crun+1)+13*i]); o > 0 {
				r.wordPara = papxFlags(page, o)
			}
			if r.end > r.start && (r.inTable || r.rowTp) {
				m.runs = append(m.runs, r)
			}
		}
	}
	sort.Slice(m.runs, func(i, j int) bool { return m.runs[i].start < m.runs[j].start })
	return m
}

// papxFlags reads a PapxInFkp at offset o of an FKP page: whether its
// paragraph is in a table, how deep, and whether its mark ends a cell or
// a row.
func papxFlags(page []byte, o int) (p wordPara) {
	if o >= len(page)-1 {
		return p
	}
	var grpprl []byte
	if cb := int(page[o]); cb != 0 {
		grpprl = page[o+1 : min(len(page), o+2*cb)]
	} else {
		grpprl = page[o+2 : min(len(page), o+2+2*int(page[o+1]))]
	}
	if len(grpprl) < 2 {
		return p
	}
	for i := 2; i+2 <= len(grpprl); { // after the style index
		sprm := binary.LittleEndian.Uint16(grpprl[i:])
		i += 2
		var size int
		switch sprm >> 13 {
		case 0, 1:
			size = 1
		case 2, 4, 5:
			size = 2
		case 3:
			size = 4
		case 7:
			size = 3
		case 6:
			if i >= len(grpprl) {
				return p
			}
			size = 1 + int(grpprl[i])
		}
		if i+size > len(grpprl) {
			break
		}
		switch sprm {
		case sprmPFInTable:
			p.inTable = grpprl[i] != 0
		case sprmPFTtp:
			p.rowTp = grpprl[i] != 0
		case sprmPFInnerCell:
			p.innerCell = grpprl[i] != 0
		case sprmPFInnerTtp:
			p.innerTtp = grpprl[i] != 0
		case sprmPItap:
			p.depth = int(min(binary.LittleEndian.Uint32(grpprl[i:]), maxTableDepth))
		case sprmPDtap:
			p.depth = min(max(p.depth+int(int32(binary.LittleEndian.Uint32(grpprl[i:]))), 0), maxTableDepth)
		}
		i += size
	}
	return p
}

// maxTableDepth bounds how deep tables nest (Word allows 63): a hostile
// depth cannot make the reader keep millions of open tables.
const maxTableDepth = 64
