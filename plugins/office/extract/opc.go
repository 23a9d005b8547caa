package extract

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"golang.org/x/net/html/charset"

	"github.com/agenthost/agenthost/pdk/content"
)

// oleMagic starts an OLE compound file: what Office wraps encrypted OOXML
// packages in, and the container of the legacy .doc/.xls/.ppt formats.
var oleMagic = []byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1}

// pkg is an OOXML package (an OPC zip) whose parts are read on demand, each
// bounded by the limits, so that only the parts a format needs are ever
// decompressed.
type pkg struct {
	r     io.ReaderAt
	zr    *zip.Reader
	files map[string]*zip.File // by lower-cased name: OPC part names are case-insensitive
	lim   Limits
	read  int64             // decompressed bytes handed out so far
	types map[string]string // [Content_Types].xml, read on first use (contentType)
}

// openPackage opens the zip, refusing OLE containers with ErrEncrypted.
func openPackage(r io.ReaderAt, size int64, lim Limits) (*pkg, error) {
	head := make([]byte, 8)
	if n, _ := r.ReadAt(head, 0); n == 8 && bytes.Equal(head, oleMagic) {
		return nil, fmt.Errorf("%w: an OLE compound file, which is how Office stores password-protected documents and the legacy binary formats", ErrEncrypted)
	}
	zr, err := zip.NewReader(r, size)
	// Entries with unsafe names (zip.ErrInsecurePath) are harmless here:
	// nothing is ever written to disk.
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && zr != nil) {
		return nil, fmt.Errorf("%w: not a readable zip package: %w", ErrMalformed, err)
	}
	p := &pkg{r: r, zr: zr, files: make(map[string]*zip.File, len(zr.File)), lim: lim}
	for _, f := range zr.File {
		name := partKey(f.Name)
		if _, dup := p.files[name]; !dup && !strings.HasSuffix(name, "/") {
			p.files[name] = f
		}
	}
	return p, nil
}

// partKey normalises a part name for lookup: no leading slash, forward
// slashes, lower case.
func partKey(name string) string {
	return strings.ToLower(strings.TrimPrefix(strings.ReplaceAll(name, `\`, "/"), "/"))
}

// has reports whether the package holds the part.
func (p *pkg) has(name string) bool {
	_, ok := p.files[partKey(name)]
	return ok
}

// names returns the part names (as stored) under a folder prefix, sorted.
func (p *pkg) names(prefix string) []string {
	prefix = partKey(prefix)
	var out []string
	for k, f := range p.files {
		if strings.HasPrefix(k, prefix) {
			out = append(out, strings.TrimPrefix(strings.ReplaceAll(f.Name, `\`, "/"), "/"))
		}
	}
	sortNatural(out)
	return out
}

// sortNatural sorts names so that "slide2" comes before "slide10".
func sortNatural(names []string) {
	slices.SortFunc(names, naturalCompare)
}

// size returns the part's declared uncompressed size.
func (p *pkg) size(name string) int64 {
	if f, ok := p.files[partKey(name)]; ok {
		return int64(f.UncompressedSize64)
	}
	return -1
}

// open returns a reader of the part that fails with ErrLimit as soon as
// more than MaxPartBytes come out of it (or the package's budget is spent),
// whatever the zip header claims.
func (p *pkg) open(name string) (io.ReadCloser, error) {
	f, ok := p.files[partKey(name)]
	if !ok {
		return nil, fmt.Errorf("%w: part %s is missing", ErrMalformed, name)
	}
	if f.Flags&1 != 0 {
		return nil, fmt.Errorf("%w: part %s is encrypted", ErrEncrypted, name)
	}
	if int64(f.UncompressedSize64) > p.lim.MaxPartBytes {
		return nil, fmt.Errorf("%w: part %s declares %d bytes, over %d", ErrLimit, name, f.UncompressedSize64, p.lim.MaxPartBytes)
	}
	if p.spent()+int64(f.UncompressedSize64) > p.lim.MaxUnzippedBytes {
		return nil, fmt.Errorf("%w: package expands beyond %d bytes", ErrLimit, p.lim.MaxUnzippedBytes)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: part %s: %w", ErrMalformed, name, err)
	}
	room := min(p.lim.MaxPartBytes, p.lim.MaxUnzippedBytes-p.spent())
	return &boundedPart{rc: rc, p: p, name: name, room: room}, nil
}

// boundedPart counts what is read from a part against the limits.
type boundedPart struct {
	rc   io.ReadCloser
	p    *pkg
	name string
	room int64
}

func (b *boundedPart) Read(buf []byte) (int, error) {
	if b.room <= 0 {
		// One byte more tells a part of exactly the limit from a larger one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("%w: part %s expands beyond %d bytes", ErrLimit, b.name, b.p.lim.MaxPartBytes)
	}
	if int64(len(buf)) > b.room {
		buf = buf[:b.room]
	}
	n, err := b.rc.Read(buf)
	b.room -= int64(n)
	b.p.charge(int64(n))
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: part %s: %w", ErrMalformed, b.name, err)
	}
	return n, err
}

func (b *boundedPart) Close() error { return b.rc.Close() }

// readAll reads a whole part within the limits.
func (p *pkg) readAll(name string) ([]byte, error) {
	rc, err := p.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(0, min(p.size(name), p.lim.MaxPartBytes))))
	if _, err := io.Copy(buf, rc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readerAt gives random access to a part: directly into the input for a
// stored (uncompressed) part, which is how Office keeps media, so a video's
// index can be read at its end without reading the video; otherwise over
// at most the first limit bytes, decompressed.
func (p *pkg) readerAt(name string, limit int64) (io.ReaderAt, int64, error) {
	f, ok := p.files[partKey(name)]
	if !ok {
		return nil, 0, fmt.Errorf("%w: part %s is missing", ErrMalformed, name)
	}
	if f.Method == zip.Store && f.Flags&1 == 0 {
		if off, err := f.DataOffset(); err == nil {
			return io.NewSectionReader(p.r, off, int64(f.UncompressedSize64)), int64(f.UncompressedSize64), nil
		}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: part %s: %w", ErrMalformed, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit))
	if err != nil && len(b) == 0 {
		return nil, 0, fmt.Errorf("%w: part %s: %w", ErrMalformed, name, err)
	}
	p.charge(int64(len(b)))
	return bytes.NewReader(b), int64(f.UncompressedSize64), nil
}

// spent is what the extraction has decompressed so far: of all packages
// when the limits share a count (documents in documents), else of this
// one.
func (p *pkg) spent() int64 {
	if p.lim.unzipped != nil {
		return *p.lim.unzipped
	}
	return p.read
}

// charge counts n decompressed bytes.
func (p *pkg) charge(n int64) {
	p.read += n
	if p.lim.unzipped != nil {
		*p.lim.unzipped += n
	}
}

// decoder returns an XML decoder over a part. Callers must Close the part.
func (p *pkg) decoder(name string) (*xml.Decoder, io.Closer, error) {
	rc, err := p.open(name)
	if err != nil {
		return nil, nil, err
	}
	return newXMLDecoder(rc), rc, nil
}

// newXMLDecoder is lenient where real files are sloppy: undeclared
// entities of HTML and non-UTF-8 encodings.
func newXMLDecoder(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.CharsetReader = charset.NewReaderLabel
	return d
}

// rel is one relationship of a part.
type rel struct {
	ID       string
	Type     string // the last segment of the type URI: "image", "slide", …
	Target   string // the resolved part name, or the URL of an external target
	External bool
}

// relsOf reads the relationships of a part (its _rels/NAME.rels), with
// targets resolved to part names. A missing rels part is no error.
func (p *pkg) relsOf(part string) ([]rel, error) {
	dir, base := path.Split(strings.TrimPrefix(part, "/"))
	name := dir + "_rels/" + base + ".rels"
	if !p.has(name) {
		return nil, nil
	}
	b, err := p.readAll(name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
			Mode   string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := newXMLDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
	}
	out := make([]rel, 0, len(doc.Rels))
	for _, r := range doc.Rels {
		x := rel{ID: r.ID, Type: path.Base(r.Type), External: strings.EqualFold(r.Mode, "External")}
		switch {
		case x.External:
			x.Target = r.Target
		case strings.HasPrefix(r.Target, "/"):
			x.Target = path.Clean(r.Target)[1:]
		default:
			x.Target = strings.TrimPrefix(path.Clean(path.Join("/"+dir, r.Target)), "/")
		}
		out = append(out, x)
	}
	return out, nil
}

// relByID indexes relationships by ID.
func relByID(rels []rel) map[string]rel {
	m := make(map[string]rel, len(rels))
	for _, r := range rels {
		m[r.ID] = r
	}
	return m
}

// mainPart finds the package's main part through _rels/.rels (so files
// whose main part has another name still open), else the conventional name.
func (p *pkg) mainPart(conventional string) (string, error) {
	rels, err := p.relsOf("")
	if err == nil {
		for _, r := range rels {
			if r.Type == "officeDocument" && !r.External && p.has(r.Target) {
				return r.Target, nil
			}
		}
	}
	if p.has(conventional) {
		return conventional, nil
	}
	return "", fmt.Errorf("%w: no %s in the package", ErrMalformed, conventional)
}

// naturalCompare orders "slide2" before "slide10".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// partBase is a part's file name without extension: "word/header1.xml" →
// "header1".
func partBase(name string) string {
	b := path.Base(name)
	return strings.TrimSuffix(b, path.Ext(b))
}

// attr returns the value of the attribute with the local name, whatever its
// namespace.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// attrNS returns the value of the attribute with the local name in a
// namespace whose URI ends with suffix ("relationships" for r:id and r:embed).
func attrNS(e xml.StartElement, suffix, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local && strings.HasSuffix(a.Name.Space, suffix) {
			return a.Value
		}
	}
	return ""
}

// mediaProbeBytes bounds what is decompressed of a compressed media part
// to read its header; stored parts are read in place instead.
const mediaProbeBytes = 4 << 20

// mediaObject describes an image or media part: format, dimensions,
// duration as its header says. It never fails; an unreadable part is an
// object whose Metadata["problem"] says why.
func (p *pkg) mediaObject(part string, lim Limits) content.Object {
	var info mediaInfo
	ra, size, err := p.readerAt(part, min(lim.MaxPartBytes, mediaProbeBytes))
	if err != nil {
		info = mediaInfo{kind: contentOther, size: p.size(part), problem: err.Error()}
	} else {
		info = probeMedia(ra, size, part)
	}
	o := info.object("part")
	o.Metadata["part"] = part
	if lim.InlineMediaBytes > 0 && size > 0 && size <= lim.InlineMediaBytes {
		if b, err := p.readAll(part); err == nil {
			o.Data = base64.StdEncoding.EncodeToString(b)
			o.Metadata["encoding"] = "base64"
		}
	}
	return o
}

// maxDepth bounds the element nesting the recursive walks follow.
const maxDepth = 256

// xmlToken returns the next token, a syntax error as ErrMalformed.
func xmlToken(d *xml.Decoder) (xml.Token, error) {
	t, err := d.Token()
	if err != nil && err != io.EOF {
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return nil, err
	}
	return t, err
}

// xmlChildren runs f on each child element of the element just started, up
// to its end; f must consume the child (read to its end or Skip).
func xmlChildren(d *xml.Decoder, f func(xml.StartElement) error) error {
	for {
		t, err := xmlToken(d)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("%w: unexpected end of part", ErrMalformed)
			}
			return err
		}
		switch e := t.(type) {
		case xml.EndElement:
			return nil
		case xml.StartElement:
			if err := f(e); err != nil {
				return err
			}
		}
	}
}

// xmlText appends the character data of the element just started (text of
// child elements included) up to its end.
func xmlText(d *xml.Decoder, b *strings.Builder) error {
	depth := 0
	for {
		t, err := xmlToken(d)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("%w: unexpected end of part", ErrMalformed)
			}
			return err
		}
		switch e := t.(type) {
		case xml.CharData:
			b.Write(e)
		case xml.StartElement:
			depth++
		case xml.EndElement:
			if depth == 0 {
				return nil
			}
			depth--
		}
	}
}

// xmlAlternate handles mc:AlternateContent: the first choice only, since
// the fallback repeats the same content for older readers.
func xmlAlternate(d *xml.Decoder, f func(xml.StartElement) error) error {
	done := false
	return xmlChildren(d, func(c xml.StartElement) error {
		if done || (c.Name.Local != "Choice" && c.Name.Local != "Fallback") {
			return d.Skip()
		}
		done = true
		return xmlChildren(d, f)
	})
}

// xmlRoot finds the document's root element and runs f on it.
func xmlRoot(d *xml.Decoder, f func(xml.StartElement) error) error {
	for {
		t, err := xmlToken(d)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("%w: no root element", ErrMalformed)
			}
			return err
		}
		if e, ok := t.(xml.StartElement); ok {
			return f(e)
		}
	}
}
