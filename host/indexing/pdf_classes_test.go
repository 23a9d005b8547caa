package indexing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge"
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
	res := knowledge.NewContainers(h)
	if res.Handles("report.pdf", "application/pdf") {
		t.Fatal("a PDF is handled as a container")
	}
	ing := knowledge.NewIngester(e.db, e.blobs, knowledge.NewExtractors(h), nil).WithContainers(res, e.db, e.blobs)
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
	} {
		t.Run(c.name, func(t *testing.T) {
			f := e.upload(t, svc, c.name, c.data)
			if _, err := ing.Ingest(ctx, f.ID, false); err != nil {
				t.Fatal(err)
			}
			st, err := e.db.ContentState(ctx, e.p, f.ID)
			if err != nil || st.Status != knowledge.StatusIndexed {
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
				if !ok || en.Status != string(knowledge.StatusIndexed) {
					t.Errorf("entry %s: %+v (found %v)", p, en, ok)
					continue
				}
				hits, err := e.db.SearchLexical(ctx, e.p, knowledge.Query{Text: word, FileIDs: []string{f.ID}})
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
			hits, err := e.db.SearchLexical(ctx, e.p, knowledge.Query{Text: c.text, FileIDs: []string{f.ID}})
			if err != nil || len(hits) == 0 {
				t.Errorf("the PDF's own text (%q): %+v %v", c.text, hits, err)
			}
		})
	}
}
