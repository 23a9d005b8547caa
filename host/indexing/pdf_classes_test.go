package indexing_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// TestPDFAttachmentsIndexed: a PDF's attached files are listed as its
// entries and indexed each by its own extractor, found by search through
// the PDF; the PDF's own text is indexed as before, and a PDF is not taken
// for a container.
func TestPDFAttachmentsIndexed(t *testing.T) {
	e := newEnv(t)
	h := wasmtest.Host(t, "containers", "pdf", "office")
	res := extract.NewContainers(h)
	if res.Handles("report.pdf", "application/pdf") {
		t.Fatal("a PDF is handled as a container")
	}
	ing := ingest.New(e.db, e.blobs, extract.New(h), nil).WithContainers(res, e.db, e.blobs)
	svc := files.NewService(e.db, e.blobs, 0)
	entries := indexing.NewContainers(e.db, ing)
	ctx := context.Background()

	inner := testpdf.WithAttachments("Inner minutes of the quarterly audit", testpdf.File{Name: "ledger.csv", Data: []byte("account,amount\nzeppelin-fund,42\n")})
	doc := testpdf.WithAttachments("Outer report on the harbour renovation",
		testpdf.File{Name: "notes.txt", Data: []byte("The marmalade committee approved the budget.\n")},
		testpdf.File{Name: "minutes.pdf", Data: inner},
		testpdf.File{Name: "../../etc/passwd", Data: []byte("not a password file\n")},
	)
	for _, c := range []struct {
		name string
		data []byte
		want map[string]string // entry path → a word found in it
		text string            // a word of the PDF itself
	}{
		{"report.pdf", doc, map[string]string{
			"report.pdf/notes.txt":              "marmalade",
			"report.pdf/minutes.pdf":            "quarterly",
			"report.pdf/minutes.pdf/ledger.csv": "zeppelin",
			"report.pdf/passwd":                 "password",
		}, "harbour"},
		{"apptools.pdf", testcorpus.Read(t, "pdf", "classes", "attach-apptools.pdf"), map[string]string{
			"apptools.pdf/apptools.dtx": "docstrip",
		}, "apptools"},
		// A PDF first seen inside an archive: its attachments are
		// resolved and become the archive's entries below it.
		{"fresh.zip", zipOf(t, map[string][]byte{"fresh.pdf": testpdf.WithAttachments("Field guide to the lighthouse",
			testpdf.File{Name: "glossary.txt", Data: []byte("A quokka is not a lighthouse keeper.\n")})}), map[string]string{
			"fresh.zip/fresh.pdf":              "lighthouse",
			"fresh.zip/fresh.pdf/glossary.txt": "quokka",
		}, "lighthouse"},
		// A PDF indexed before, inside an archive: its attachments,
		// resolved once, are the archive's entries below it.
		{"bundle.zip", zipOf(t, map[string][]byte{"docs/report.pdf": doc}), map[string]string{
			"bundle.zip/docs/report.pdf":                        "harbour",
			"bundle.zip/docs/report.pdf/notes.txt":              "marmalade",
			"bundle.zip/docs/report.pdf/minutes.pdf":            "quarterly",
			"bundle.zip/docs/report.pdf/minutes.pdf/ledger.csv": "zeppelin",
			"bundle.zip/docs/report.pdf/passwd":                 "password",
		}, "harbour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := e.upload(t, svc, c.name, c.data)
			if _, err := ing.Ingest(ctx, f.ID, false); err != nil {
				t.Fatal(err)
			}
			st, err := e.db.ContentState(ctx, e.p, f.ID)
			if err != nil || st.Status != kindex.StatusIndexed {
				t.Fatalf("state %+v, %v", st, err)
			}
			list, err := entries.Entries(ctx, e.p, f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != len(c.want) {
				t.Errorf("%d entries, want %d: %+v", len(list), len(c.want), list)
			}
			for p, word := range c.want {
				en, ok := entryAt(list, p)
				if !ok || en.Status != string(kindex.StatusIndexed) {
					t.Errorf("entry %s: %+v (found %v)", p, en, ok)
					continue
				}
				hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: word, FileIDs: []string{f.ID}})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, h := range hits {
					found = found || strings.HasSuffix(h.Ref.ContainerPath, strings.TrimPrefix(p, c.name))
				}
				if !found {
					t.Errorf("%q not found in %s: %+v", word, p, hits)
				}
			}
			hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: c.text, FileIDs: []string{f.ID}})
			if err != nil || len(hits) == 0 {
				t.Errorf("the PDF's own text (%q): %+v %v", c.text, hits, err)
			}
			// An attachment is extracted on demand like an archive's entry
			// (from what indexing stored); one the PDF does not carry is
			// no entry, not "not a container".
			for p := range c.want {
				if en, err := entries.ExtractEntry(ctx, e.p, f.ID, p); err != nil || en.Path != p || en.Status != string(kindex.StatusIndexed) {
					t.Errorf("extracting %s on demand: %+v, %v", p, en, err)
				}
			}
			if _, err := entries.ExtractEntry(ctx, e.p, f.ID, c.name+"/absent.txt"); !errors.Is(err, extract.ErrNoEntry) {
				t.Errorf("an attachment the PDF does not carry: %v", err)
			}
		})
	}
}

// TestPDFUnreadPagesAndForms: a page whose glyphs have no known text, or
// whose content stream does not decode, is
// reported in the stored index (unreadPages, the page map) rather than
// indexed as an empty success; a comment drawn over a page is found on
// it; a filled form's values are indexed as "label: value", referenced to
// their page.
func TestPDFUnreadPagesAndForms(t *testing.T) {
	e := newEnv(t)
	h := wasmtest.Host(t, "pdf")
	ing := ingest.New(e.db, e.blobs, extract.New(h), nil)
	svc := files.NewService(e.db, e.blobs, 0)
	ctx := context.Background()

	// Page 1 readable, page 2 drawn in a Type 3 font whose glyph names say
	// nothing, page 3's content stream does not decode.
	content := func(s string) string { return "<< /Length " + itoa(len(s)) + " >>\nstream\n" + s + "\nendstream" }
	unreadable := testpdf.Build(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R 10 0 R] /Count 3 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /T3 8 0 R >> >> /Contents 6 0 R >>",
		content("BT /F1 12 Tf 72 700 Td (A readable first page) Tj ET"),
		content("BT /T3 12 Tf 72 700 Td (ABABABABAB) Tj ET"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /glyphA 9 0 R /glyphB 9 0 R >>"+
			" /Encoding << /Differences [65 /glyphA /glyphB] >> /FirstChar 65 /LastChar 66 /Widths [500 500] >>",
		content("500 0 d0"),
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents 11 0 R >>",
		strings.Replace(content("not deflate data, whatever the filter says"), "<<", "<< /Filter /FlateDecode", 1),
	)
	f := e.upload(t, svc, "scanned-fonts.pdf", unreadable)
	if _, err := ing.Ingest(ctx, f.ID, false); err != nil {
		t.Fatal(err)
	}
	st, err := e.db.ContentState(ctx, e.p, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	unread, _ := st.Index.Structure["unreadPages"].([]any)
	if len(unread) != 2 || !strings.Contains(toJSON(unread[0]), `"page":2`) || !strings.Contains(toJSON(unread[0]), `"textStatus":"unreadable"`) ||
		!strings.Contains(toJSON(unread[1]), `"page":3`) || !strings.Contains(toJSON(unread[1]), `"textStatus":"unreadable"`) ||
		!strings.Contains(toJSON(unread[1]), "content stream cannot be read") {
		t.Errorf("unreadPages: %s", toJSON(st.Index.Structure["unreadPages"]))
	}

	// A comment drawn over a page is found on that page.
	annotated := e.upload(t, svc, "annotated.pdf", testcorpus.Read(t, "pdf", "classes", "annots-pdfcpu-annottest.pdf"))
	if _, err := ing.Ingest(ctx, annotated.ID, false); err != nil {
		t.Fatal(err)
	}
	hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: "gopher", FileIDs: []string{annotated.ID}})
	if err != nil || len(hits) == 0 || hits[0].Ref.PageIndex != 1 {
		t.Errorf("the comment 'gopher' not found on page 1: %v %+v", err, hits)
	}

	form := e.upload(t, svc, "form.pdf", testcorpus.Read(t, "pdf", "classes", "forms-pdfcpu-demo-en.pdf"))
	if _, err := ing.Ingest(ctx, form.ID, false); err != nil {
		t.Fatal(err)
	}
	hits, err = e.db.SearchLexical(ctx, e.p, kindex.Query{Text: "Jackie", FileIDs: []string{form.ID}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		found = found || (h.Ref.PageIndex == 1 && h.Ref.Location == "page:1/form" && strings.Contains(h.Text, "First Name: Jackie"))
	}
	if !found {
		t.Errorf("form value not found as 'First Name: Jackie' on page 1: %+v", hits)
	}

	// A dynamic XFA form has no widgets: its values are the XFA data,
	// labelled by the template, on page 1 (whose text is "Please wait...").
	xfa := e.upload(t, svc, "imm1344e.pdf", testcorpus.Read(t, "pdf", "classes", "forms-xfa-imm1344e-filled.pdf"))
	if _, err := ing.Ingest(ctx, xfa.ID, false); err != nil {
		t.Fatal(err)
	}
	hits, err = e.db.SearchLexical(ctx, e.p, kindex.Query{Text: "Osthoff", FileIDs: []string{xfa.ID}})
	if err != nil {
		t.Fatal(err)
	}
	found = false
	for _, h := range hits {
		found = found || (h.Ref.PageIndex == 1 && h.Ref.Location == "page:1/form" && strings.Contains(h.Text, "Family name(s): Osthoff"))
	}
	if !found {
		t.Errorf("XFA value not found as 'Family name(s): Osthoff' on page 1: %+v", hits)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
