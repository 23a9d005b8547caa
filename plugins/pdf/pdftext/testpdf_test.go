package pdftext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
	"testing"
)

// buildPDF writes a small, valid PDF: objs[i] is the body of object i+1
// (object 1 must be the catalog). Bodies may use the placeholder
// STREAM(...) to wrap content in a stream with the right /Length.
func buildPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, expandStream(o))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// expandStream turns "<<dict>> STREAM(data)" into a stream object.
func expandStream(o string) string {
	i := strings.Index(o, "STREAM(")
	if i < 0 {
		return o
	}
	data := o[i+len("STREAM(") : len(o)-1]
	dict := strings.TrimSpace(o[:i])
	dict = strings.TrimSuffix(dict, ">>")
	return fmt.Sprintf("%s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// onePage builds a one-page document (Letter) with the given content,
// resources and extra objects (numbered from 5).
func onePage(content, resources string, extra ...string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources " + resources + " /Contents 4 0 R >>",
		"<< >> STREAM(" + content + ")",
	}
	return buildPDF(append(objs, extra...)...)
}

const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"

func pageText(t *testing.T, pdf []byte, n int) string {
	t.Helper()
	d, err := Open(bytes.NewReader(pdf))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	s, err := d.PageText(n)
	if err != nil {
		t.Fatalf("page %d: %v", n, err)
	}
	return s
}

// words normalises white space, as the corpus measure does.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

func flateWriter(w io.Writer) (*zlib.Writer, error) { return zlib.NewWriterLevel(w, zlib.BestSpeed) }
