package extract

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

// Offsets in a Word 97-2003 File Information Block (MS-DOC 2.5.1).
const (
	fibIdent     = 0x0000 // wIdent: 0xA5EC
	fibNFib      = 0x0002
	fibFlags     = 0x000A // fEncrypted 0x0100, fWhichTblStm 0x0200
	fibCcpText   = 0x004C // main document, then footnotes, headers, macros, comments, endnotes, text boxes
	fibFcClx     = 0x01A2
	fibLcbClx    = 0x01A6
	wordIdent    = 0xA5EC
	wordMinNFib  = 0x00C1 // Word 97
	fibEncrypted = 0x0100
	fibTable1    = 0x0200
)

// wordParts are the stories of a Word document in character-position
// order, as the FIB counts them, with the parts they are reported as (those
// of DOCX).
var wordParts = []string{"document", "footnotes", "headers", "macros", "comments", "endnotes", "textboxes", "headertextboxes"}

// extractDOC reads a Word 97-2003 document (MS-DOC): the text of its piece
// table, split into stories (main document, footnotes, headers, comments,
// endnotes, text boxes) and paragraphs; fields by their results, tables'
// cells as paragraphs. References as for DOCX: Part, Paragraph, Location
// "paragraph:A-B".
func extractDOC(ctx context.Context, o *oleFile, s *sink) error {
	wd, err := o.read("WordDocument")
	if err != nil {
		return err
	}
	if len(wd) < fibLcbClx+4 || binary.LittleEndian.Uint16(wd[fibIdent:]) != wordIdent {
		return fmt.Errorf("%w: a Word document whose File Information Block is not Word 97-2003's", ErrMalformed)
	}
	nFib := binary.LittleEndian.Uint16(wd[fibNFib:])
	flags := binary.LittleEndian.Uint16(wd[fibFlags:])
	switch {
	case nFib < wordMinNFib && nFib >= 0x0065:
		return fmt.Errorf("%w: a Word 6.0/95 document (nFib %#x); only Word 97-2003 and later are read", ErrUnsupported, nFib)
	case nFib < 0x0065:
		return fmt.Errorf("%w: a Word 2.0 or older document (nFib %#x)", ErrUnsupported, nFib)
	case flags&fibEncrypted != 0:
		return fmt.Errorf("%w: a password-protected Word 97-2003 document", ErrEncrypted)
	}
	tableName := "0Table"
	if flags&fibTable1 != 0 {
		tableName = "1Table"
	}
	table, err := o.read(tableName)
	if err != nil {
		return err
	}
	fcClx := binary.LittleEndian.Uint32(wd[fibFcClx:])
	lcbClx := binary.LittleEndian.Uint32(wd[fibLcbClx:])
	if uint64(fcClx)+uint64(lcbClx) > uint64(len(table)) || lcbClx == 0 {
		return fmt.Errorf("%w: the piece table lies outside the %s stream", ErrMalformed, tableName)
	}
	text, pieces, err := wordPieces(wd, table[fcClx:fcClx+lcbClx], s.lim.MaxTextBytes)
	if err != nil {
		return err
	}
	// Paragraph properties tell table cells and rows apart; without them
	// (a damaged property table) cells come out as paragraphs.
	marks := wordTableMarks(wd, table, pieces)
	// Split the character stream into stories by the FIB's counts.
	pos, tables := 0, 0
	counts := map[string]any{}
	for i, part := range wordParts {
		off := fibCcpText + 4*i
		if off+4 > len(wd) || pos >= len(text) {
			break
		}
		n := int(binary.LittleEndian.Uint32(wd[off:]))
		if n <= 0 {
			continue
		}
		end := min(len(text), pos+n)
		story := text[pos:end]
		pos = end
		if part == "macros" || s.full() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		k, t, _ := emitBlocks(s, part, wordBlocks(story, pos-len(story), marks), s.lim.BlockBytes)
		if k > 0 {
			counts[part] = k
		}
		tables += t
	}
	s.structure["format"] = "doc"
	s.structure["paragraphs"] = counts
	s.structure["tables"] = tables
	return nil
}

// wordPiece is one piece of the piece table: characters [cp0, cp1) stored
// from byte offset off of the WordDocument stream, one byte each when
// compressed, two otherwise.
type wordPiece struct {
	cp0, cp1, off int
	compressed    bool
}

// wordPieces reads the document's characters through the piece table (the
// Pcdt of the Clx): each piece is 8-bit Windows-1252 ("compressed") or
// UTF-16LE text at its offset in the WordDocument stream.
func wordPieces(wd, clx []byte, maxText int64) ([]rune, []wordPiece, error) {
	i := 0
	for i < len(clx) && clx[i] == 0x01 { // Prc: property modifiers, skipped
		if i+3 > len(clx) {
			return nil, nil, fmt.Errorf("%w: a cut Clx", ErrMalformed)
		}
		i += 3 + int(binary.LittleEndian.Uint16(clx[i+1:]))
	}
	if i+5 > len(clx) || clx[i] != 0x02 {
		return nil, nil, fmt.Errorf("%w: no piece table in the Clx", ErrMalformed)
	}
	lcb := int(binary.LittleEndian.Uint32(clx[i+1:]))
	plc := clx[i+5:]
	if lcb > len(plc) || lcb < 4 || (lcb-4)%12 != 0 {
		return nil, nil, fmt.Errorf("%w: a piece table of %d bytes", ErrMalformed, lcb)
	}
	n := (lcb - 4) / 12
	cps := func(k int) int { return int(binary.LittleEndian.Uint32(plc[4*k:])) }
	var out []rune
	var pieces []wordPiece
	for k := 0; k < n; k++ {
		cp0, cp1 := cps(k), cps(k+1)
		if cp1 < cp0 {
			return nil, nil, fmt.Errorf("%w: piece %d ends before it starts", ErrMalformed, k)
		}
		pcd := plc[4*(n+1)+8*k:]
		fc := binary.LittleEndian.Uint32(pcd[2:])
		count := cp1 - cp0
		if int64(len(out)+count) > maxText {
			count = int(maxText) - len(out)
		}
		if fc&0x40000000 != 0 {
			off := int(fc&0x3FFFFFFF) / 2
			if off+count > len(wd) {
				return nil, nil, fmt.Errorf("%w: piece %d lies outside the WordDocument stream", ErrMalformed, k)
			}
			pieces = append(pieces, wordPiece{cp0: len(out), cp1: len(out) + count, off: off, compressed: true})
			dec, _ := charmap.Windows1252.NewDecoder().Bytes(wd[off : off+count])
			out = append(out, []rune(string(dec))...)
		} else {
			off := int(fc)
			if off+2*count > len(wd) {
				return nil, nil, fmt.Errorf("%w: piece %d lies outside the WordDocument stream", ErrMalformed, k)
			}
			pieces = append(pieces, wordPiece{cp0: len(out), cp1: len(out) + count, off: off})
			u := make([]uint16, count)
			for j := range u {
				u[j] = binary.LittleEndian.Uint16(wd[off+2*j:])
			}
			out = append(out, utf16.Decode(u)...)
		}
		if int64(len(out)) >= maxText {
			break
		}
	}
	return out, pieces, nil
}

// wordBlocks splits a story, which starts at character position base, into
// paragraphs and tables and cleans Word's special characters: paragraph
// marks end paragraphs, cell marks cells and row marks (told apart by
// marks) rows; field codes are dropped and their results kept, object
// anchors and note references go. Without marks every cell is a paragraph.
// A table nested in a cell (its cells and rows end with paragraph marks
// that say so) is written into that cell, a line per row (see
// nestedTableText).
func wordBlocks(story []rune, base int, marks *wordMarks) []wordBlock {
	var (
		out    []wordBlock
		b      strings.Builder
		tables []*wordTable // the open tables, outermost first
	)
	// closeTo ends the tables nested deeper than depth: a nested one goes
	// into the cell it sits in, an outermost one out as a table block.
	closeTo := func(depth int) {
		for len(tables) > depth {
			t := tables[len(tables)-1]
			tables = tables[:len(tables)-1]
			t.endRow("")
			switch {
			case len(tables) > 0:
				if text := nestedTableText(t.rows); text != "" {
					up := tables[len(tables)-1]
					up.cell = append(up.cell, text)
					tables[0].nested++
				}
			case len(t.rows) > 0:
				out = append(out, wordBlock{rows: t.rows, nested: t.nested})
			}
		}
	}
	openTo := func(depth int) *wordTable {
		closeTo(depth)
		for len(tables) < depth {
			tables = append(tables, &wordTable{})
		}
		return tables[depth-1]
	}
	// fields is a stack: true while in a field's code (before its
	// separator), whose text is not shown.
	var fields []bool
	inCode := func() bool {
		for _, c := range fields {
			if c {
				return true
			}
		}
		return false
	}
	for i, r := range story {
		switch r {
		case 0x13: // field begin
			fields = append(fields, true)
			continue
		case 0x14: // field separator: the result follows
			if len(fields) > 0 {
				fields[len(fields)-1] = false
			}
			continue
		case 0x15: // field end
			if len(fields) > 0 {
				fields = fields[:len(fields)-1]
			}
			continue
		}
		if inCode() {
			continue
		}
		switch r {
		case '\r', 0x0c: // paragraph end, page or section break
			p := marks.para(base + i)
			if r != '\r' || p.depth == 0 {
				closeTo(0)
				out = append(out, wordBlock{text: b.String()})
				b.Reset()
				break
			}
			t := openTo(p.depth)
			switch {
			case p.depth > 1 && p.innerTtp:
				t.endRow(b.String())
			case p.depth > 1 && p.innerCell:
				t.cell = append(t.cell, strings.TrimSpace(b.String()))
				t.endCell()
			default:
				t.cell = append(t.cell, strings.TrimSpace(b.String()))
			}
			b.Reset()
		case 0x07: // cell or row end: a cell mark ends the outermost table's cells
			if !marks.known() {
				out = append(out, wordBlock{text: b.String()})
				b.Reset()
				break
			}
			t := openTo(1)
			if marks.para(base + i).rowTp {
				t.endRow(b.String())
			} else {
				t.cell = append(t.cell, strings.TrimSpace(b.String()))
				t.endCell()
			}
			b.Reset()
		case 0x0b: // line break
			b.WriteByte('\n')
		case '\t':
			b.WriteByte('\t')
		case 0x1e: // non-breaking hyphen
			b.WriteByte('-')
		case 0xa0:
			b.WriteByte(' ')
		case 0x1f, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x0e:
			// optional hyphen, picture, note reference, separators,
			// annotation reference, drawn object, column break
		default:
			if r >= 0x20 {
				b.WriteRune(r)
			}
		}
	}
	closeTo(0)
	if b.Len() > 0 {
		out = append(out, wordBlock{text: b.String()})
	}
	return out
}

// wordTable is a table being read: its rows, the cells of the open row
// and the paragraphs of the open cell.
type wordTable struct {
	rows   [][]string
	row    []string
	cell   []string
	nested int // tables closed into its cells (the outermost's count)
}

func (t *wordTable) endCell() {
	t.row = append(t.row, strings.TrimSpace(strings.Join(t.cell, "\n")))
	t.cell = nil
}

// endRow ends the open row; text before its mark (none in Word's files)
// is kept as a cell.
func (t *wordTable) endRow(text string) {
	if text = strings.TrimSpace(text); text != "" {
		t.cell = append(t.cell, text)
	}
	if len(t.cell) > 0 {
		t.endCell()
	}
	if len(t.row) > 0 {
		t.rows = append(t.rows, t.row)
	}
	t.row = nil
}
