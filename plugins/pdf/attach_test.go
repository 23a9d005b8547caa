package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/internal/testpdf"
	"github.com/agenthost/agenthost/pdk/output"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

// recorder is an emitTarget that keeps what the walk hands back.
type recorder struct {
	files  map[string][]byte
	mime   map[string]string
	failed map[string]string
}

type recWriter struct {
	r    *recorder
	path string
	buf  bytes.Buffer
}

func (w *recWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *recWriter) Close() error                { w.r.files[w.path] = w.buf.Bytes(); return nil }
func (w *recWriter) Fail(kind, reason string) error {
	return w.r.Fail(w.path, kind, reason)
}

func (r *recorder) Begin(f output.File) (fileWriter, error) {
	r.mime[f.Path] = f.MIMEType
	return &recWriter{r: r, path: f.Path}, nil
}

func (r *recorder) Fail(p, kind, reason string) error {
	r.failed[p] = kind + ": " + reason
	return nil
}

func newRecorder() *recorder {
	return &recorder{files: map[string][]byte{}, mime: map[string]string{}, failed: map[string]string{}}
}

func openDoc(t *testing.T, b []byte) *pdftext.Document {
	t.Helper()
	d, err := pdftext.Open(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAttachmentsWalk: attachments come back as entries under the
// document's name, with safe names (a path's last segment), unique, an
// attached PDF's own below it; a path asks for one entry.
func TestAttachmentsWalk(t *testing.T) {
	inner := testpdf.WithAttachments("inner", testpdf.File{Name: "deep.txt", Data: []byte("deep inside")})
	doc := testpdf.WithAttachments("outer",
		testpdf.File{Name: "a.txt", Data: []byte("first")},
		testpdf.File{Name: `C:\Users\x\a.txt`, Data: []byte("second, same name")},
		testpdf.File{Name: "inner.pdf", Data: inner},
		testpdf.File{Name: "../../etc/passwd", Data: []byte("fake")},
		testpdf.File{Name: "bad\x01name", Data: []byte("control")},
	)
	real, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "classes", "attach-authorarchive-IEEEtran.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, only string
		pdf        []byte
		files      []string
		failed     []string
	}{
		{"synthetic", "", doc,
			[]string{"doc.pdf/a.txt", "doc.pdf/a~2.txt", "doc.pdf/inner.pdf", "doc.pdf/inner.pdf/deep.txt", "doc.pdf/passwd"},
			[]string{"doc.pdf/attachment-5"}},
		{"one entry", "doc.pdf/inner.pdf/deep.txt", doc, []string{"doc.pdf/inner.pdf/deep.txt"}, nil},
		{"authorarchive", "", real,
			[]string{"doc.pdf/AA@bibBibTeX", "doc.pdf/AA@bibEndnote", "doc.pdf/AA@bibRIS", "doc.pdf/AA@bibWord"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRecorder()
			res, err := attachments(attachmentsArgs{Name: "some/dir/doc.pdf", Path: c.only}, openDoc(t, c.pdf), r)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for p := range r.files {
				got = append(got, p)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.files) {
				t.Errorf("files %q, want %q", got, c.files)
			}
			var failed []string
			for p := range r.failed {
				failed = append(failed, p)
			}
			slices.Sort(failed)
			if !slices.Equal(failed, c.failed) {
				t.Errorf("failed %q (%v), want %q", failed, r.failed, c.failed)
			}
			if res.Index.Structure["files"] != len(c.files) {
				t.Errorf("structure %v", res.Index.Structure)
			}
		})
	}
	r := newRecorder()
	if _, err := attachments(attachmentsArgs{Name: "doc.pdf"}, openDoc(t, doc), r); err != nil {
		t.Fatal(err)
	}
	if string(r.files["doc.pdf/inner.pdf/deep.txt"]) != "deep inside" || r.mime["doc.pdf/a.txt"] != "text/plain; charset=utf-8" || r.mime["doc.pdf/inner.pdf"] != "application/pdf" {
		t.Errorf("bytes or types: %q %v", r.files["doc.pdf/inner.pdf/deep.txt"], r.mime)
	}
	// Asking for an attachment the document lacks is not_found.
	if _, err := attachments(attachmentsArgs{Name: "doc.pdf", Path: "doc.pdf/nope"}, openDoc(t, doc), newRecorder()); err == nil {
		t.Error("no error for a missing attachment")
	}
}

// TestEntryName: a file specification's name keeps its last segment.
func TestEntryName(t *testing.T) {
	for _, c := range []struct{ raw, want, kind string }{
		{"report.pdf", "report.pdf", ""},
		{"../../etc/passwd", "passwd", ""},
		{`\AA@bibWord `, "AA@bibWord", ""},
		{`C:\tmp\x.txt`, "x.txt", ""},
		{"..", "attachment-3", ""},
		{"", "attachment-3", ""},
		{"a\x00b", "", "traversal"},
	} {
		name, kind, _ := entryName(c.raw, 3)
		if name != c.want || kind != c.kind {
			t.Errorf("entryName(%q) = %q, %q; want %q, %q", c.raw, name, kind, c.want, c.kind)
		}
	}
}
