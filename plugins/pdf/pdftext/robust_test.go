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

// TestMalformedCorpus: the corpus's broken, encrypted and scanned PDFs each
// give what they should: a clear error, recovered text, or pages without text.
func TestMalformedCorpus(t *testing.T) {
	dir := testcorpus.Path(t, "pdf")
	for _, c := range []struct {
		name, doc string
		check     func(t *testing.T, d *Document, err error)
	}{
		{"44 bytes, no objects: a clear error wrapping ErrMalformed", "ocrmypdf-invalid-header-eof", func(t *testing.T, d *Document, err error) {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("got %v, want ErrMalformed", err)
			}
			t.Logf("invalid header: %v", err)
		}},
		{"a broken xref that poppler repairs: the text is recovered too", "pypdf-issue-301-broken-xref", func(t *testing.T, d *Document, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if s, err := d.PageText(1); err != nil || len(strings.Fields(s)) < 20 {
				t.Errorf("%d words, %v", len(strings.Fields(s)), err)
			}
		}},
		{"AES-256 (R6) with an empty user password opens without one", "pypdf-r6-owner-password", func(t *testing.T, d *Document, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := d.PageText(1); !strings.Contains(s, "pdf encryption test") {
				t.Errorf("text %q", s)
			}
		}},
		{"a scan without a text layer: pages, no text, no error", "ocrmypdf-c02-22-scanned", func(t *testing.T, d *Document, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if s, err := d.PageText(1); err != nil || strings.TrimSpace(s) != "" {
				t.Errorf("%q, %v", s, err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := openCorpus(t, dir, c.doc)
			c.check(t, d, err)
		})
	}
}

func TestEncryptedWithUserPassword(t *testing.T) {
	api.DisableConfigDir()
	plain := onePage("BT /F1 12 Tf 72 700 Td (secret text) Tj ET", "<< /Font << /F1 5 0 R >> >>", helvetica)
	for _, conf := range []*model.Configuration{
		model.NewAESConfiguration("user", "owner", 256),
		model.NewRC4Configuration("user", "owner", 128),
	} {
		var enc bytes.Buffer
		if err := api.Encrypt(bytes.NewReader(plain), &enc, conf); err != nil {
			t.Fatalf("encrypt: %v", err)
		}
		_, err := Open(bytes.NewReader(enc.Bytes()))
		if !errors.Is(err, ErrEncrypted) {
			t.Errorf("user password set: got %v, want ErrEncrypted", err)
		}
	}
	// Encrypted with an owner password only: opens and reads.
	var enc bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(plain), &enc, model.NewAESConfiguration("", "owner", 128)); err != nil {
		t.Fatalf("encrypt: %v", err)
	}
	if got := words(pageText(t, enc.Bytes(), 1)); got != "secret text" {
		t.Errorf("owner-only encryption: %q", got)
	}
}

func TestNotPDF(t *testing.T) {
	for _, in := range []string{"", "hello", "%PDF-1.4\n", "%PDF-1.4\n1 0 obj << >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"} {
		if _, err := Open(strings.NewReader(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Open(%q): got %v, want ErrMalformed", in, err)
		}
	}
	if _, err := Open(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("Open(nil): %v", err)
	}
}

// TestDamagedFiles truncates and corrupts corpus files: every call returns
// (an error or text), none panics. A panic escaping the library fails the
// test binary.
func TestDamagedFiles(t *testing.T) {
	dir, names := corpusFiles(t)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
		if err != nil || len(data) > 400_000 {
			continue // the large ones add time, not cases
		}
		var variants [][]byte
		for _, frac := range []int{10, 35, 60, 90, 99} {
			variants = append(variants, data[:len(data)*frac/100])
		}
		for seed := range 6 {
			c := bytes.Clone(data)
			// Overwrite bytes at spread positions (deterministic).
			for k := 0; k < 40; k++ {
				i := (seed*7919 + k*104729) % len(c)
				c[i] = byte(seed*31 + k*17)
			}
			variants = append(variants, c)
		}
		opened := 0
		for _, v := range variants {
			d, err := Open(bytes.NewReader(v))
			if err != nil {
				continue
			}
			opened++
			for p := 1; p <= min(d.PageCount(), 4); p++ {
				_, _ = d.PageText(p)
			}
			d.Outline()
		}
		t.Logf("%s: %d of %d damaged variants opened", name, opened, len(variants))
	}
}

func TestTruncatedRecovered(t *testing.T) {
	full := onePage("BT /F1 12 Tf 72 700 Td (kept text) Tj ET", "<< /Font << /F1 5 0 R >> >>", helvetica)
	// Cut inside the cross-reference table: the trailer is gone (pdfcpu
	// copes with this one itself).
	cut := full[:bytes.Index(full, []byte("xref"))+10]
	d, err := Open(bytes.NewReader(cut))
	if err != nil {
		t.Fatalf("truncated: %v", err)
	}
	if s, _ := d.PageText(1); words(s) != "kept text" {
		t.Errorf("truncated: %q", s)
	}
	// Catalog and page tree lost (pdfTeX writes them last): the page
	// objects found make a new page tree.
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	b.WriteString("3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>\nendobj\n")
	b.WriteString("4 0 obj\n" + expandStream("<< >> STREAM(BT /F1 12 Tf 72 700 Td (orphan page) Tj ET)") + "\nendobj\n")
	b.WriteString("5 0 obj\n" + helvetica + "\nendobj\n")
	b.WriteString("6 0 obj\n<< /Length 100 >>\nstream\npartial")
	d, err = Open(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("no catalog: %v", err)
	}
	if s, _ := d.PageText(1); words(s) != "orphan page" || d.PageCount() != 1 || !d.Repaired() {
		t.Errorf("no catalog: %d pages, %q, repaired %v", d.PageCount(), s, d.Repaired())
	}
	// Corpus files cut at 60%: those without object streams come back with
	// the text of their complete pages.
	dir, names := corpusFiles(t)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
		if err != nil || len(data) < 10_000 {
			continue
		}
		d, err := Open(bytes.NewReader(data[:len(data)*6/10]))
		if err != nil {
			t.Logf("%s cut at 60%%: %v", name, err)
			continue
		}
		n := 0
		for p := 1; p <= d.PageCount(); p++ {
			s, _ := d.PageText(p)
			n += len(strings.Fields(s))
		}
		t.Logf("%s cut at 60%%: repaired %v, %d pages, %d words", name, d.Repaired(), d.PageCount(), n)
	}
}

func TestBombs(t *testing.T) {
	// A content stream that inflates to more than maxDecoded: the page
	// fails with an error, the document stays usable.
	var z bytes.Buffer
	zw, _ := flateWriter(&z)
	chunk := bytes.Repeat([]byte("0 0 m "), 1<<16)
	for n := 0; n <= maxDecoded; n += len(chunk) {
		zw.Write(chunk)
	}
	zw.Close()
	pdf := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
		"<< /Filter /FlateDecode >> STREAM("+z.String()+")",
	)
	d, err := Open(bytes.NewReader(pdf))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.PageText(1); err == nil {
		t.Error("bomb: no error")
	}
	// A form that draws itself stops at once; one drawn 300 times by
	// another shows 600,000 glyphs, which are capped at maxGlyphs.
	formA := "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /A 6 0 R /B 7 0 R >> >> >> STREAM(" +
		strings.Repeat("/B Do /A Do ", 300) + ")"
	formB := "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> >> STREAM(" +
		"BT /F1 0.1 Tf 72 700 Td (" + strings.Repeat("x", 2000) + ") Tj ET)"
	pdf = onePage("/A Do", "<< /XObject << /A 6 0 R >> >>", helvetica, formA, formB)
	d, err = Open(bytes.NewReader(pdf))
	if err != nil {
		t.Fatal(err)
	}
	glyphs, _, err := d.pageGlyphs(1, nil)
	if err != nil || len(glyphs) != maxGlyphs {
		t.Errorf("glyphs %d (cap %d), %v", len(glyphs), maxGlyphs, err)
	}
	if _, err := d.PageText(1); err != nil {
		t.Errorf("many glyphs: %v", err)
	}
}
