package extract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/richardlehane/mscfb"
)

// oleFile is an OLE compound file's top-level streams, by name.
type oleFile struct {
	streams map[string]*mscfb.File
	lim     Limits
}

// read returns a whole stream, bounded by MaxPartBytes.
func (o *oleFile) read(name string) ([]byte, error) {
	f, ok := o.streams[name]
	if !ok {
		return nil, fmt.Errorf("%w: no %s stream", ErrMalformed, name)
	}
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
// Excel 97-2003 workbook or a PowerPoint 97-2003 presentation. Other
// contents are refused by name: password-protected OOXML, Word 6/95 and
// Excel 5/95 files, Visio drawings, Outlook messages. An
// RTF file named .doc (as Word writes them) is read as RTF.
func extractOLE(ctx context.Context, in input, s *sink) error {
	head := make([]byte, 8)
	if n, _ := in.r.ReadAt(head, 0); n < 8 || !bytes.Equal(head, oleMagic) {
		if bytes.HasPrefix(head, []byte(`{\rtf`)) {
			s.mime = mimeRTF
			return extractRTF(ctx, in, s)
		}
		return fmt.Errorf("%w: not an OLE compound file, as Word, Excel and PowerPoint 97-2003 files are", ErrMalformed)
	}
	r, err := mscfb.New(io.NewSectionReader(in.r, 0, in.size))
	if err != nil {
		if in.declared == mimeDOCX || in.declared == mimeXLSX || in.declared == mimePPTX {
			return fmt.Errorf("%w: an OLE compound file where an Office Open XML package was expected, as Office stores password-protected documents (and an unreadable one: %v)", ErrEncrypted, err)
		}
		return fmt.Errorf("%w: an unreadable OLE compound file: %w", ErrMalformed, err)
	}
	o := &oleFile{streams: map[string]*mscfb.File{}, lim: in.lim}
	for _, f := range r.File {
		if len(f.Path) == 0 && f.Size >= 0 {
			if _, dup := o.streams[f.Name]; !dup {
				o.streams[f.Name] = f
			}
		}
	}
	switch {
	case o.has("EncryptedPackage"):
		return fmt.Errorf("%w: a password-protected Office Open XML document (an OLE-wrapped EncryptedPackage)", ErrEncrypted)
	case o.has("WordDocument"):
		s.mime = mimeDOC
		return extractDOC(ctx, o, s)
	case o.has("Workbook"):
		s.mime = mimeXLS
		return extractXLS(ctx, o, s)
	case o.has("Book"):
		return fmt.Errorf("%w: an Excel 5.0/95 workbook (BIFF5); only Excel 97-2003 (BIFF8) and later are read", ErrUnsupported)
	case o.has("PowerPoint Document"):
		s.mime = mimePPT
		return extractPPT(ctx, o, s)
	case o.has("VisioDocument"):
		return fmt.Errorf("%w: a Visio drawing (.vsd)", ErrUnsupported)
	case o.has("__substg1.0_0037001F") || o.has("__substg1.0_0037001E"):
		return fmt.Errorf("%w: an Outlook message (.msg)", ErrUnsupported)
	}
	names := make([]string, 0, len(o.streams))
	for n := range o.streams {
		names = append(names, n)
	}
	return fmt.Errorf("%w: an OLE compound file that is neither a Word, an Excel nor a PowerPoint document (streams: %s)", ErrUnsupported, strings.Join(names, ", "))
}
