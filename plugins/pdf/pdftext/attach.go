package pdftext

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Attachments: files embedded in the document, listed by the catalog's
// /EmbeddedFiles name tree (its kids nested to any depth) and by
// FileAttachment annotations on the pages. Each is a file specification
// whose /EF holds the file's bytes as a stream.

// Attachment is one embedded file.
type Attachment struct {
	// Name is the file's name as the document gives it (/UF, else /F,
	// else the name tree's key): not a safe path; callers clean it.
	Name string
	// Description is the file specification's /Desc, or the annotation's
	// /Contents.
	Description string
	// MIMEType is the embedded file's /Subtype, when it says.
	MIMEType string
	// Size is the file's size as its /Params say, or -1.
	Size int64
	// Page is the page of a FileAttachment annotation; 0 for the
	// document's own attachments (the name tree).
	Page int

	stream types.StreamDict
	// load reads the stream's data (see Document.load).
	load func(*types.StreamDict) error
}

// maxAttachments bounds the attachments listed.
const maxAttachments = 10_000

// ErrTooLarge: an attachment expands past the size allowed.
var ErrTooLarge = errors.New("attachment too large")

// Attachments lists the document's embedded files: the name tree's in its
// order, then those of FileAttachment annotations page by page. A file
// listed by both (the same stream) is listed once. Specifications without
// an embedded stream (a reference to a file elsewhere) are left out.
func (d *Document) Attachments() (atts []Attachment, err error) {
	defer recoverTo(&err, "attachments")
	seen := map[int]bool{}
	add := func(key string, spec types.Object, page int, contents string) {
		if len(atts) >= maxAttachments {
			return
		}
		a, objNr, ok := d.attachment(spec)
		if !ok {
			return
		}
		if objNr >= 0 {
			if seen[objNr] {
				return
			}
			seen[objNr] = true
		}
		if a.Name == "" {
			a.Name = key
		}
		if a.Description == "" {
			a.Description = contents
		}
		a.Page = page
		atts = append(atts, a)
	}
	if root := d.root; root != nil {
		if names := d.dict(root["Names"]); names != nil {
			d.embeddedTree(names["EmbeddedFiles"], 0, map[int]bool{}, add)
		}
	}
	for i := range d.pages {
		for _, a := range d.array(d.pages[i].dict["Annots"]) {
			ad := d.dict(a)
			if d.name(ad["Subtype"]) != "FileAttachment" {
				continue
			}
			contents, _ := model.Text(d.deref(ad["Contents"]))
			add("", ad["FS"], i+1, cleanTitle(contents))
		}
	}
	return atts, nil
}

// embeddedTree walks a name tree of file specifications.
func (d *Document) embeddedTree(node types.Object, depth int, seen map[int]bool, add func(string, types.Object, int, string)) {
	if depth > maxTreeDepth {
		return
	}
	if ir, ok := node.(types.IndirectRef); ok {
		if seen[ir.ObjectNumber.Value()] {
			return
		}
		seen[ir.ObjectNumber.Value()] = true
	}
	n := d.dict(node)
	if n == nil {
		return
	}
	pairs := d.array(n["Names"])
	for i := 0; i+1 < len(pairs); i += 2 {
		key, err := model.Text(d.deref(pairs[i]))
		if err != nil {
			key = rawString(d.deref(pairs[i]))
		}
		add(key, pairs[i+1], 0, "")
	}
	for _, k := range d.array(n["Kids"]) {
		d.embeddedTree(k, depth+1, seen, add)
	}
}

// attachment reads a file specification: its name, description and
// embedded stream (with that stream's object number, -1 for a direct one).
func (d *Document) attachment(spec types.Object) (Attachment, int, bool) {
	fs := d.dict(spec)
	if fs == nil {
		return Attachment{}, 0, false
	}
	ef := d.dict(fs["EF"])
	ref := ef["UF"]
	if ref == nil {
		ref = ef["F"]
	}
	sd, ok := d.deref(ref).(types.StreamDict)
	if !ok {
		return Attachment{}, 0, false
	}
	objNr := -1
	if ir, ok := ref.(types.IndirectRef); ok {
		objNr = ir.ObjectNumber.Value()
	}
	a := Attachment{Size: -1, stream: sd, load: d.load}
	for _, k := range []string{"UF", "F", "Unix", "DOS", "Mac"} {
		if t, err := textString(d.deref(fs[k])); err == nil && strings.TrimSpace(t) != "" {
			a.Name = t
			break
		}
	}
	if t, err := model.Text(d.deref(fs["Desc"])); err == nil {
		a.Description = cleanTitle(t)
	}
	a.MIMEType = d.name(sd.Dict["Subtype"])
	if v, ok := d.number(d.dict(sd.Dict["Params"])["Size"]); ok && v >= 0 {
		a.Size = int64(v)
	}
	return a, objNr, true
}

// textString decodes a text string. A hex string's bytes are its text
// (pdfcpu would unescape backslashes in them, which a Windows file name is
// full of): UTF-16BE after a byte order mark, else PDFDocEncoding, read as
// Latin-1.
func textString(o types.Object) (string, error) {
	h, ok := o.(types.HexLiteral)
	if !ok {
		return model.Text(o)
	}
	b, err := h.Bytes()
	if err != nil {
		return "", fmt.Errorf("hex string: %w", err)
	}
	if len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF {
		return utf16Text(b[2:]), nil
	}
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs), nil
}

// Data decodes an attachment's bytes. limit bounds the decoded size (an
// attachment that would pass it is an error wrapping ErrTooLarge, before
// it fills memory); packed is the size of its stream as stored, for a
// caller's compression-ratio check.
func (a Attachment) Data(limit int64) (data []byte, packed int64, err error) {
	defer recoverTo(&err, "attachment "+a.Name)
	sd := a.stream
	if a.load == nil {
		return nil, 0, fmt.Errorf("pdftext: attachment %q: %w", a.Name, ErrMalformed)
	}
	if err := a.load(&sd); err != nil {
		return nil, 0, fmt.Errorf("pdftext: attachment %q: %w", a.Name, err)
	}
	packed = int64(len(sd.Raw))
	if a.Size > limit {
		return nil, packed, fmt.Errorf("pdftext: attachment %q: %d bytes: %w", a.Name, a.Size, ErrTooLarge)
	}
	if err := sd.DecodeWithLimit(limit); err != nil {
		if errors.Is(err, filter.ErrDecodeLimitExceeded) {
			return nil, packed, fmt.Errorf("pdftext: attachment %q: %w", a.Name, ErrTooLarge)
		}
		return nil, packed, fmt.Errorf("pdftext: attachment %q: decode: %w", a.Name, err)
	}
	if int64(len(sd.Content)) > limit {
		return nil, packed, fmt.Errorf("pdftext: attachment %q: %d bytes: %w", a.Name, len(sd.Content), ErrTooLarge)
	}
	return sd.Content, packed, nil
}
