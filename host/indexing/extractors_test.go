package indexing_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// injectedMarker is the word of the text the hostile extractor aaa-pdf
// answers every document with (host/wasm/testdata/plugins/aaa-pdf).
const injectedMarker = "zzinjectedzz"

// operatorHost is a host as `serve -plugins DIR -allow-unsigned` makes it:
// builtins loaded as the binary's built-in plugins, thirdParty as an
// operator's unsigned plugins, granted what grants says.
func operatorHost(t *testing.T, builtins, thirdParty []string, grants map[string][]string) *wasm.Host {
	t.Helper()
	ctx := context.Background()
	reg, err := wasm.NewRegistry(wasmtest.WithModel(wasm.StandardCapabilities(wasm.EgressOptions{}))...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := wasm.NewConfig().WithCapabilities(reg).WithAllowUnsigned(true).
		WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache"))
	for name, caps := range grants {
		cfg = cfg.WithGrant(name, caps...)
	}
	h, err := wasm.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	for _, n := range builtins {
		if _, err := h.Load(ctx, wasm.Source{Origin: "builtin:" + n, Module: wasmtest.Module(t, n), Builtin: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range thirdParty {
		p, err := h.Load(ctx, wasm.Source{Origin: "plugins/" + n + ".wasm", Module: wasmtest.Module(t, n)})
		if err != nil {
			t.Fatal(err)
		}
		if p.Builtin() {
			t.Fatalf("%s loaded as a built-in", n)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // the first compilation on a busy machine
	defer cancel()
	if err := h.Warm(wctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHostileExtractorCannotTakeOver (issue 10 item 6): a third-party
// extractor with no capabilities, named to sort before the built-ins and
// claiming PDF and plain text, loaded beside them, receives no upload:
// the built-ins extract them, its injected text is not searchable, and the
// file's index record names the built-in. Only when the operator chooses
// it for application/pdf does it extract PDFs (and only PDFs), and the
// record says the operator chose it.
func TestHostileExtractorCannotTakeOver(t *testing.T) {
	ctx := context.Background()
	h := operatorHost(t, []string{"pdf", "office"}, []string{"aaa-pdf"}, nil)
	pdfDoc := testpdf.OnePage("Quarterly travel budget approved by the board")
	const txtDoc = "The quarterly travel budget covers trains and hotels."
	for _, c := range []struct {
		name                 string
		choice               extract.OperatorChoice
		pdfBy, txtBy         string // the plugins that extract the PDF and the text file
		pdfChosen            kindex.ChosenBy
		injectedHits, pdfHit int
	}{
		{"built-ins win", nil, "pdf", "office", kindex.ChosenBuiltin, 0, 1},
		{"operator chooses aaa-pdf for PDF", extract.OperatorChoice{"application/pdf": "aaa-pdf"}, "aaa-pdf", "office", kindex.ChosenOperator, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			var logs bytes.Buffer
			ex := extract.New(h).WithChoice(c.choice).WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			if err := ex.Check(); err != nil {
				t.Fatal(err)
			}
			ingester := ingest.New(e.db, e.blobs, ex, nil).WithSmartPDF(ingest.DefaultSmartPDF).WithContainers(ex.Containers(), e.db, e.blobs)
			svc := files.NewService(e.db, e.blobs, 0)
			pdf := e.upload(t, svc, "budget.pdf", pdfDoc)
			txt := e.upload(t, svc, "budget.txt", []byte(txtDoc))
			for _, f := range []filemeta.Item{pdf, txt} {
				if _, err := ingester.Ingest(ctx, f.ID, false); err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
			}
			for _, w := range []struct {
				f  filemeta.Item
				by string
			}{{pdf, c.pdfBy}, {txt, c.txtBy}} {
				st, err := e.db.ContentState(ctx, e.p, w.f.ID)
				if err != nil || st.Status != kindex.StatusIndexed || st.Extractor == nil || st.Extractor.Name != w.by {
					t.Fatalf("%s: %+v (extractor %+v) %v, want extracted by %s", w.f.Name, st, st.Extractor, err, w.by)
				}
				p, _ := h.Plugin(w.by)
				if st.Extractor.SHA256 != p.SHA256()[:12] || st.Extractor.Version != p.Manifest().Version || st.Extractor.Builtin != p.Builtin() {
					t.Fatalf("%s: record %+v does not identify %s (sha256 %s)", w.f.Name, st.Extractor, w.by, p.SHA256())
				}
			}
			st, _ := e.db.ContentState(ctx, e.p, pdf.ID)
			if st.Extractor.ChosenBy != c.pdfChosen || st.Extractor.Match != "application/pdf" {
				t.Fatalf("PDF record %+v, want chosen by %s for application/pdf", st.Extractor, c.pdfChosen)
			}
			wantComp := []string{"aaa-pdf"}
			if c.pdfBy == "aaa-pdf" {
				wantComp = []string{"pdf"}
			}
			if !slices.Equal(st.Extractor.Competitors, wantComp) {
				t.Fatalf("PDF record competitors %v, want %v", st.Extractor.Competitors, wantComp)
			}
			if st, _ := e.db.ContentState(ctx, e.p, txt.ID); st.Extractor.ChosenBy != kindex.ChosenBuiltin || !slices.Equal(st.Extractor.Competitors, []string{"aaa-pdf"}) {
				t.Fatalf("text record %+v: the operator's PDF choice must not give it plain text", st.Extractor)
			}

			hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: injectedMarker})
			if err != nil || len(hits) != c.injectedHits {
				t.Fatalf("search for the injected text: %d hits %+v %v, want %d", len(hits), hits, err, c.injectedHits)
			}
			for _, hit := range hits {
				if hit.FileID != pdf.ID {
					t.Fatalf("injected text found in %s", hit.FileName)
				}
			}
			hits, err = e.db.SearchLexical(ctx, e.p, kindex.Query{Text: "approved board", FileIDs: []string{pdf.ID}})
			if err != nil || len(hits) != c.pdfHit {
				t.Fatalf("search for the PDF's own text: %d hits %v, want %d", len(hits), err, c.pdfHit)
			}

			// Start-up logs the decision per plugin, each document's choice at debug.
			l := logs.String()
			for _, want := range []string{
				`msg="extractor serves these types" plugin=pdf`, `msg="extractor serves these types" plugin=office`,
				"extractor chosen\" name=budget.pdf mimeType=application/pdf tool=extract plugin=" + c.pdfBy,
				"extractor chosen\" name=budget.txt",
			} {
				if !strings.Contains(l, want) {
					t.Errorf("log lacks %q:\n%s", want, l)
				}
			}
			if c.choice == nil && !strings.Contains(l, `level=WARN msg="extractor's claims overruled`) {
				t.Errorf("log does not warn that aaa-pdf's claims were overruled:\n%s", l)
			}
			if c.choice != nil && !strings.Contains(l, `msg="extractor chosen by the operator" mimeType=application/pdf plugin=aaa-pdf`) {
				t.Errorf("log does not show the operator's choice:\n%s", l)
			}
		})
	}
}

// TestExtractorChoiceContested: two third-party extractors claim plain
// text and no built-in serves it: neither is chosen, whatever their names.
// The upload fails with the reason naming both, its index record says no
// extractor was chosen and which competed, and start-up warns about the
// type. The operator's choice settles it.
func TestExtractorChoiceContested(t *testing.T) {
	ctx := context.Background()
	h := operatorHost(t, []string{"pdf"}, []string{"aaa-pdf", "textextract"}, map[string][]string{"textextract": {"input"}})
	for _, c := range []struct {
		name   string
		choice extract.OperatorChoice
		want   string // "" none
	}{
		{"no guess", nil, ""},
		{"operator settles it", extract.OperatorChoice{"text/plain": "textextract"}, "textextract"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			var logs bytes.Buffer
			ex := extract.New(h).WithChoice(c.choice).WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))
			if err := ex.Check(); err != nil {
				t.Fatal(err)
			}
			ingester := ingest.New(e.db, e.blobs, ex, nil)
			f := e.upload(t, files.NewService(e.db, e.blobs, 0), "notes.txt", []byte(doc))
			_, err := ingester.Ingest(ctx, f.ID, false)
			st, serr := e.db.ContentState(ctx, e.p, f.ID)
			if serr != nil || st.Extractor == nil {
				t.Fatalf("state %+v %v", st, serr)
			}
			if c.want != "" {
				if err != nil || st.Status != kindex.StatusIndexed || st.Extractor.Name != c.want || st.Extractor.ChosenBy != kindex.ChosenOperator {
					t.Fatalf("ingest %v, state %+v, record %+v", err, st, st.Extractor)
				}
				return
			}
			if err == nil || st.Status != kindex.StatusFailed || !strings.Contains(st.Error, "aaa-pdf, textextract all claim text/plain") {
				t.Fatalf("ingest %v, state %q %q", err, st.Status, st.Error)
			}
			if rec := st.Extractor; rec.Name != "" || rec.ChosenBy != kindex.ChosenNone || !slices.Equal(rec.Competitors, []string{"aaa-pdf", "textextract"}) || rec.Reason == "" {
				t.Fatalf("record %+v", rec)
			}
			if hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: injectedMarker}); err != nil || len(hits) != 0 {
				t.Fatalf("injected text searchable: %+v %v", hits, err)
			}
			if l := logs.String(); !strings.Contains(l, "level=WARN msg=\"no extractor for a type several third-party plugins claim") ||
				!strings.Contains(l, "type=text/plain plugins=\"[aaa-pdf textextract]\"") {
				t.Errorf("start-up log does not name the contested type and its plugins:\n%s", l)
			}
		})
	}
}

// TestExtractorChoiceRefused: an operator's choice that does not fit the
// loaded plugins is refused at start-up, each mistake named.
func TestExtractorChoiceRefused(t *testing.T) {
	h := operatorHost(t, []string{"pdf", "office", "echo"}, []string{"aaa-pdf"}, nil)
	for _, c := range []struct {
		choice extract.OperatorChoice
		want   []string
	}{
		{extract.OperatorChoice{"application/pdf": "nosuch"}, []string{`application/pdf=nosuch: no plugin "nosuch" is loaded (extractors: aaa-pdf, office, pdf)`}},
		{extract.OperatorChoice{"application/pdf": "office"}, []string{`application/pdf=office: plugin "office" does not declare application/pdf`}},
		{extract.OperatorChoice{"image/png": "aaa-pdf"}, []string{`image/png=aaa-pdf: plugin "aaa-pdf" does not declare image/png`}},
		{extract.OperatorChoice{"text/*": "aaa-pdf"}, []string{`text/*=aaa-pdf: plugin "aaa-pdf" does not declare text/*`}},
		{extract.OperatorChoice{"application/json": "echo"}, []string{`application/json=echo: plugin "echo" is not an extractor`}},
		{extract.OperatorChoice{"pdf": "pdf"}, []string{`"pdf" is not a MIME type`}},
		{extract.OperatorChoice{"application/pdf": "nosuch", "text/plain": "pdf"}, []string{`no plugin "nosuch"`, `plugin "pdf" does not declare text/plain`}},
	} {
		err := extract.New(h).WithChoice(c.choice).Check()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want it to say %q", c.choice, err, w)
			}
		}
	}
	for _, ok := range []extract.OperatorChoice{
		{"application/pdf": "aaa-pdf", "text/plain": "aaa-pdf"},
		{"Application/PDF": "pdf"}, // a built-in may be named too
	} {
		if err := extract.New(h).WithChoice(ok).Check(); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}
