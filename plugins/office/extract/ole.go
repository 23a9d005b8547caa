package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/richardlehane/mscfb"
)

// oleFile is an OLE compound file's top-level streams, by name.
type oleFile struct {
	streams map[string]*mscfb.File
	// all are every entry (streams and storages) by its path from the
	// root, "storage/substorage/name": an Outlook message keeps its
	// recipients and attachments in storages.
	all   map[string]*mscfb.File
	order []string // the paths of all, in the file's order
	lim   Limits
}

// readPath returns a whole stream by its path, bounded by MaxPartBytes.
func (o *oleFile) readPath(p string) ([]byte, error) {
	f, ok := o.all[p]
	if !ok {
		return nil, fmt.Errorf("%w: no %s stream", ErrMalformed, p)
	}
	return o.readFile(p, f)
}

// children are the names of the entries right below storage prefix ("" for
// the root, else "a/b/"), in the file's order.
func (o *oleFile) children(prefix string) []string {
	var out []string
	for _, p := range o.order {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	return out
}

// read returns a whole stream, bounded by MaxPartBytes.
func (o *oleFile) read(name string) ([]byte, error) {
	f, ok := o.streams[name]
	if !ok {
		return nil, fmt.Errorf("%w: no %s stream", ErrMalformed, name)
	}
	return o.readFile(name, f)
}

func (o *oleFile) readFile(name string, f *mscfb.File) ([]byte, error) {
	if f.Size > o.lim.MaxPartBytes {
		return nil, fmt.Errorf("%w: stream %s has %d bytes, over %d", ErrLimit, name, f.Size, o.lim.MaxPartBytes)
	}
	b := make([]byte, f.Size)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF || int64(n) < f.Size {
		return nil, fmt.Errorf("%w: stream %s: %d of %d bytes read: %v", ErrMalformed, name, n, f.Size, err)
	}
	return b, nil
}

func (o *oleFile) has(name string) bool { _, ok := o.streams[name]; return ok }

// extractOLE reads an OLE compound file: a Word 97-2003 document, an
// Excel 5.0/95 or 97-2003 workbook or a PowerPoint 97-2003 presentation.
// Other contents are refused by name: password-protected OOXML, Word 6/95
// files, Excel 2.x-4.0 worksheets, Visio drawings. Outlook messages are read as mail (msg.go). An
// RTF file named .doc (as Word writes them) is read as RTF.
func extractOLE(ctx context.Context, in input, s *sink) error {
	head := make([]byte, 8)
	if n, _ := in.r.ReadAt(head, 0); n < 8 || !bytes.Equal(head, oleMagic) {
		if bytes.HasPrefix(head, []byte(`{\rtf`)) {
			s.mime = mimeRTF
			return extractRTF(ctx, in, s)
		}
		if v := biffEarly(head); v != "" {
			return fmt.Errorf("%w: an %s file (not an OLE compound file); Excel 5.0/95 and later are read", ErrUnsupported, v)
		}
		return fmt.Errorf("%w: not an OLE compound file, as Word, Excel and PowerPoint 97-2003 files are", ErrMalformed)
	}
	o, err := openOLE(in)
	if err != nil {
		return err
	}
	switch {
	case o.has("EncryptedPackage"):
		return fmt.Errorf("%w: a password-protected Office Open XML document (an OLE-wrapped EncryptedPackage)", ErrEncrypted)
	case o.has("WordDocument"):
		s.mime = mimeDOC
		return extractDOC(ctx, o, s)
	case o.has("Workbook"), o.has("Book"): // Book: Excel 5.0/95 (BIFF5)
		s.mime = mimeXLS
		return extractXLS(ctx, o, s)
	case o.has("PowerPoint Document"):
		s.mime = mimePPT
		return extractPPT(ctx, o, s)
	case o.has("VisioDocument"):
		return fmt.Errorf("%w: a Visio drawing (.vsd)", ErrUnsupported)
	case o.has("__properties_version1.0") && (o.has("__substg1.0_0037001F") || o.has("__substg1.0_0037001E") || o.has("__nameid_version1.0")):
		s.mime = mimeMSG
		return extractMSG(ctx, o, s)
	}
	names := make([]string, 0, len(o.streams))
	for n := range o.streams {
		names = append(names, n)
	}
	return fmt.Errorf("%w: an OLE compound file that is neither a Word, an Excel nor a PowerPoint document (streams: %s)", ErrUnsupported, strings.Join(names, ", "))
}

// biffEarly names the Excel version of a file that starts with the BOF
// record of BIFF2, 3 or 4 (OpenOffice.org's "Microsoft Excel File
// Format", 5.8: records 0x0009, 0x0209, 0x0409, and their data's type
// field 0x0010 worksheet, 0x0020 chart, 0x0040 macro sheet, 0x0100
// workspace), which Excel 2.x to 4.0 wrote as bare record streams, "" for
// other bytes.
func biffEarly(head []byte) string {
	if len(head) < 8 {
		return ""
	}
	switch binary.LittleEndian.Uint16(head[6:]) { // the BOF's type field
	case 0x0010, 0x0020, 0x0040, 0x0100:
	default:
		return ""
	}
	switch binary.LittleEndian.Uint16(head) {
	case 0x0009:
		return "Excel 2.x worksheet (BIFF2)"
	case 0x0209:
		return "Excel 3.0 worksheet (BIFF3)"
	case 0x0409:
		return "Excel 4.0 worksheet (BIFF4)"
	}
	return ""
}

// openOLE reads an OLE compound file's directory.
func openOLE(in input) (*oleFile, error) {
	r, err := mscfb.New(io.NewSectionReader(in.r, 0, in.size))
	if err != nil {
		if in.declared == mimeDOCX || in.declared == mimeXLSX || in.declared == mimePPTX {
			return nil, fmt.Errorf("%w: an OLE compound file where an Office Open XML package was expected, as Office stores password-protected documents (and an unreadable one: %v)", ErrEncrypted, err)
		}
		return nil, fmt.Errorf("%w: an unreadable OLE compound file: %w", ErrMalformed, err)
	}
	o := &oleFile{streams: map[string]*mscfb.File{}, all: map[string]*mscfb.File{}, lim: in.lim}
	for _, f := range r.File {
		if len(f.Path) == 0 && f.Size >= 0 {
			if _, dup := o.streams[f.Name]; !dup {
				o.streams[f.Name] = f
			}
		}
		p := strings.Join(append(slices.Clone(f.Path), f.Name), "/")
		if _, dup := o.all[p]; !dup && f.Size >= 0 {
			o.all[p] = f
			o.order = append(o.order, p)
		}
	}
	return o, nil
}
