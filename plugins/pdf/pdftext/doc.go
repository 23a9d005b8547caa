// Package pdftext is the text layer of PDF documents and their pre-scan, in
// pure Go, so that it compiles into the sandboxed PDF extractor plugin
// (GOOS=wasip1): no cgo, no processes, no goroutines, no file paths.
//
// The lazy reader reads the file's objects as they are asked for (lazy.go,
// objparse.go); pdfcpu opens what it refuses (encrypted files, broken
// cross-references) and decodes streams. Everything about text is ours, one
// concept a file:
//
//	lazy.go        the lazy reader: cross-reference sections, objects on
//	               demand, object streams, repair by object headers
//	objparse.go    PDF objects into pdfcpu's types, strictly
//
//	lexer.go       the tokenizer of content streams and CMaps
//	interp.go      the content-stream interpreter: graphics and text state,
//	               form XObjects, marked content; places every glyph in
//	               device space
//	font.go        simple and Type0 fonts: codes, text, widths
//	fontfile.go    built-in encodings of embedded Type 1 programs
//	cff.go         built-in encodings of embedded CFF programs
//	cmap.go        ToUnicode and encoding CMaps
//	encodings.go   the standard base encodings
//	texenc.go      TeX font encodings, for fonts whose glyph names only
//	               number them (pdfTeX's bitmap fonts)
//	glyphnames.go  glyph names to Unicode
//	aglist.go      the Adobe Glyph List (generated from internal/gen/glyphlist.txt)
//	uninames.go    Unicode names of Thai and Lao, which Thai fonts name
//	               glyphs by (generated from golang.org/x/text's runenames)
//	stdmetrics.go  widths of the standard 14 fonts (generated from Adobe's AFM files, internal/gen/afm)
//	layout.go      glyphs to words, lines, columns and reading order
//	bidi.go        right-to-left lines from visual to logical order
//	outline.go     the outline (bookmarks) and named destinations
//	forms.go       filled form fields (AcroForm, XFA data) with their labels
//	prescan.go     the page map, headings and sections of a whole document
//	repair.go      a rebuilt cross-reference table for truncated files
//
// The text of a page is comparable to pdftotext -layout's (the corpus tests
// measure how close, see corpus_test.go), except that pages set in columns
// are read column by column.
//
// A Document is not safe for concurrent use: it caches parsed fonts.
// Hostile input costs an error, never a panic: every exported method
// recovers from panics inside pdfcpu or this package and returns them as
// errors wrapping ErrMalformed; loops and nesting are bounded (operators
// per page, form and page-tree depth, CMap entries, outline items).
package pdftext

//go:generate go run ./internal/gen

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"errors"
	"fmt"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Errors a caller can tell apart with errors.Is.
var (
	// ErrMalformed: the file is not a PDF we can read (no header, no
	// objects, no page tree), or parsing failed on the way.
	ErrMalformed = errors.New("malformed PDF")
	// ErrEncrypted: the file is encrypted and the empty user password does
	// not open it.
	ErrEncrypted = errors.New("encrypted PDF needs a password")
	// ErrWrongPassword: the password given does not open the file (it is
	// neither its user nor its owner password).
	ErrWrongPassword = errors.New("the password does not open this PDF")
	// ErrPageRange: a page number outside 1..PageCount.
	ErrPageRange = errors.New("page number out of range")
)

// maxDecoded bounds what one stream may inflate to (pdfcpu allows 512 MiB):
// content streams, CMaps and font programs are far smaller, and a
// decompression bomb should cost an error, not the plugin's memory.
const maxDecoded = 64 << 20

// maxTreeDepth bounds recursion through page trees, outlines and nested form
// XObjects; real documents stay far below it, hostile ones loop.
const maxTreeDepth = 64

// Document is an opened PDF: its objects (read on demand, or pdfcpu's
// parsed ones) plus our page list and font cache.
type Document struct {
	xref objects
	// root is the catalog.
	root  types.Dict
	pages []page
	// pageByObj maps a page object's number to its 1-based page number, so
	// outline destinations resolve without walking the page tree each time.
	pageByObj map[int]int
	// fonts caches parsed fonts by the object number of their dictionary:
	// pages share fonts, and a ToUnicode CMap is worth parsing once.
	fonts    map[int]*font
	fallback *font
	// counters caches the sketch's counters by font object (sketch.go).
	counters map[int]counter

	outline     []OutlineItem
	outlineFlat []flatItem
	outlineDone bool
	repaired    bool

	// Buffers reused from page to page: a page's glyphs live until the
	// next page is interpreted, and one zlib reader (its window and
	// tables) serves every Flate stream. In the sandbox every allocation
	// feeds a garbage collector that runs on the only thread.
	glyphBuf []glyph
	zr       io.ReadCloser
	// sketchBuf holds the page content the sketch reads, page after page.
	sketchBuf []byte
}

// objects resolves indirect references: the lazy reader (lazy.go) or
// pdfcpu's XRefTable.
type objects interface {
	Dereference(o types.Object) (types.Object, error)
}

// page is one leaf of the page tree with its inherited attributes resolved.
type page struct {
	dict      types.Dict
	resources types.Dict
	media     box
	crop      box
	rotate    int
}

// box is a rectangle in default user space: llx, lly, urx, ury.
type box [4]float64

func (b box) width() float64  { return b[2] - b[0] }
func (b box) height() float64 { return b[3] - b[1] }

// Open reads a PDF from r: its cross-reference and page tree; other objects
// are parsed when first asked for and stream data is read when decoded
// (the lazy reader), so a caller pays for the pages it reads. A file the
// lazy reader refuses (encrypted, a cross-reference it cannot follow) is
// parsed whole by pdfcpu instead, in time and memory linear in its size.
// Page text is extracted later, on demand. Encrypted files open when the empty user
// password decrypts them; otherwise the error wraps ErrEncrypted. A file
// whose end is lost (truncated) is opened from its complete objects when
// they include the catalog and pages (see Repaired). Files that cannot be
// read give an error wrapping ErrMalformed.
func Open(r io.ReadSeeker) (d *Document, err error) {
	return OpenWithPassword(r, "")
}

// OpenWithPassword is Open for an encrypted file with its password (user
// or owner; RC4, AES-128 and AES-256 as pdfcpu decrypts them). A password
// that does not open it gives an error wrapping ErrWrongPassword; an empty
// one is Open.
func OpenWithPassword(r io.ReadSeeker, password string) (d *Document, err error) {
	defer recoverTo(&err, "open")
	if r == nil {
		return nil, fmt.Errorf("pdftext: open: no input: %w", ErrMalformed)
	}
	// pdfcpu otherwise looks for (and creates) a configuration directory
	// under the user's home, which a sandbox does not have.
	api.DisableConfigDir()
	if d, err := openObjects(r); err == nil {
		return d, nil
	}
	d, err = openContext(r, password)
	if err == nil || errors.Is(err, ErrEncrypted) || errors.Is(err, ErrWrongPassword) {
		return d, err
	}
	// A second chance with a rebuilt cross-reference table. Its own
	// failure would only hide the first, more telling, error.
	if _, serr := r.Seek(0, io.SeekStart); serr != nil {
		return nil, err
	}
	data, rerr := io.ReadAll(io.LimitReader(r, maxRepairInput+1))
	if rerr != nil {
		return nil, err
	}
	fixed, ok := rebuildXref(data)
	if !ok {
		return nil, err
	}
	d2, err2 := openContext(bytes.NewReader(fixed), password)
	if err2 != nil {
		return nil, err
	}
	d2.repaired = true
	return d2, nil
}

// openObjects opens the file with the lazy reader, which reads only the
// objects asked for; it gives an error (and Open falls back to pdfcpu's
// reader) for what it does not handle: encryption, an unreadable
// cross-reference, a catalog without pages.
func openObjects(r io.ReadSeeker) (d *Document, err error) {
	defer recoverTo(&err, "open")
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	ra, ok := r.(io.ReaderAt)
	if !ok {
		ra = &seekReaderAt{r}
	}
	f, err := openLazy(ra, size)
	if err != nil {
		return nil, err
	}
	d = &Document{xref: f, root: f.root, pageByObj: map[int]int{}, fonts: map[int]*font{}}
	if err := d.collectPages(); err != nil {
		return nil, fmt.Errorf("%w: %w", errLazy, err)
	}
	return d, nil
}

// seekReaderAt reads at an offset through Seek and Read.
type seekReaderAt struct{ r io.ReadSeeker }

func (s *seekReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if _, err := s.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(s.r, p)
}

func openContext(r io.ReadSeeker, password string) (d *Document, err error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("pdftext: open: %w", err)
	}
	defer recoverTo(&err, "open")
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.UserPW, conf.OwnerPW = password, password
	ctx, err := api.ReadContext(r, conf)
	if err != nil {
		if errors.Is(err, pdfcpu.ErrWrongPassword) && password != "" {
			return nil, fmt.Errorf("pdftext: open: %w", ErrWrongPassword)
		}
		if errors.Is(err, pdfcpu.ErrWrongPassword) {
			return nil, fmt.Errorf("pdftext: open: %w: %w", ErrEncrypted, err)
		}
		return nil, fmt.Errorf("pdftext: open: %w: %w", ErrMalformed, err)
	}
	d = &Document{xref: ctx.XRefTable, root: ctx.XRefTable.RootDict, pageByObj: map[int]int{}, fonts: map[int]*font{}}
	if d.root == nil {
		cat, err := ctx.XRefTable.Catalog()
		if err != nil {
			return nil, fmt.Errorf("pdftext: open: %w: catalog: %w", ErrMalformed, err)
		}
		d.root = cat
	}
	if err := d.collectPages(); err != nil {
		return nil, fmt.Errorf("pdftext: open: %w: %w", ErrMalformed, err)
	}
	return d, nil
}

// Repaired reports whether Open had to rebuild the file's cross-reference
// table from its objects (a truncated file): pages after the cut are
// missing and the text is what survived.
func (d *Document) Repaired() bool { return d.repaired }

// PageCount returns the number of pages in the page tree (leaves that are
// page dictionaries). It costs nothing: the tree was walked by Open.
func (d *Document) PageCount() int { return len(d.pages) }

// PageText returns the text of page n (1-based) as lines in reading order,
// words separated by spaces, with extra spaces where the page has wide gaps
// (as pdftotext -layout does), and lines separated by "\n". Pages set in
// columns are read column by column (between full-width lines), where
// pdftotext -layout would print the columns side by side. Only that page's
// content streams (and the form XObjects and fonts they use) are decoded
// and interpreted; fonts stay cached for later pages. A page without a text
// layer gives "" and no error.
func (d *Document) PageText(n int) (text string, err error) {
	pc, err := d.Page(n)
	return pc.Text, err
}

// PageContent is a page's text and how much of it could be read.
type PageContent struct {
	Text string
	// Status is TextUnreadable or TextPartial when glyphs were shown whose
	// text is unknown; Glyphs counts the glyphs shown (white space
	// excluded), Unmapped those without text.
	Status           TextStatus
	Glyphs, Unmapped int
	// Images counts the images the page paints.
	Images int
	// Lost says why content of the page could not be read (a content
	// stream or form that does not decode): Status is then TextPartial, or
	// TextUnreadable when nothing of it could be read.
	Lost string
}

// TextStatus says whether a page's text could be read whole.
type TextStatus string

// The text statuses: a page is unreadable when at least half of its glyphs
// have no known text (a font without a Unicode mapping, whose glyphs are
// only pictures), partial when at least a tenth (and five) of them have
// none.
const (
	TextComplete   TextStatus = ""
	TextPartial    TextStatus = "partial"
	TextUnreadable TextStatus = "unreadable"
	// TextImageOnly: the page's text layer is empty or negligible (fewer
	// than negligibleGlyphs glyphs) while it paints images: a scan or a
	// photo of text, whose words only OCR can read.
	TextImageOnly TextStatus = "imageOnly"
	// TextVectorOnly: the page's text layer is empty or negligible while
	// it draws many vector paths and no image: text converted to
	// outlines (curves), or a drawing. Its words, if any, are shapes that
	// neither the text layer nor the images OCR reads hold.
	TextVectorOnly TextStatus = "vectorOnly"
)

// vectorSegments: a page drawing at least this many path segments besides
// a negligible text layer and no image is vector only. A page of text in
// outlines draws tens of segments a glyph (the test page: 400 glyphs,
// over 14,000); a chart or a page's rules and frame draw fewer.
const vectorSegments = 2000

// negligibleGlyphs: a page showing fewer glyphs than this besides images
// is image only; a scan with a stamped page number ("Page 3 of 10") still
// is, a page with a caption under a figure is not.
const negligibleGlyphs = 16

// withImages turns a complete status into TextImageOnly when the page's
// text is negligible and it paints images, into TextVectorOnly when it
// paints none but draws many path segments. A page whose content could
// not be read, or whose glyphs cannot be, keeps that status: it says more.
func withImages(s TextStatus, glyphs, images, segments int) TextStatus {
	switch {
	case s != TextComplete || glyphs >= negligibleGlyphs:
		return s
	case images > 0:
		return TextImageOnly
	case segments >= vectorSegments:
		return TextVectorOnly
	}
	return s
}

func textStatus(glyphs, unmapped int) TextStatus {
	switch {
	case unmapped > 0 && 2*unmapped >= glyphs:
		return TextUnreadable
	case unmapped >= 5 && 10*unmapped >= glyphs:
		return TextPartial
	}
	return TextComplete
}

// contentStatus is textStatus for a page of which some content could not
// be read (lost): partial at best, unreadable when it showed no glyph.
func contentStatus(glyphs, unmapped int, lost error) TextStatus {
	s := textStatus(glyphs, unmapped)
	switch {
	case lost == nil:
		return s
	case glyphs == 0:
		return TextUnreadable
	case s == TextComplete:
		return TextPartial
	}
	return s
}

// Page is PageText with the page's text status: a page whose glyphs
// cannot be read is reported as such, not as a page without text. A page
// whose content cannot be read at all gives the error, and pc says so
// too (TextUnreadable, Lost).
func (d *Document) Page(n int) (pc PageContent, err error) {
	defer func() {
		if err != nil && !errors.Is(err, ErrPageRange) {
			pc = PageContent{Status: TextUnreadable, Lost: err.Error()}
		}
	}()
	defer recoverTo(&err, fmt.Sprintf("page %d", n))
	var st pageStats
	glyphs, _, err := d.pageGlyphs(n, &st)
	if err != nil {
		return PageContent{}, err
	}
	pc = PageContent{Text: layoutText(glyphs, true), Status: withImages(contentStatus(st.shown, st.unmapped, st.lost), st.shown, st.images, st.segments),
		Glyphs: st.shown, Unmapped: st.unmapped, Images: st.images}
	if st.lost != nil {
		pc.Lost = st.lost.Error()
	}
	return pc, nil
}

// pageGlyphs interprets page n and returns its glyphs in device space. When
// st is not nil it also counts what the pre-scan wants to know. The glyphs
// are valid until the next call.
func (d *Document) pageGlyphs(n int, st *pageStats) ([]glyph, *page, error) {
	if n < 1 || n > len(d.pages) {
		return nil, nil, fmt.Errorf("pdftext: page %d of %d: %w", n, len(d.pages), ErrPageRange)
	}
	p := &d.pages[n-1]
	content, lost, err := d.pageContent(p, nil)
	if err != nil {
		return nil, p, fmt.Errorf("pdftext: page %d: %w", n, err)
	}
	st.lose(lost)
	in := newInterp(d, p, st)
	in.glyphs = d.glyphBuf[:0]
	base := in.gs
	in.run(content, p.resources, 0)
	in.annotations(p, base)
	d.glyphBuf = in.shown()
	return d.glyphBuf, p, nil
}

// pageContent decodes and concatenates the page's content streams. A stream
// that fails to decode is skipped rather than failing the page: the other
// streams usually still carry the text; the first such failure is returned
// as lost, so that the page is reported incomplete rather than whole. A
// page none of whose content could be read fails. With buf (not nil) the
// content is inflated into it where it can be, for a caller that keeps
// nothing of the content past the next page.
func (d *Document) pageContent(p *page, buf []byte) (content []byte, lost, err error) {
	o, err := d.xref.Dereference(p.dict["Contents"])
	if err != nil {
		// A missing object is null (no content); one that is there and
		// cannot be read is not.
		return nil, nil, fmt.Errorf("%w: its content stream cannot be read: %v", ErrMalformed, err)
	}
	switch o := o.(type) {
	case types.StreamDict:
		var b []byte
		if buf != nil && o.Content == nil && isPlainFlate(o) {
			if err = d.load(&o); err == nil {
				b, err = d.inflateTo(buf[:0], o.Raw)
			}
		} else {
			b, err = d.streamData(o)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("its content stream cannot be read: %w", err)
		}
		return b, nil, nil
	case types.Array:
		all := buf[:0]
		for _, e := range o {
			el, err := d.xref.Dereference(e)
			if err != nil {
				lost = cmp.Or(lost, fmt.Errorf("a content stream cannot be read: %w", err))
				continue
			}
			sd, ok := el.(types.StreamDict)
			if !ok {
				continue
			}
			b, err := d.streamData(sd)
			if err != nil {
				lost = cmp.Or(lost, fmt.Errorf("a content stream cannot be read: %w", err))
				continue
			}
			all = append(all, b...)
			// Content streams may split anywhere between tokens, so a
			// separator keeps the last token of one from joining the next.
			all = append(all, '\n')
		}
		if len(all) == 0 && lost != nil {
			return nil, nil, lost
		}
		return all, lost, nil
	}
	return nil, nil, nil
}

// streamData decodes a stream's filters. pdfcpu keeps the decoded bytes on
// our copy of the stream dict only, so nothing is cached across calls: a
// page's streams are decoded each time the page is asked for.
func (d *Document) streamData(sd types.StreamDict) ([]byte, error) {
	if sd.Content != nil {
		return sd.Content, nil
	}
	if err := d.load(&sd); err != nil {
		return nil, err
	}
	if isPlainFlate(sd) {
		return d.inflate(sd.Raw)
	}
	if err := sd.DecodeWithLimit(maxDecoded); err != nil {
		return nil, fmt.Errorf("decode stream: %w", err)
	}
	return sd.Content, nil
}

// load reads a stream's encoded data when the lazy reader left it in the
// file; pdfcpu's streams hold theirs.
func (d *Document) load(sd *types.StreamDict) error {
	if f, ok := d.xref.(*lazyFile); ok {
		return f.load(sd)
	}
	return nil
}

// inflate decodes a Flate stream without predictor, the common case of
// content streams, with the document's one zlib reader and an output sized
// for text's usual ratio. It treats damage as pdfcpu's Flate filter does:
// a truncated stream keeps what inflated, a bad checksum fails, and so
// does output over maxDecoded.
func (d *Document) inflate(raw []byte) ([]byte, error) {
	return d.inflateTo(make([]byte, 0, min(4*len(raw)+bytes.MinRead, maxDecoded+1)), raw)
}

// isPlainFlate: the stream's one filter is Flate, without predictor.
func isPlainFlate(sd types.StreamDict) bool {
	return len(sd.FilterPipeline) == 1 && sd.FilterPipeline[0].Name == filter.Flate && sd.FilterPipeline[0].DecodeParms == nil
}

// inflateTo is inflate into dst's spare capacity (grown as needed).
func (d *Document) inflateTo(dst, raw []byte) ([]byte, error) {
	src := bytes.NewReader(raw)
	if d.zr == nil {
		zr, err := zlib.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("decode stream: %w", err)
		}
		d.zr = zr
	} else if err := d.zr.(zlib.Resetter).Reset(src, nil); err != nil {
		return nil, fmt.Errorf("decode stream: %w", err)
	}
	buf := bytes.NewBuffer(dst[:0])
	_, err := buf.ReadFrom(&io.LimitedReader{R: d.zr, N: maxDecoded + 1})
	switch {
	case buf.Len() > maxDecoded:
		return nil, fmt.Errorf("decode stream: %w", filter.ErrDecodeLimitExceeded)
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("decode stream: %w", err)
	}
	return buf.Bytes(), nil
}

// xobjectRef is an XObject resource resolved: its stream and what it is.
type xobjectRef struct {
	sd          types.StreamDict
	image, form bool
	objNr       int // -1 for a direct object
}

// xobject resolves the XObject resource name of res; a name that is not
// an image or form stream resolves to neither.
func (d *Document) xobject(res types.Dict, name string) xobjectRef {
	ref := d.dict(res["XObject"])[name]
	x := xobjectRef{objNr: -1}
	sd, ok := d.deref(ref).(types.StreamDict)
	if !ok {
		return x
	}
	x.sd = sd
	switch d.name(sd.Dict["Subtype"]) {
	case "Image":
		x.image = true
	case "Form":
		x.form = true
	}
	if ir, ok := ref.(types.IndirectRef); ok {
		x.objNr = ir.ObjectNumber.Value()
	}
	return x
}

// formContent is a form XObject's decoded content and the resources it
// runs with: its own, or in old files the caller's (res).
func (d *Document) formContent(sd types.StreamDict, res types.Dict) ([]byte, types.Dict, error) {
	data, err := d.streamData(sd)
	if err != nil {
		return nil, nil, err
	}
	if own := d.dict(sd.Dict["Resources"]); own != nil {
		res = own
	}
	return data, res, nil
}

// deref resolves an indirect reference, treating failures as null, which is
// what the PDF specification asks of references to missing objects.
func (d *Document) deref(o types.Object) types.Object {
	o, err := d.xref.Dereference(o)
	if err != nil {
		return nil
	}
	return o
}

func (d *Document) dict(o types.Object) types.Dict {
	switch v := d.deref(o).(type) {
	case types.Dict:
		return v
	case types.StreamDict:
		return v.Dict
	}
	return nil
}

func (d *Document) array(o types.Object) types.Array {
	a, _ := d.deref(o).(types.Array)
	return a
}

func (d *Document) number(o types.Object) (float64, bool) {
	switch v := d.deref(o).(type) {
	case types.Integer:
		return float64(v), true
	case types.Float:
		return float64(v), true
	}
	return 0, false
}

func (d *Document) name(o types.Object) string {
	n, _ := d.deref(o).(types.Name)
	return string(n)
}

func (d *Document) boxOf(o types.Object) (box, bool) {
	a := d.array(o)
	if len(a) != 4 {
		return box{}, false
	}
	var b box
	for i := range 4 {
		v, ok := d.number(a[i])
		if !ok {
			return box{}, false
		}
		b[i] = v
	}
	// Normalise: some writers give the corners in the other order.
	if b[0] > b[2] {
		b[0], b[2] = b[2], b[0]
	}
	if b[1] > b[3] {
		b[1], b[3] = b[3], b[1]
	}
	return b, true
}

// inherited holds the page attributes a page tree node passes to its kids.
type inherited struct {
	resources types.Dict
	media     *box
	crop      *box
	rotate    int
}

// collectPages walks the page tree once, in order, resolving inherited
// attributes, so that later page lookups are an index.
func (d *Document) collectPages() error {
	root := d.root
	pagesRef := root["Pages"]
	if pagesRef == nil {
		return errors.New("catalog has no page tree")
	}
	seen := map[int]bool{}
	if err := d.walkPages(pagesRef, inherited{}, seen, 0); err != nil {
		return err
	}
	if len(d.pages) == 0 {
		return errors.New("page tree has no pages")
	}
	return nil
}

func (d *Document) walkPages(ref types.Object, inh inherited, seen map[int]bool, depth int) error {
	if depth > maxTreeDepth {
		return errors.New("page tree too deep")
	}
	objNr := -1
	if ir, ok := ref.(types.IndirectRef); ok {
		objNr = ir.ObjectNumber.Value()
		if seen[objNr] {
			return nil // a cycle or a page listed twice: skip, as poppler does
		}
		seen[objNr] = true
	}
	node := d.dict(ref)
	if node == nil {
		return nil
	}
	inh = d.inherit(node, inh)
	kids := d.array(node["Kids"])
	if isLeaf(d.name(node["Type"]), kids) {
		d.pages = append(d.pages, leafPage(node, inh))
		if objNr >= 0 {
			d.pageByObj[objNr] = len(d.pages)
		}
		return nil
	}
	for _, k := range kids {
		if err := d.walkPages(k, inh, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// inherit is inh with what node sets of the attributes pages inherit.
func (d *Document) inherit(node types.Dict, inh inherited) inherited {
	if r := d.dict(node["Resources"]); r != nil {
		inh.resources = r
	}
	if b, ok := d.boxOf(node["MediaBox"]); ok {
		inh.media = &b
	}
	if b, ok := d.boxOf(node["CropBox"]); ok {
		inh.crop = &b
	}
	if v, ok := d.number(node["Rotate"]); ok {
		inh.rotate = int(v)
	}
	return inh
}

// isLeaf: a page tree node of this type and kids is a page.
func isLeaf(typ string, kids types.Array) bool {
	return typ == "Page" || (kids == nil && typ != "Pages")
}

// leafPage is the page node with its inherited attributes resolved.
func leafPage(node types.Dict, inh inherited) page {
	p := page{dict: node, resources: inh.resources, rotate: ((inh.rotate % 360) + 360) % 360}
	p.media = box{0, 0, 612, 792} // US Letter when the file says nothing
	if inh.media != nil {
		p.media = *inh.media
	}
	p.crop = p.media
	if inh.crop != nil {
		p.crop = intersect(*inh.crop, p.media)
	}
	return p
}

func intersect(a, b box) box {
	r := box{max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])}
	if r[0] >= r[2] || r[1] >= r[3] {
		return b // a crop box outside the media box is ignored
	}
	return r
}

// recoverTo turns a panic into an error wrapping ErrMalformed. pdfcpu and our
// parsers index into attacker-controlled data; a bad file must cost one
// error, never the process.
func recoverTo(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("pdftext: %s: %w: panic: %v", what, ErrMalformed, r)
	}
}
