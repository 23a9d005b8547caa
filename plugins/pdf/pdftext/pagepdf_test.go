package pdftext

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestCopyPage: the copy CopyPage makes reading only the path to the page
// is the one a document opened whole makes, for every corpus PDF.
func TestCopyPage(t *testing.T) {
	for _, path := range testcorpus.Glob(t, "pdf", "*.pdf") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Open(bytes.NewReader(data))
		if err != nil {
			continue
		}
		n := d.PageCount()
		for _, pg := range uniq(1, (n+1)/2, n) {
			var whole, fast bytes.Buffer
			werr := d.PagePDF(pg, &whole)
			pages, ferr := CopyPage(bytes.NewReader(data), int64(len(data)), pg, &fast)
			if errors.Is(werr, ErrPagePDF) {
				if !errors.Is(ferr, ErrPagePDF) {
					t.Errorf("%s page %d: copied (%v) though the document's reader cannot", filepath.Base(path), pg, ferr)
				}
				continue
			}
			if werr != nil || ferr != nil || pages != n || !bytes.Equal(whole.Bytes(), fast.Bytes()) {
				t.Errorf("%s page %d: %v / %v, %d pages of %d, %d / %d bytes", filepath.Base(path), pg, werr, ferr, pages, n, whole.Len(), fast.Len())
			}
		}
	}
}

// TestCopyPageTrees: trees whose counts are wrong or that loop are walked
// whole, so the page copied is the one the index numbers n.
func TestCopyPageTrees(t *testing.T) {
	page := func(text string) string {
		return "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 " + helvetica + " >> >> /Contents STREAMREF >>"
	}
	content := func(text string) string { return "<< >> STREAM(BT /F1 12 Tf 72 700 Td (" + text + ") Tj ET)" }
	build := func(tree string, kids ...string) []byte {
		return buildPDF(append([]string{"<< /Type /Catalog /Pages 2 0 R >>", tree}, kids...)...)
	}
	for name, tc := range map[string]struct {
		pdf   []byte
		pages []string
	}{
		// Objects 3-5 are pages, 6-8 their contents; object 9 an empty node.
		"flat": {build("<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>",
			strings.Replace(page("a"), "STREAMREF", "6 0 R", 1), strings.Replace(page("b"), "STREAMREF", "7 0 R", 1), strings.Replace(page("c"), "STREAMREF", "8 0 R", 1),
			content("alpha"), content("beta"), content("gamma")), []string{"alpha", "beta", "gamma"}},
		"two levels": {build("<< /Type /Pages /Kids [9 0 R 10 0 R] /Count 3 >>",
			strings.Replace(page("a"), "STREAMREF", "6 0 R", 1), strings.Replace(page("b"), "STREAMREF", "7 0 R", 1), strings.Replace(page("c"), "STREAMREF", "8 0 R", 1),
			content("alpha"), content("beta"), content("gamma"),
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Pages /Kids [4 0 R 5 0 R] /Count 2 >>"), []string{"alpha", "beta", "gamma"}},
		"count too high": {build("<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 7 >>",
			strings.Replace(page("a"), "STREAMREF", "6 0 R", 1), strings.Replace(page("b"), "STREAMREF", "7 0 R", 1), strings.Replace(page("c"), "STREAMREF", "8 0 R", 1),
			content("alpha"), content("beta"), content("gamma")), []string{"alpha", "beta", "gamma"}},
		"an empty node beside two pages' node": {build("<< /Type /Pages /Kids [9 0 R 10 0 R] /Count 2 >>",
			strings.Replace(page("a"), "STREAMREF", "6 0 R", 1), strings.Replace(page("b"), "STREAMREF", "7 0 R", 1), "null",
			content("alpha"), content("beta"), "null",
			"<< /Type /Pages /Kids [] /Count 0 >>", "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>"), []string{"alpha", "beta"}},
	} {
		t.Run(name, func(t *testing.T) {
			for i, want := range tc.pages {
				var out bytes.Buffer
				pages, err := CopyPage(bytes.NewReader(tc.pdf), int64(len(tc.pdf)), i+1, &out)
				if err != nil {
					t.Fatalf("page %d: %v", i+1, err)
				}
				if got := pageText(t, out.Bytes(), 1); words(got) != want || pages != len(tc.pages) {
					t.Errorf("page %d: %q of %d pages, want %q of %d", i+1, got, pages, want, len(tc.pages))
				}
			}
			if _, err := CopyPage(bytes.NewReader(tc.pdf), int64(len(tc.pdf)), len(tc.pages)+1, &bytes.Buffer{}); !errors.Is(err, ErrNoPage) {
				t.Errorf("past the last page: %v", err)
			}
		})
	}
}
