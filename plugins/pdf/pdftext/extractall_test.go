package pdftext

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestExtractAllMatchesPageText: the one-pass extraction gives every page
// the text PageText gives it, and the sections Prescan gives.
func TestExtractAllMatchesPageText(t *testing.T) {
	paths := testcorpus.Glob(t, "pdf", "deb-*.pdf")
	for _, path := range paths[:min(3, len(paths))] {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d1, err := Open(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		ps, texts, err := d1.ExtractAll()
		if err != nil || len(texts) != d1.PageCount() {
			t.Fatalf("%s: %d texts, %v", path, len(texts), err)
		}
		d2, _ := Open(bytes.NewReader(data))
		ps2, err := d2.Prescan()
		// A sketched pre-scan (the document has an outline) finds no headings.
		if err != nil || len(ps2.Sections) != len(ps.Sections) || (!ps2.Sketched && len(ps2.Headings) != len(ps.Headings)) {
			t.Fatalf("%s: prescan differs", path)
		}
		for n := 1; n <= d2.PageCount(); n++ {
			want, err := d2.PageText(n)
			if err != nil {
				t.Fatal(err)
			}
			if texts[n-1] != want {
				t.Fatalf("%s page %d differs:\n%q\nvs\n%q", filepath.Base(path), n, texts[n-1], want)
			}
		}
	}
}
