package pdftext

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestPagePDF copies pages of every corpus PDF on their own: each copy is a
// valid one-page PDF (pdfcpu validates it) whose text is the original
// page's, and a page of a long document costs a part of its bytes.
func TestPagePDF(t *testing.T) {
	api.DisableConfigDir()
	for _, path := range testcorpus.Glob(t, "pdf", "*.pdf") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Open(bytes.NewReader(data))
			if err != nil {
				t.Skipf("not opened: %v", err)
			}
			n := d.PageCount()
			for _, pg := range uniq(1, (n+1)/2, n) {
				var out bytes.Buffer
				err := d.PagePDF(pg, &out)
				if errors.Is(err, ErrPagePDF) {
					t.Skipf("read by the fallback reader: %v", err)
				}
				if err != nil {
					t.Fatalf("page %d: %v", pg, err)
				}
				conf := model.NewDefaultConfiguration()
				conf.ValidationMode = model.ValidationRelaxed
				if err := api.Validate(bytes.NewReader(out.Bytes()), conf); err != nil {
					t.Errorf("page %d: pdfcpu refuses the copy: %v", pg, err)
				}
				c, err := Open(bytes.NewReader(out.Bytes()))
				if err != nil {
					t.Fatalf("page %d: copy: %v", pg, err)
				}
				if c.PageCount() != 1 {
					t.Fatalf("page %d: copy has %d pages", pg, c.PageCount())
				}
				want, err := d.Page(pg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.Page(1)
				if err != nil {
					t.Fatal(err)
				}
				if got.Text != want.Text || got.Status != want.Status {
					t.Errorf("page %d: copy's text differs:\n got %.300q (%s)\nwant %.300q (%s)", pg, got.Text, got.Status, want.Text, want.Status)
				}
				if n >= 20 && out.Len() >= len(data)/2 {
					t.Errorf("page %d of %d: the copy is %d of %d bytes", pg, n, out.Len(), len(data))
				}
			}
		})
	}
}

func uniq(xs ...int) []int {
	var out []int
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func TestPagePDFRefusesPagesOutOfRange(t *testing.T) {
	data, err := os.ReadFile(testcorpus.Glob(t, "pdf", "deb-camlidl-1.04.pdf")[0])
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, -1, d.PageCount() + 1} {
		if err := d.PagePDF(n, &bytes.Buffer{}); err == nil {
			t.Errorf("page %d: no error", n)
		}
	}
}
