package extract

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// BIFF8 record types read (MS-XLS 2.3); BIFF5 uses the same numbers
// (OpenOffice.org's "Microsoft Excel File Format", section 5), with
// 8-bit strings in the workbook's code page where BIFF8 has Unicode ones.
const (
	xlsCodePage   = 0x0042
	xlsBOF        = 0x0809
	xlsEOF        = 0x000A
	xlsFilePass   = 0x002F
	xlsDateMode   = 0x0022
	xlsFormat     = 0x041E
	xlsXF         = 0x00E0
	xlsBoundSheet = 0x0085
	xlsSST        = 0x00FC
	xlsContinue   = 0x003C
	xlsLabelSST   = 0x00FD
	xlsLabel      = 0x0204
	xlsRString    = 0x00D6
	xlsNumber     = 0x0203
	xlsRK         = 0x027E
	xlsMulRK      = 0x00BD
	xlsFormula    = 0x0006
	xlsString     = 0x0207
	xlsBoolErr    = 0x0205
)

// xlsRecord is one BIFF record: its type, its data, and where it starts.
type xlsRecord struct {
	typ  uint16
	data []byte
	off  int
}

// xlsRecords splits a BIFF stream from off into records, up to the EOF
// record of that substream (or the stream's end).
func xlsRecords(b []byte, off int) []xlsRecord {
	var out []xlsRecord
	for off+4 <= len(b) {
		typ := binary.LittleEndian.Uint16(b[off:])
		n := int(binary.LittleEndian.Uint16(b[off+2:]))
		if off+4+n > len(b) {
			break
		}
		out = append(out, xlsRecord{typ: typ, data: b[off+4 : off+4+n], off: off})
		off += 4 + n
		if typ == xlsEOF {
			break
		}
	}
	return out
}

// xlsBook is what the workbook globals say.
type xlsBook struct {
	// biff5 is an Excel 5.0/95 workbook: strings are bytes in enc, the
	// code page its CODEPAGE record names (Windows-1252 without one).
	biff5    bool
	enc      encoding.Encoding
	date1904 bool
	formats  map[int]string // custom number formats by id
	xfs      []int          // number format id of each XF
	sst      []string
}

type xlsSheet struct {
	name   string
	pos    int
	hidden bool
}

// extractXLS reads an Excel 97-2003 workbook (BIFF8, the Workbook stream)
// or an Excel 5.0/95 one (BIFF5, the Book stream): each worksheet's cells
// as for XLSX (SheetName, Location "sheet:NAME!A1:F20"), shared strings,
// numbers without binary noise, dates and times as ISO 8601.
func extractXLS(ctx context.Context, o *oleFile, s *sink) error {
	stream := "Workbook"
	if !o.has(stream) {
		stream = "Book"
	}
	wb, err := o.read(stream)
	if err != nil {
		return err
	}
	recs := xlsRecords(wb, 0)
	if len(recs) == 0 || recs[0].typ != xlsBOF || len(recs[0].data) < 2 {
		return fmt.Errorf("%w: the %s stream does not start with a BIFF5 or BIFF8 BOF record", ErrMalformed, stream)
	}
	book := &xlsBook{formats: map[int]string{}, enc: charmap.Windows1252}
	switch v := binary.LittleEndian.Uint16(recs[0].data); v {
	case 0x0600:
	case 0x0500: // BIFF5 and BIFF7 (Excel 5.0 and 95) both say 0x0500
		book.biff5 = true
	default:
		return fmt.Errorf("%w: an Excel workbook of BIFF version %#x; Excel 5.0/95 (BIFF5) and 97-2003 (BIFF8) are read", ErrUnsupported, v)
	}
	var sheets []xlsSheet
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		d := r.data
		switch r.typ {
		case xlsFilePass:
			return fmt.Errorf("%w: a password-protected Excel 97-2003 workbook", ErrEncrypted)
		case xlsCodePage:
			if len(d) >= 2 {
				if e := biffCodePage(int(binary.LittleEndian.Uint16(d))); e != nil {
					book.enc = e
				}
			}
		case xlsDateMode:
			book.date1904 = len(d) >= 2 && binary.LittleEndian.Uint16(d) == 1
		case xlsFormat:
			if book.biff5 && len(d) >= 3 {
				if str, ok := book.bytes8(d[2:]); ok {
					book.formats[int(binary.LittleEndian.Uint16(d))] = str
				}
			} else if len(d) >= 5 {
				if str, _, ok := xlsString16(d[2:]); ok {
					book.formats[int(binary.LittleEndian.Uint16(d))] = str
				}
			}
		case xlsXF:
			if len(d) >= 4 {
				book.xfs = append(book.xfs, int(binary.LittleEndian.Uint16(d[2:])))
			}
		case xlsBoundSheet:
			if len(d) >= 7 && d[5] == 0 { // worksheets only, not charts or macros
				name, ok := xlsString8(d[6:])
				if book.biff5 {
					name, ok = book.bytes8(d[6:])
				}
				if ok {
					sheets = append(sheets, xlsSheet{name: name, pos: int(binary.LittleEndian.Uint32(d)), hidden: d[4]&3 != 0})
				}
			}
		case xlsSST:
			segs := [][]byte{d}
			for i+1 < len(recs) && recs[i+1].typ == xlsContinue {
				i++
				segs = append(segs, recs[i].data)
			}
			book.sst = xlsSSTStrings(segs, s.lim.MaxObjects*64)
		}
	}
	list := []map[string]any{}
	for _, sh := range sheets {
		if s.full() {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		entry := map[string]any{"name": sh.name}
		if sh.hidden {
			entry["hidden"] = true
		}
		if sh.pos < 0 || sh.pos >= len(wb) {
			entry["problem"] = "the sheet's records lie outside the stream"
		} else {
			st := xlsSheetCells(s, book, sh, xlsRecords(wb, sh.pos))
			if st.cells > 0 {
				entry["range"], entry["rows"], entry["cells"] = st.rng, st.rows, st.cells
			}
		}
		if len(list) < 10_000 {
			list = append(list, entry)
		}
	}
	s.structure["format"] = "xls"
	if book.biff5 {
		s.structure["biff"] = 5
	}
	s.structure["sheets"] = list
	return nil
}

// xlsSheetCells emits a worksheet's cells in blocks, as for XLSX.
func xlsSheetCells(s *sink, book *xlsBook, sh xlsSheet, recs []xlsRecord) sheetStats {
	cells := map[int]map[int]string{}
	set := func(row, col int, v string) {
		if strings.TrimSpace(v) == "" || row < 0 || col < 0 {
			return
		}
		if cells[row] == nil {
			cells[row] = map[int]string{}
		}
		cells[row][col] = v
	}
	for i, r := range recs {
		d := r.data
		if len(d) < 6 {
			continue
		}
		row, col, xf := int(binary.LittleEndian.Uint16(d)), int(binary.LittleEndian.Uint16(d[2:])), int(binary.LittleEndian.Uint16(d[4:]))
		switch r.typ {
		case xlsLabelSST:
			if len(d) >= 10 {
				if k := int(binary.LittleEndian.Uint32(d[6:])); k < len(book.sst) {
					set(row, col, book.sst[k])
				}
			}
		case xlsLabel, xlsRString:
			if str, ok := book.label(d[6:]); ok {
				set(row, col, str)
			}
		case xlsNumber:
			if len(d) >= 14 {
				set(row, col, book.number(math.Float64frombits(binary.LittleEndian.Uint64(d[6:])), xf))
			}
		case xlsRK:
			if len(d) >= 10 {
				set(row, col, book.number(rkValue(binary.LittleEndian.Uint32(d[6:])), xf))
			}
		case xlsMulRK:
			// rw, colFirst, then 6 bytes (ixfe, rk) per cell, then colLast.
			for j, c := 0, col; 4+6*j+6 <= len(d)-2; j, c = j+1, c+1 {
				p := d[4+6*j:]
				set(row, c, book.number(rkValue(binary.LittleEndian.Uint32(p[2:])), int(binary.LittleEndian.Uint16(p))))
			}
		case xlsFormula:
			if len(d) < 14 {
				continue
			}
			res := d[6:14]
			if res[6] == 0xff && res[7] == 0xff {
				switch res[0] {
				case 0: // a string: the next STRING record
					for _, n := range recs[i+1 : min(len(recs), i+3)] {
						if n.typ == xlsString {
							if str, ok := book.label(n.data); ok {
								set(row, col, str)
							}
							break
						}
					}
				case 1:
					set(row, col, map[bool]string{true: "TRUE", false: "FALSE"}[res[2] != 0])
				}
				continue
			}
			set(row, col, book.number(math.Float64frombits(binary.LittleEndian.Uint64(res)), xf))
		case xlsBoolErr:
			if len(d) >= 8 && d[7] == 0 {
				set(row, col, map[bool]string{true: "TRUE", false: "FALSE"}[d[6] != 0])
			}
		}
	}
	rows := make([]int, 0, len(cells))
	for r := range cells {
		rows = append(rows, r)
	}
	slices.Sort(rows)
	var (
		st     sheetStats
		blk    []xlsxRow
		size   int
		header []xlsxCell
		first  int
		minC   = 1 << 30
		maxC   int
	)
	flush := func() bool {
		if len(blk) == 0 {
			return true
		}
		ok := emitSheetBlock(s, sh.name, blk, header, first, sh.hidden)
		blk, size = nil, 0
		return ok
	}
	for _, r := range rows {
		cols := make([]int, 0, len(cells[r]))
		for c := range cells[r] {
			cols = append(cols, c)
		}
		slices.Sort(cols)
		xr := xlsxRow{n: r + 1}
		for _, c := range cols {
			v := cells[r][c]
			xr.cells = append(xr.cells, xlsxCell{col: c + 1, v: v})
			size += len(v) + 4
		}
		if header == nil {
			header, first = xr.cells, xr.n
		}
		minC, maxC = min(minC, xr.cells[0].col), max(maxC, xr.cells[len(xr.cells)-1].col)
		st.rows++
		st.cells += len(xr.cells)
		st.rng = cellRange(minC, first, maxC, xr.n)
		blk = append(blk, xr)
		if size >= s.lim.BlockBytes && !flush() {
			return st
		}
	}
	flush()
	return st
}

// rkValue decodes an RK number: a 30-bit integer or the high bits of a
// double, possibly divided by 100.
func rkValue(rk uint32) float64 {
	var v float64
	if rk&2 != 0 {
		v = float64(int32(rk) >> 2)
	} else {
		v = math.Float64frombits(uint64(rk&0xfffffffc) << 32)
	}
	if rk&1 != 0 {
		v /= 100
	}
	return v
}

// number renders a numeric cell by its XF's number format: dates and times
// as ISO 8601, percentages with %, other numbers as the shortest decimal
// that round-trips at 15 significant digits (what Excel shows).
func (b *xlsBook) number(v float64, xf int) string {
	id := 0
	if xf >= 0 && xf < len(b.xfs) {
		id = b.xfs[xf]
	}
	switch numFmtKind(id, b.formats[id]) {
	case "date":
		return serialTime(v, b.date1904).Format("2006-01-02")
	case "datetime":
		t := serialTime(v, b.date1904)
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
			return t.Format("2006-01-02")
		}
		return t.Format("2006-01-02 15:04:05")
	case "time":
		return serialTime(v, b.date1904).Format("15:04:05")
	case "percent":
		return formatNumber(v*100) + "%"
	}
	return formatNumber(v)
}

// numFmtKind classifies a number format: "date", "datetime", "time",
// "percent" or "" for plain numbers. Built-in ids are those of MS-XLS
// 2.4.126 (and of SpreadsheetML).
func numFmtKind(id int, code string) string {
	switch {
	case id >= 14 && id <= 17, id >= 27 && id <= 31, id == 36, id >= 50 && id <= 58:
		return "date"
	case id == 22:
		return "datetime"
	case id >= 18 && id <= 21, id >= 32 && id <= 35, id >= 45 && id <= 47:
		return "time"
	case id == 9 || id == 10:
		return "percent"
	case code == "":
		return ""
	}
	// Drop quoted text, bracketed sections (colours, locales, elapsed
	// time), escaped characters; then look for date and time codes.
	var c strings.Builder
	quoted, bracket := false, false
	for i := 0; i < len(code); i++ {
		ch := code[i]
		switch {
		case ch == '"':
			quoted = !quoted
		case quoted:
		case ch == '[':
			bracket = true
		case ch == ']':
			bracket = false
		case bracket:
		case ch == '\\' || ch == '_' || ch == '*':
			i++
		default:
			c.WriteByte(ch | 0x20)
		}
	}
	t := c.String()
	date := strings.ContainsAny(t, "yd")
	tm := strings.ContainsAny(t, "hs")
	switch {
	case date && tm:
		return "datetime"
	case date:
		return "date"
	case tm:
		return "time"
	case strings.Contains(t, "%"):
		return "percent"
	}
	return ""
}

// serialTime converts an Excel serial date: days since 1899-12-30 (the
// 1900 system, whose fictitious 29 February 1900 shifts the first 60
// days) or since 1904-01-01.
func serialTime(v float64, date1904 bool) time.Time {
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if v < 61 {
		base = base.AddDate(0, 0, 1)
	}
	days := math.Floor(v)
	secs := math.Round((v - days) * 86400)
	return base.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
}

// formatNumber prints a number as Excel shows a General cell: at most 15
// significant digits, no exponent for ordinary magnitudes.
func formatNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if a := math.Abs(r); a != 0 && (a < 1e-9 || a >= 1e21) {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// label reads the string of a LABEL, RSTRING or STRING record: an
// XLUnicodeString in BIFF8, a 16-bit count of bytes in the code page in
// BIFF5.
func (b *xlsBook) label(d []byte) (string, bool) {
	if !b.biff5 {
		s, _, ok := xlsString16(d)
		return s, ok
	}
	if len(d) < 2 {
		return "", false
	}
	n := int(binary.LittleEndian.Uint16(d))
	if 2+n > len(d) {
		return "", false
	}
	return b.decode(d[2 : 2+n]), true
}

// bytes8 reads a BIFF5 byte string with an 8-bit count (sheet names,
// number formats).
func (b *xlsBook) bytes8(d []byte) (string, bool) {
	if len(d) < 1 || 1+int(d[0]) > len(d) {
		return "", false
	}
	return b.decode(d[1 : 1+int(d[0])]), true
}

// decode turns BIFF5 bytes into text in the workbook's code page.
func (b *xlsBook) decode(raw []byte) string {
	out, err := b.enc.NewDecoder().Bytes(raw)
	if err != nil || !utf8.Valid(out) {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return string(out)
}

// biffCodePage is the encoding a CODEPAGE record names: a Windows code
// page, or one of the values Excel gives Macintosh (32768) and ANSI
// (32769, Windows-1252) workbooks; 367 is ASCII, read as Windows-1252.
func biffCodePage(n int) encoding.Encoding {
	switch n {
	case 367, 32769:
		return charmap.Windows1252
	case 32768:
		return charmap.Macintosh
	case 1200:
		return nil // UTF-16: BIFF8's own strings carry their width
	}
	return codePage(n)
}

// xlsString16 reads an XLUnicodeString: a 16-bit count, flags, characters.
func xlsString16(d []byte) (string, int, bool) {
	if len(d) < 3 {
		return "", 0, false
	}
	return xlsChars(d[3:], int(binary.LittleEndian.Uint16(d)), d[2]&1 != 0, 3)
}

// xlsString8 reads a ShortXLUnicodeString: an 8-bit count, flags, chars.
func xlsString8(d []byte) (string, bool) {
	if len(d) < 2 {
		return "", false
	}
	s, _, ok := xlsChars(d[2:], int(d[0]), d[1]&1 != 0, 2)
	return s, ok
}

// xlsChars decodes n characters: UTF-16LE, or Latin-1 ("compressed").
func xlsChars(d []byte, n int, wide bool, used int) (string, int, bool) {
	if !wide {
		if n > len(d) {
			return "", 0, false
		}
		r := make([]rune, n)
		for i, c := range d[:n] {
			r[i] = rune(c)
		}
		return string(r), used + n, true
	}
	if 2*n > len(d) {
		return "", 0, false
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(d[2*i:])
	}
	return string(utf16.Decode(u)), used + 2*n, true
}

// sstReader reads the shared strings across the SST record and its
// CONTINUE records.
type sstReader struct {
	segs [][]byte
	seg  int
	off  int
}

func (r *sstReader) left() int { return len(r.segs[r.seg]) - r.off }

// next moves to the next segment when the current one is used up.
func (r *sstReader) next() bool {
	for r.seg < len(r.segs) && r.off >= len(r.segs[r.seg]) {
		r.seg++
		r.off = 0
	}
	return r.seg < len(r.segs)
}

func (r *sstReader) bytes(n int) ([]byte, bool) {
	var out []byte
	for n > 0 {
		if !r.next() {
			return nil, false
		}
		k := min(n, r.left())
		out = append(out, r.segs[r.seg][r.off:r.off+k]...)
		r.off += k
		n -= k
	}
	return out, true
}

func (r *sstReader) u16() (int, bool) {
	b, ok := r.bytes(2)
	if !ok {
		return 0, false
	}
	return int(binary.LittleEndian.Uint16(b)), true
}

// xlsSSTStrings reads at most max shared strings.
func xlsSSTStrings(segs [][]byte, max int) []string {
	r := &sstReader{segs: segs}
	if _, ok := r.bytes(8); !ok {
		return nil
	}
	var out []string
	for len(out) < max && r.next() {
		cch, ok := r.u16()
		if !ok {
			break
		}
		fb, ok := r.bytes(1)
		if !ok {
			break
		}
		flags := fb[0]
		runs, ext := 0, 0
		if flags&0x08 != 0 {
			if runs, ok = r.u16(); !ok {
				break
			}
		}
		if flags&0x04 != 0 {
			b, ok := r.bytes(4)
			if !ok {
				break
			}
			ext = int(binary.LittleEndian.Uint32(b))
		}
		str, ok := r.chars(cch, flags&1 != 0)
		if !ok {
			break
		}
		out = append(out, str)
		if _, ok := r.bytes(4*runs + ext); !ok {
			break
		}
	}
	return out
}

// chars reads n characters of a string. Where a CONTINUE record splits
// them, the new record starts with a flags byte of its own (the width may
// change there).
func (r *sstReader) chars(n int, wide bool) (string, bool) {
	var sb strings.Builder
	first := true
	for n > 0 {
		if !r.next() {
			return "", false
		}
		if r.off == 0 && r.seg > 0 && !first {
			wide = r.segs[r.seg][0]&1 != 0
			r.off++
			if !r.next() {
				return "", false
			}
		}
		first = false
		w := 1
		if wide {
			w = 2
		}
		k := min(n, r.left()/w)
		if k == 0 {
			return "", false
		}
		s, _, _ := xlsChars(r.segs[r.seg][r.off:], k, wide, 0)
		sb.WriteString(s)
		r.off += k * w
		n -= k
	}
	return sb.String(), true
}
