package indexing_test

import (
	"context"
	"os"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// question is a question written from a corpus document, with the page that
// answers it.
type question struct {
	text, file string
	page       int
}

// questions were written by reading the corpus pages (pdftotext references);
// the answer's page is where the text that answers them stands.
var questions = []question{
	{"Can the FASTA program read Microsoft Word DOC files or rich text files?", "deb-fasta-guide.pdf", 5},
	{"How do I build my own sequence library by concatenating several sequence files?", "deb-fasta-guide.pdf", 5},
	{"Does installing Gutenprint from source need superuser privileges?", "deb-gutenprint-users-manual.pdf", 10},
	{"Can the color correction state with its lookup tables be dumped from the GIMP plugin?", "deb-gutenprint-users-manual.pdf", 40},
	{"Who are the upstream author, the upstream maintainer and the sponsor among the people around Debian?", "deb-debmake-doc.en.pdf", 12},
	{"How are Python wheel packages from PyPI turned into Debian packages with dh_python3 and pybuild?", "deb-debmake-doc.en.pdf", 100},
	{"How is the number of elements of the ML array determined when a C array is converted?", "deb-camlidl-1.04.pdf", 10},
	{"What is the grammar of IDL attributes, with ident and uuid?", "deb-camlidl-1.04.pdf", 4},
	{"Which branch records the upstream modifications as -p1 patches in debian/patches?", "deb-debmake-doc.en.pdf", 60},
	{"How do I draw a title above the plot in Gri with a font size of 20?", "deb-gri-manual.pdf", 30},
}

// retrievalHit5 indexes the corpus PDFs the questions name through the
// sandboxed PDF extractor and returns the share of questions whose answer
// page is among the first five lexical hits.
func retrievalHit5(tb testing.TB) float64 {
	ctx := context.Background()
	e := newEnv(tb)
	db, p := e.db, e.p
	ingester := ingest.New(db, e.blobs, extract.New(wasmtest.Host(tb, "pdf")), nil)
	svc := files.NewService(db, e.blobs, 0)
	ids := map[string]string{}
	for _, q := range questions {
		if ids[q.file] != "" {
			continue
		}
		data, err := os.ReadFile(testcorpus.Path(tb, "pdf", q.file))
		if err != nil {
			tb.Fatal(err)
		}
		f := e.upload(tb, svc, q.file, data)
		if _, err := ingester.Ingest(ctx, f.ID, false); err != nil {
			tb.Fatalf("%s: %v", q.file, err)
		}
		ids[q.file] = f.ID
	}
	hit := 0
	for _, q := range questions {
		hits, err := db.SearchLexical(ctx, p, kindex.Query{Text: q.text, WorkspaceID: e.ws, Limit: 5})
		if err != nil {
			tb.Fatal(err)
		}
		found := false
		for _, h := range hits {
			found = found || (h.FileID == ids[q.file] && h.Ref.PageIndex == q.page)
		}
		if found {
			hit++
		} else {
			tb.Logf("missed: %q (want %s p.%d)", q.text, q.file, q.page)
		}
	}
	return float64(hit) / float64(len(questions))
}

// TestRetrieval: hit@5 of the lexical index alone on questions written from
// the corpus is at least 0.8.
func TestRetrieval(t *testing.T) {
	if got := retrievalHit5(t); got < 0.8 {
		t.Fatalf("hit@5 = %.2f, want ≥ 0.8", got)
	}
}

// BenchmarkRetrieval reports retrieval.lexical.hit5 ratio.
func BenchmarkRetrieval(b *testing.B) {
	figure.Report("retrieval.lexical.hit5", retrievalHit5(b), "ratio")
}
