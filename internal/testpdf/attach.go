package testpdf

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
)

// File is a file to attach: its name as the document gives it and its
// bytes.
type File struct {
	Name string
	Data []byte
}

// WithAttachments returns a valid one-page PDF whose text is text (as
// OnePage) with files attached: the first half (rounded up) in the
// catalog's /EmbeddedFiles name tree, split over nested kids, the rest as
// FileAttachment annotations on the page. Data are stored hex-encoded
// (ASCIIHexDecode), so a PDF may be attached to a PDF.
func WithAttachments(text string, files ...File) []byte {
	stream := "BT /F1 12 Tf 72 720 Td (" + text + ") Tj ET"
	tree := (len(files) + 1) / 2
	// Objects: 1 catalog, 2 pages, 3 page, 4 content, 5 font, 6 name tree
	// root, 7 and 8 its kids, then per file a spec and a stream.
	specRef := func(i int) string { return fmt.Sprintf("%d 0 R", 9+2*i) }
	var annots, kid1, kid2 []string
	for i, f := range files {
		entry := fmt.Sprintf("%s %s", pdfString(f.Name), specRef(i))
		switch {
		case i < (tree+1)/2:
			kid1 = append(kid1, entry)
		case i < tree:
			kid2 = append(kid2, entry)
		default:
			annots = append(annots, fmt.Sprintf("<< /Type /Annot /Subtype /FileAttachment /Rect [72 600 90 620] /FS %s /Contents (attached) >>", specRef(i)))
		}
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles 6 0 R >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R /Annots [" + strings.Join(annots, " ") + "] >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Kids [7 0 R 8 0 R] >>",
		"<< /Names [" + strings.Join(kid1, " ") + "] >>",
		"<< /Kids [<< /Names [" + strings.Join(kid2, " ") + "] >>] >>",
	}
	for i, f := range files {
		h := hex.EncodeToString(f.Data) + ">"
		objs = append(objs,
			fmt.Sprintf("<< /Type /Filespec /F %s /UF %s /EF << /F %d 0 R >> >>", pdfString(f.Name), pdfString(f.Name), 10+2*i),
			fmt.Sprintf("<< /Type /EmbeddedFile /Filter /ASCIIHexDecode /Params << /Size %d >> /Length %d >>\nstream\n%s\nendstream", len(f.Data), len(h), h))
	}
	return build(objs)
}

// pdfString writes s as a hex string (any bytes, no escaping to get wrong).
func pdfString(s string) string { return "<" + hex.EncodeToString([]byte(s)) + ">" }

func build(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// Build writes a valid PDF whose object i+1 is objs[i] (object 1 the
// catalog); a stream's dictionary must carry its /Length.
func Build(objs ...string) []byte { return build(objs) }
