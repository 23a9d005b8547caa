package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The lazy reader: pdfcpu 0.15 parses every object of a file eagerly when
// it opens it (objects in object streams excepted), which in the sandbox
// costs more than pre-scanning the pages does. This reader only reads the
// cross-reference sections (tables, streams, hybrids, incremental updates)
// and parses an object when it is first asked for (objparse.go, pdfcpu's
// parser where ours refuses), so that a document costs what its pages use. Files it does not
// handle (encrypted ones, a cross-reference it cannot read) are opened by
// pdfcpu as before; an object whose offset is wrong makes it index the
// file's objects by their headers once, as pdfcpu's repair does.

// Bounds on hostile cross-references.
const (
	maxXrefSections = 1024    // incremental updates followed through /Prev
	maxObjNr        = 8 << 20 // pdfcpu allows 10 million
	// maxEntries bounds the cross-reference entries beyond those a file's
	// size accounts for (entries/4 bytes): a compressed stream of a few
	// bytes can claim millions, each costing the plugin's memory.
	maxEntries      = 1 << 20
	maxObjectBytes  = 64 << 20
	maxResolveDepth = 16 // /Length and object streams resolved while resolving
)

// errLazy marks what the lazy reader refuses; Open falls back to pdfcpu.
var errLazy = errors.New("lazy reader")

// xrefEntry is where an object lives: at off in the file, or as the idx-th
// object of object stream stm.
type xrefEntry struct {
	off        int64
	stm, idx   int
	compressed bool
	free       bool
}

// lazyFile resolves objects on demand. It implements the one method of
// pdfcpu's XRefTable the package uses.
type lazyFile struct {
	r     io.ReaderAt
	size  int64
	xref  map[int]xrefEntry
	root  types.Dict
	cache map[int]types.Object
	stms  map[int]*objStream
	// busy holds the objects being resolved: a /Length or object stream
	// that leads back to its own object is refused, not followed.
	busy     map[int]bool
	depth    int
	repaired bool
	// searched counts the bytes read looking for where something ends
	// (a cross-reference table's trailer, an object without endobj, a
	// stream without a true /Length): bounded by searchBudget, so that a
	// file whose every object lies about its end costs a bounded read.
	searched int64
	// pdfcpuParse parses every object with pdfcpu's parser (the tests
	// compare both parsers on every object of the corpus).
	pdfcpuParse bool
}

// objStream is a decoded object stream: its objects' numbers and offsets.
type objStream struct {
	data  []byte
	first int
	nrs   []int
	offs  []int
}

// openLazy reads the cross-reference of the file and its catalog.
func openLazy(r io.ReaderAt, size int64) (*lazyFile, error) {
	f := &lazyFile{r: r, size: size, xref: map[int]xrefEntry{}, cache: map[int]types.Object{},
		stms: map[int]*objStream{}, busy: map[int]bool{}}
	head, err := f.read(0, 1024)
	if err != nil || !bytes.HasPrefix(head, []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: no %%PDF- header at the start", errLazy)
	}
	trailer, err := f.readXref()
	if err != nil {
		return nil, err
	}
	if trailer["Encrypt"] != nil {
		return nil, fmt.Errorf("%w: encrypted", errLazy)
	}
	root, err := f.Dereference(trailer["Root"])
	if err != nil {
		return nil, fmt.Errorf("%w: catalog: %w", errLazy, err)
	}
	switch v := root.(type) {
	case types.Dict:
		f.root = v
	default:
		return nil, fmt.Errorf("%w: the trailer's /Root is not a dictionary", errLazy)
	}
	return f, nil
}

// errSearchBudget: the file made the reader search past its budget.
var errSearchBudget = errors.New("the file's objects do not say where they end: read past the search budget")

// search accounts for n bytes about to be read in a search, or refuses
// them when the budget is spent.
func (f *lazyFile) search(n int) error {
	if f.searched+int64(n) > 4*f.size+maxObjectBytes {
		return errSearchBudget
	}
	f.searched += int64(n)
	return nil
}

// read returns up to n bytes at off (fewer at the end of the file).
func (f *lazyFile) read(off int64, n int) ([]byte, error) {
	if off < 0 || off >= f.size {
		return nil, fmt.Errorf("offset %d outside the file (%d bytes)", off, f.size)
	}
	n = int(min(int64(n), f.size-off))
	b := make([]byte, n)
	k, err := f.r.ReadAt(b, off)
	if k == n {
		return b, nil
	}
	return b[:k], err
}

// readXref follows the cross-reference sections from startxref back
// through /Prev, newer entries shadowing older ones, and returns the
// newest trailer.
func (f *lazyFile) readXref() (types.Dict, error) {
	tail, err := f.read(max(0, f.size-2048), 2048)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errLazy, err)
	}
	k := bytes.LastIndex(tail, []byte("startxref"))
	if k < 0 {
		return nil, fmt.Errorf("%w: no startxref", errLazy)
	}
	off, ok := leadingInt(tail[k+len("startxref"):])
	if !ok {
		return nil, fmt.Errorf("%w: startxref without an offset", errLazy)
	}
	var newest types.Dict
	seen := map[int64]bool{}
	for n := 0; ; n++ {
		if n >= maxXrefSections {
			return nil, fmt.Errorf("%w: more than %d cross-reference sections", errLazy, maxXrefSections)
		}
		if seen[off] {
			return nil, fmt.Errorf("%w: cross-reference /Prev loops back to offset %d", errLazy, off)
		}
		seen[off] = true
		section := map[int]xrefEntry{}
		trailer, err := f.xrefSection(off, section)
		if err != nil {
			return nil, err
		}
		// A hybrid file's table lists the objects of its object streams
		// as free; its /XRefStm stream says where they are.
		if xs, ok := trailer["XRefStm"].(types.Integer); ok && !seen[int64(xs)] {
			seen[int64(xs)] = true
			if _, err := f.xrefStream(int64(xs), section); err != nil {
				return nil, err
			}
		}
		for nr, e := range section {
			if _, ok := f.xref[nr]; !ok {
				f.xref[nr] = e
			}
		}
		if newest == nil {
			newest = trailer
		}
		prev, ok := trailer["Prev"].(types.Integer)
		if !ok {
			break
		}
		off = int64(prev)
	}
	return newest, nil
}

// leadingInt parses the decimal number after optional white space.
func leadingInt(b []byte) (int64, bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' && j-i < 18 {
		j++
	}
	if j == i {
		return 0, false
	}
	v, err := strconv.ParseInt(string(b[i:j]), 10, 64)
	return v, err == nil
}

// errTooManyEntries: the cross-reference lists more objects than the file
// could hold.
var errTooManyEntries = errors.New("more cross-reference entries than the file can hold")

// add records an entry of one section; within a section an object in use
// wins over a free entry for it (hybrid files list both).
func (f *lazyFile) add(section map[int]xrefEntry, nr int, e xrefEntry) error {
	if nr < 0 || nr > maxObjNr {
		return nil
	}
	if old, ok := section[nr]; ok && !old.free {
		return nil
	}
	if _, ok := section[nr]; !ok && int64(len(section)+len(f.xref)) >= maxEntries+f.size/4 {
		return fmt.Errorf("%w: %w", errLazy, errTooManyEntries)
	}
	section[nr] = e
	return nil
}

// xrefSection reads the table or stream at off into section.
func (f *lazyFile) xrefSection(off int64, section map[int]xrefEntry) (types.Dict, error) {
	b, err := f.read(off, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: cross-reference at %d: %w", errLazy, off, err)
	}
	if bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n\f\x00"), []byte("xref")) {
		return f.xrefTable(off, section)
	}
	return f.xrefStream(off, section)
}

// xrefTable reads a classic table: subsections of "first count" and
// count entries "offset generation n|f", up to its trailer.
func (f *lazyFile) xrefTable(off int64, section map[int]xrefEntry) (types.Dict, error) {
	// Read until the trailer keyword and its dictionary are in the window.
	var buf []byte
	chunk := 64 << 10
	for {
		if serr := f.search(int(min(int64(chunk), f.size-off-int64(len(buf))))); serr != nil {
			return nil, fmt.Errorf("%w: cross-reference table at %d: %w", errLazy, off, serr)
		}
		b, err := f.read(off+int64(len(buf)), chunk)
		if err != nil && len(b) == 0 {
			return nil, fmt.Errorf("%w: cross-reference table at %d: no trailer", errLazy, off)
		}
		buf = append(buf, b...)
		if t := bytes.Index(buf, []byte("trailer")); t >= 0 && bytes.Contains(buf[t:], []byte(">>")) {
			// The dictionary may hold nested ones: read on to startxref
			// or the next section when they are near.
			if bytes.Contains(buf[t:], []byte("startxref")) || off+int64(len(buf)) >= f.size {
				break
			}
		}
		if off+int64(len(buf)) >= f.size {
			break
		}
		chunk = min(chunk*2, 16<<20)
	}
	t := bytes.Index(buf, []byte("trailer"))
	if t < 0 {
		return nil, fmt.Errorf("%w: cross-reference table at %d: no trailer", errLazy, off)
	}
	tok := tableTokens{b: buf[:t]}
	tok.b = bytes.TrimLeft(tok.b, " \t\r\n\f\x00")[len("xref"):]
	for {
		first, ok := tok.int()
		if !ok {
			break
		}
		count, ok := tok.int()
		if !ok || first < 0 || count < 0 || count > len(buf)/16 {
			return nil, fmt.Errorf("%w: cross-reference table at %d: bad subsection %d %d", errLazy, off, first, count)
		}
		for i := range count {
			o, ok1 := tok.int()
			_, ok2 := tok.int()
			kind := tok.word()
			if !ok1 || !ok2 || (kind != "n" && kind != "f") {
				return nil, fmt.Errorf("%w: cross-reference table at %d: bad entry for object %d", errLazy, off, first+i)
			}
			var err error
			switch {
			case kind == "f":
				err = f.add(section, first+i, xrefEntry{free: true})
			case o > 0:
				err = f.add(section, first+i, xrefEntry{off: int64(o)})
			}
			if err != nil {
				return nil, err
			}
		}
	}
	o, _, err := f.parse(buf[t+len("trailer"):])
	d, ok := o.(types.Dict)
	if err != nil || !ok {
		return nil, fmt.Errorf("%w: cross-reference table at %d: trailer: %v", errLazy, off, err)
	}
	return d, nil
}

// tableTokens splits a cross-reference table into its words.
type tableTokens struct{ b []byte }

func (t *tableTokens) word() string {
	i := 0
	for i < len(t.b) && isSpace(t.b[i]) {
		i++
	}
	j := i
	for j < len(t.b) && !isSpace(t.b[j]) {
		j++
	}
	w := string(t.b[i:j])
	t.b = t.b[j:]
	return w
}

func (t *tableTokens) int() (int, bool) {
	i := 0
	for i < len(t.b) && isSpace(t.b[i]) {
		i++
	}
	v, j := 0, i
	for j < len(t.b) && t.b[j] >= '0' && t.b[j] <= '9' && j-i < 12 {
		v = v*10 + int(t.b[j]-'0')
		j++
	}
	if j == i {
		return 0, false
	}
	t.b = t.b[j:]
	return v, true
}

// xrefStream reads a cross-reference stream (PDF 1.5) into section.
func (f *lazyFile) xrefStream(off int64, section map[int]xrefEntry) (types.Dict, error) {
	o, err := f.parseAt(off, -1)
	if err != nil {
		return nil, fmt.Errorf("%w: cross-reference stream at %d: %w", errLazy, off, err)
	}
	sd, ok := o.(types.StreamDict)
	if !ok || f.name(sd.Dict["Type"]) != "XRef" {
		return nil, fmt.Errorf("%w: no cross-reference table or stream at %d", errLazy, off)
	}
	if err := f.load(&sd); err != nil {
		return nil, fmt.Errorf("%w: cross-reference stream at %d: %w", errLazy, off, err)
	}
	if err := sd.DecodeWithLimit(maxDecoded); err != nil {
		return nil, fmt.Errorf("%w: cross-reference stream at %d: %w", errLazy, off, err)
	}
	var w [3]int
	wa, _ := sd.Dict["W"].(types.Array)
	if len(wa) != 3 {
		return nil, fmt.Errorf("%w: cross-reference stream at %d: /W is not three widths", errLazy, off)
	}
	for i := range w {
		v, ok := wa[i].(types.Integer)
		if !ok || v < 0 || v > 8 {
			return nil, fmt.Errorf("%w: cross-reference stream at %d: bad /W", errLazy, off)
		}
		w[i] = int(v)
	}
	width := w[0] + w[1] + w[2]
	if width == 0 {
		return nil, fmt.Errorf("%w: cross-reference stream at %d: bad /W", errLazy, off)
	}
	sizeObj, _ := sd.Dict["Size"].(types.Integer)
	index := []int{0, int(sizeObj)}
	if ia, ok := sd.Dict["Index"].(types.Array); ok {
		index = index[:0]
		for _, v := range ia {
			n, ok := v.(types.Integer)
			if !ok {
				return nil, fmt.Errorf("%w: cross-reference stream at %d: bad /Index", errLazy, off)
			}
			index = append(index, int(n))
		}
	}
	data := sd.Content
	field := func(b []byte) int64 {
		var v int64
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return v
	}
	for i := 0; i+1 < len(index); i += 2 {
		first, count := index[i], index[i+1]
		if first < 0 || count < 0 || count > len(data)/width+1 {
			return nil, fmt.Errorf("%w: cross-reference stream at %d: bad /Index", errLazy, off)
		}
		for k := range count {
			if len(data) < width {
				break // a short stream: what it holds is kept
			}
			e := data[:width]
			data = data[width:]
			typ := int64(1)
			if w[0] > 0 {
				typ = field(e[:w[0]])
			}
			f2, f3 := field(e[w[0]:w[0]+w[1]]), field(e[w[0]+w[1]:])
			var err error
			switch typ {
			case 0:
				err = f.add(section, first+k, xrefEntry{free: true})
			case 1:
				if f2 > 0 {
					err = f.add(section, first+k, xrefEntry{off: f2})
				}
			case 2:
				err = f.add(section, first+k, xrefEntry{compressed: true, stm: int(f2), idx: int(f3)})
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return sd.Dict, nil
}

// Dereference resolves an indirect reference, as pdfcpu's XRefTable does:
// a reference to a missing or free object is null.
func (f *lazyFile) Dereference(o types.Object) (types.Object, error) {
	ir, ok := o.(types.IndirectRef)
	if !ok {
		return o, nil
	}
	nr := ir.ObjectNumber.Value()
	if v, ok := f.cache[nr]; ok {
		return v, nil
	}
	if f.busy[nr] || f.depth >= maxResolveDepth {
		return nil, fmt.Errorf("object %d: refers back to itself while it is read", nr)
	}
	f.busy[nr] = true
	f.depth++
	defer func() { delete(f.busy, nr); f.depth-- }()
	v, err := f.resolve(nr)
	if err != nil {
		return nil, err
	}
	f.cache[nr] = v
	return v, nil
}

func (f *lazyFile) resolve(nr int) (types.Object, error) {
	e, ok := f.xref[nr]
	if !ok || e.free {
		return nil, nil
	}
	if e.compressed {
		return f.fromStream(nr, e)
	}
	v, err := f.parseAt(e.off, nr)
	if errors.Is(err, errBadOffset) && !f.repaired {
		// The table is wrong: index the objects by their headers.
		if rerr := f.repair(); rerr != nil {
			return nil, fmt.Errorf("%w (repair: %w)", err, rerr)
		}
		if e, ok = f.xref[nr]; !ok || e.free || e.compressed {
			return f.resolve(nr)
		}
		v, err = f.parseAt(e.off, nr)
	}
	return v, err
}

var errBadOffset = errors.New("no such object at its cross-reference offset")

// repair indexes the file's objects by their "N G obj" headers (the last
// of a number wins, as in an incremental update) and takes them over the
// table's offsets; objects in object streams stay where the table says.
func (f *lazyFile) repair() error {
	f.repaired = true
	if f.size > maxRepairInput {
		return fmt.Errorf("file of %d bytes too large to index", f.size)
	}
	data, err := f.read(0, int(f.size))
	if err != nil {
		return err
	}
	eachObjectHeader(data, maxObjNr, func(nr, _, start, _ int) {
		f.xref[nr] = xrefEntry{off: int64(start)}
	})
	return nil
}

// parseAt parses the object whose header is at off; want is its number,
// or -1 for any.
func (f *lazyFile) parseAt(off int64, want int) (types.Object, error) {
	n := 512
	for {
		if n > 512 && off < f.size {
			// A window grown past the first: the object is long, or
			// does not end.
			if err := f.search(int(min(int64(n), f.size-off))); err != nil {
				return nil, fmt.Errorf("object %d at %d: %w", want, off, err)
			}
		}
		buf, err := f.read(off, n)
		if err != nil {
			return nil, fmt.Errorf("object %d at %d: %w", want, off, errBadOffset)
		}
		atEnd := off+int64(len(buf)) >= f.size
		body, ok := objectBody(buf, want)
		if !ok {
			return nil, fmt.Errorf("object %d at %d: %w", want, off, errBadOffset)
		}
		// A window that ends inside the object fails to parse: pdfcpu's
		// parser is only worth trying on a complete one.
		complete := atEnd || n >= maxObjectBytes || bytes.Contains(body, []byte("endobj")) || bytes.Contains(body, []byte("stream"))
		var o types.Object
		var k int
		var perr error
		if f.pdfcpuParse {
			o, k, perr = pdfcpuParse(body)
		} else if o, k, perr = parseObject(body); perr != nil && complete {
			o, k, perr = pdfcpuParse(body)
		}
		after := body[k:]
		rest := bytes.TrimLeft(after, " \t\r\n\f\x00")
		if perr == nil && (len(rest) > 0 || atEnd) {
			// Complete: something follows the object in the window.
			if !bytes.HasPrefix(rest, []byte("stream")) {
				return o, nil
			}
			d, ok := o.(types.Dict)
			if !ok {
				return nil, fmt.Errorf("object %d at %d: a stream without a dictionary", want, off)
			}
			start := off + int64(len(buf)-len(rest)+len("stream"))
			return f.stream(d, start)
		}
		if atEnd || n >= maxObjectBytes {
			if perr == nil {
				return o, nil
			}
			return nil, fmt.Errorf("object %d at %d: %w", want, off, perr)
		}
		n *= 4
	}
}

// parse is parseAny, or pdfcpu's parser alone when pdfcpuParse is set.
func (f *lazyFile) parse(b []byte) (types.Object, int, error) {
	if f.pdfcpuParse {
		return pdfcpuParse(b)
	}
	return parseAny(b)
}

// objectBody checks buf starts (after white space) with "want G obj" and
// returns what follows the header.
func objectBody(buf []byte, want int) ([]byte, bool) {
	b := bytes.TrimLeft(buf, " \t\r\n\f\x00")
	t := tableTokens{b: b}
	nr, ok1 := t.int()
	_, ok2 := t.int()
	rest := bytes.TrimLeft(t.b, " \t\r\n\f\x00")
	if !ok1 || !ok2 || !bytes.HasPrefix(rest, []byte("obj")) || (want >= 0 && nr != want) {
		return nil, false
	}
	return rest[3:], true
}

// stream reads a stream's data from start (just after the stream keyword)
// with its dictionary's /Length, or up to endstream when the length is
// wrong, as pdfcpu does.
func (f *lazyFile) stream(d types.Dict, start int64) (types.Object, error) {
	// The keyword ends with CRLF or LF (a lone CR in sloppy files).
	if b, _ := f.read(start, 2); len(b) > 0 {
		switch {
		case bytes.HasPrefix(b, []byte("\r\n")):
			start += 2
		case b[0] == '\n' || b[0] == '\r':
			start++
		}
	}
	length := int64(-1)
	switch v := d["Length"].(type) {
	case types.Integer:
		length = int64(v)
	case types.IndirectRef:
		if o, err := f.Dereference(v); err == nil {
			if n, ok := o.(types.Integer); ok {
				length = int64(n)
			}
		}
	}
	if length < 0 || length > f.size-start || !f.endsAt(start+length) {
		n, err := f.findEndstream(start)
		if err != nil {
			return nil, fmt.Errorf("stream at %d: %w", start, err)
		}
		length = n
	}
	fp, err := filterPipeline(f, d)
	if err != nil {
		return nil, err
	}
	// The data is read when decoded (see load): a page's image is
	// looked at for its dictionary alone.
	sd := types.NewStreamDict(d, start, &length, nil, fp)
	return sd, nil
}

// load reads a stream's encoded data, which stream left in the file: the
// cached dictionary keeps none, so that what a document holds in memory is
// its dictionaries, not its content.
func (f *lazyFile) load(sd *types.StreamDict) error {
	if sd.Raw != nil || sd.StreamLength == nil || *sd.StreamLength <= 0 {
		return nil
	}
	raw, err := f.read(sd.StreamOffset, int(*sd.StreamLength))
	if err != nil {
		return fmt.Errorf("stream at %d: %w", sd.StreamOffset, err)
	}
	sd.Raw = raw
	return nil
}

// endsAt tells whether endstream follows at off (after white space).
func (f *lazyFile) endsAt(off int64) bool {
	b, _ := f.read(off, 32)
	return bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n\f\x00"), []byte("endstream"))
}

// findEndstream returns the length of the stream data starting at start,
// up to its endstream keyword (without the end of line before it), or to
// the end of the file.
func (f *lazyFile) findEndstream(start int64) (int64, error) {
	const chunk = 1 << 20
	for at := start; at < f.size && at-start < maxObjectBytes; at += chunk - 16 {
		if err := f.search(int(min(chunk, f.size-at))); err != nil {
			return 0, err
		}
		b, _ := f.read(at, chunk)
		if k := bytes.Index(b, []byte("endstream")); k >= 0 {
			end := at + int64(k)
			if c, _ := f.read(max(start, end-2), int(end-max(start, end-2))); len(c) > 0 {
				// Drop the end of line before the keyword: LF, CRLF or CR.
				if c[len(c)-1] == '\n' {
					end--
					c = c[:len(c)-1]
				}
				if len(c) > 0 && c[len(c)-1] == '\r' {
					end--
				}
			}
			return end - start, nil
		}
	}
	return min(f.size-start, maxObjectBytes), nil
}

// filterPipeline is the stream's filters with their parameters.
func filterPipeline(f *lazyFile, d types.Dict) ([]types.PDFFilter, error) {
	filter, _ := f.Dereference(d["Filter"])
	parms, _ := f.Dereference(d["DecodeParms"])
	var names []types.Object
	switch v := filter.(type) {
	case nil:
		return nil, nil
	case types.Name:
		names = []types.Object{v}
		parms = types.Array{parms}
	case types.Array:
		names = v
	default:
		return nil, fmt.Errorf("stream /Filter is %T", filter)
	}
	pa, _ := parms.(types.Array)
	var fp []types.PDFFilter
	for i, n := range names {
		n, _ = f.Dereference(n)
		name, ok := n.(types.Name)
		if !ok {
			return nil, fmt.Errorf("stream /Filter holds %T", n)
		}
		var dp types.Dict
		if i < len(pa) {
			p, _ := f.Dereference(pa[i])
			dp, _ = p.(types.Dict)
		}
		fp = append(fp, types.PDFFilter{Name: string(name), DecodeParms: dp})
	}
	return fp, nil
}

func (f *lazyFile) name(o types.Object) string {
	n, _ := o.(types.Name)
	return string(n)
}

// fromStream parses object nr out of its object stream.
func (f *lazyFile) fromStream(nr int, e xrefEntry) (types.Object, error) {
	os, err := f.objStream(e.stm)
	if err != nil {
		return nil, fmt.Errorf("object %d in object stream %d: %w", nr, e.stm, err)
	}
	i := e.idx
	if i < 0 || i >= len(os.nrs) || os.nrs[i] != nr {
		i = -1
		for k, n := range os.nrs {
			if n == nr {
				i = k
				break
			}
		}
		if i < 0 {
			return nil, nil
		}
	}
	start, end := os.first+os.offs[i], len(os.data)
	if i+1 < len(os.offs) {
		end = os.first + os.offs[i+1]
	}
	if start < 0 || start > end || end > len(os.data) {
		return nil, fmt.Errorf("object %d in object stream %d: offset out of range", nr, e.stm)
	}
	o, _, err := f.parse(os.data[start:end])
	if err != nil {
		return nil, fmt.Errorf("object %d in object stream %d: %w", nr, e.stm, err)
	}
	return o, nil
}

func (f *lazyFile) objStream(nr int) (*objStream, error) {
	if os, ok := f.stms[nr]; ok {
		return os, nil
	}
	if e := f.xref[nr]; e.compressed {
		return nil, errors.New("an object stream inside an object stream")
	}
	o, err := f.Dereference(types.IndirectRef{ObjectNumber: types.Integer(nr)})
	if err != nil {
		return nil, err
	}
	sd, ok := o.(types.StreamDict)
	if !ok {
		return nil, errors.New("not a stream")
	}
	if err := f.load(&sd); err != nil {
		return nil, err
	}
	if err := sd.DecodeWithLimit(maxDecoded); err != nil {
		return nil, err
	}
	n, _ := sd.Dict["N"].(types.Integer)
	first, _ := sd.Dict["First"].(types.Integer)
	if n < 0 || first < 0 || int(first) > len(sd.Content) || int(n) > len(sd.Content) {
		return nil, fmt.Errorf("bad /N %d or /First %d", n, first)
	}
	os := &objStream{data: sd.Content, first: int(first)}
	tok := tableTokens{b: sd.Content[:first]}
	for range int(n) {
		objNr, ok1 := tok.int()
		off, ok2 := tok.int()
		if !ok1 || !ok2 {
			break
		}
		if len(os.offs) > 0 && off < os.offs[len(os.offs)-1] {
			return nil, errors.New("offsets out of order")
		}
		os.nrs, os.offs = append(os.nrs, objNr), append(os.offs, off)
	}
	f.stms[nr] = os
	return os, nil
}
