package indexing_test

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/progress"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// huckFinn is what the scripted OCR model answers for the corpus scan
// (Huckleberry Finn, chapter II, the page's first lines as printed).
const huckFinn = "Chapter II.\nWE went tiptoeing along a path amongst the trees back towards the end of the widow's garden, stooping down so as the branches wouldn't scrape our heads."

// ocrWorld: the pdf (and office, for pictures) plugins on a host whose
// model capability reaches a scripted vision model (operation ocr, priced),
// when withOCR, and the store, files and blobs of one workspace.
type ocrWorld struct {
	w   *worldtest.World
	svc *files.Service
	ex  *extract.Set
	ocr *ocr.Runner
}

func newOCRWorld(t *testing.T, withOCR bool, plugins ...string) *ocrWorld {
	t.Helper()
	return newOCRWorldOf(t, withOCR, plugins...)
}

// newOCRWorldTB is a world with an OCR model and the pdf plugin, for
// benchmarks.
func newOCRWorldTB(b *testing.B) *ocrWorld { return newOCRWorldOf(b, true, "pdf") }

func newOCRWorldOf(t testing.TB, withOCR bool, plugins ...string) *ocrWorld {
	t.Helper()
	models := map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "text-only", InputCHFPer1M: 1, OutputCHFPer1M: 1}}}
	if withOCR {
		models[modeluse.OpOCR] = []llm.ModelConfig{{Model: "gpt-4o-mini", InputCHFPer1M: 150, OutputCHFPer1M: 600}}
	}
	w := worldtest.New(t, worldtest.Options{Model: &worldtest.Model{Models: models,
		Retry: llm.RetryConfig{Attempts: 1}, Timeout: 20 * time.Second}})
	caps := &llm.Capabilities{Client: w.Client}
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(wasm.EgressOptions{}), caps.ModelCapability())...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := wasm.New(ctx, wasm.NewConfig().WithCapabilities(reg).WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	for _, n := range plugins {
		if _, err := h.Load(ctx, wasm.Source{Origin: "test:" + n, Module: wasmtest.Module(t, n), Builtin: true}); err != nil {
			t.Fatal(err)
		}
	}
	ex := extract.New(h)
	return &ocrWorld{w: w, svc: files.NewService(w.DB, w.Blobs, 0), ex: ex, ocr: ocr.New(w.DB, w.Blobs, ex, w.Client)}
}

func (o *ocrWorld) ingest(t *testing.T, name string, data []byte) filemeta.Item {
	t.Helper()
	return o.ingestTB(t, name, data)
}

func (o *ocrWorld) ingestTB(t testing.TB, name string, data []byte) filemeta.Item {
	t.Helper()
	f, _, err := o.svc.Upload(context.Background(), o.w.P, files.Upload{WorkspaceID: o.w.Workspace, Name: name, Content: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.New(o.w.DB, o.w.Blobs, o.ex, nil).Ingest(context.Background(), f.ID, false); err != nil {
		t.Fatal(err)
	}
	return f
}

func (o *ocrWorld) state(t *testing.T, f filemeta.Item) kindex.ContentState {
	t.Helper()
	st, err := o.w.DB.ContentStateOf(context.Background(), f.TenantID, f.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// found reports the pages a search finds in f, with the object ids.
func (o *ocrWorld) found(t *testing.T, f filemeta.Item, query string) map[int]string {
	t.Helper()
	hits, err := search.New(o.w.DB, nil, nil).Search(context.Background(), o.w.P, kindex.Query{Text: query, WorkspaceID: o.w.Workspace, FileIDs: []string{f.ID}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, h := range hits {
		out[h.Ref.PageIndex] = h.ObjectID
	}
	return out
}

// pageImage decodes the one image a scripted request carries.
func pageImage(r llmtest.ChatRequest) (llmtest.Image, image.Image, bool) {
	m := r.LastMessage()
	if len(m.Images) != 1 {
		return llmtest.Image{}, nil, false
	}
	im, _, err := image.Decode(bytes.NewReader(m.Images[0].Data))
	return m.Images[0], im, err == nil
}

// The model reads the page only if a page image of the scan's size came.
func readsScan(r llmtest.ChatRequest) llmtest.Step {
	_, im, ok := pageImage(r)
	if !ok || im.Bounds().Dx() != 800 || im.Bounds().Dy() != 981 {
		return llmtest.Fail(400, "the scripted model expected one 800x981 page image")
	}
	return llmtest.Reply(huckFinn).WithUsage(1105, 40)
}

// TestOCRScannedPDF: the corpus scan (one JPEG page, no text layer) is
// indexed with its page marked image only and nothing searchable; OCR
// sends the page's JPEG as it is stored in the PDF, in OpenAI's image wire
// format, to the OCR model, bills the call in CHF to the uploader, and
// stores the text on page 1 as OCR's, found by a search. A second run
// finds nothing left.
func TestOCRScannedPDF(t *testing.T) {
	o := newOCRWorld(t, true, "pdf")
	data := testcorpus.Read(t, "pdf", "ocrmypdf-c02-22-scanned.pdf")
	f := o.ingest(t, "scan.pdf", data)
	ctx := context.Background()

	st := o.state(t, f)
	if got := kindex.ImageOnlyPages(st.Index); !slices.Equal(got, []int{1}) {
		t.Fatalf("image-only pages %v, want [1]", got)
	}
	p := progress.Of(st)
	if p == nil || p.Searchable != 0 || p.Pages != 1 || !p.Pending || p.OCR != kindex.OCRPending {
		t.Fatalf("progress before OCR %+v", p)
	}
	if len(o.found(t, f, "tiptoeing")) != 0 {
		t.Fatal("found before OCR")
	}

	o.w.Server.Script(llmtest.Decide(readsScan))
	n, err := o.ocr.Run(ctx, f, nil)
	if err != nil || n != 1 {
		t.Fatalf("OCR read %d pages: %v", n, err)
	}
	reqs := o.w.Server.ChatRequests()
	if len(reqs) != 1 || reqs[0].Model != "gpt-4o-mini" {
		t.Fatalf("%d requests", len(reqs))
	}
	img, _, _ := pageImage(reqs[0])
	if img.MIMEType != "image/jpeg" || !bytes.Contains(data, img.Data) {
		t.Fatalf("sent %s of %d bytes, not the PDF's own JPEG", img.MIMEType, len(img.Data))
	}
	if got := o.found(t, f, "tiptoeing amongst"); got[1] != "ocr-1" {
		t.Fatalf("search found %v, want page 1's OCR object", got)
	}
	st = o.state(t, f)
	if p := progress.Of(st); p.Searchable != 1 || p.Pending || p.OCR != kindex.OCRDone {
		t.Fatalf("progress after OCR %+v", p)
	}
	pm := st.Index.Structure["pageMap"].([]any)[0].(map[string]any)
	if pm["textStatus"] != kindex.TextOCR {
		t.Fatalf("page map after OCR %v", pm)
	}
	// Billed in CHF to the uploader, for OCR.
	var purpose, user string
	var cost int64
	if err := o.w.DB.SQL().QueryRow(`SELECT purpose, user_id, cost_nchf FROM usage_records WHERE operation = 'ocr'`).Scan(&purpose, &user, &cost); err != nil {
		t.Fatal(err)
	}
	if purpose != "tool:ocrPage/ocr" || user != f.CreatedBy || cost <= 0 {
		t.Fatalf("usage %q %q %d", purpose, user, cost)
	}
	if n, err := o.ocr.Run(ctx, f, nil); err != nil || n != 0 || len(o.w.Server.ChatRequests()) != 1 {
		t.Fatalf("a second run read %d pages (%v)", n, err)
	}
}

// TestOCRFaxResumes: a two-page document (the fax, CCITT Group 4, then the
// JPEG scan) whose second page fails at the model is left with page 1
// searchable and says so; the next run (after a restart) reads page 2 only.
// The fax page is decoded in the sandbox and sent as a PNG whose pixels
// are the fax's.
func TestOCRFaxResumes(t *testing.T) {
	o := newOCRWorld(t, true, "pdf")
	dir := t.TempDir()
	merged := filepath.Join(dir, "two.pdf")
	if err := api.MergeCreateFile([]string{testcorpus.Path(t, "pdf", "fax-c02-22-g4.pdf"), testcorpus.Path(t, "pdf", "ocrmypdf-c02-22-scanned.pdf")}, merged, false, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	f := o.ingest(t, "fax.pdf", data)
	if got := kindex.ImageOnlyPages(o.state(t, f).Index); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("image-only pages %v", got)
	}
	ref, err := os.ReadFile("../../plugins/pdf/pdftext/testdata/fax-c02-22-g4.pdfimages.png")
	if err != nil {
		t.Fatal(err)
	}
	want, err := png.Decode(bytes.NewReader(ref))
	if err != nil {
		t.Fatal(err)
	}
	o.w.Server.Script(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		img, im, ok := pageImage(r)
		if !ok || img.MIMEType != "image/png" || im.Bounds() != want.Bounds() {
			return llmtest.Fail(400, "expected the fax as PNG")
		}
		b := want.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r1, _, _, _ := im.At(x, y).RGBA()
				r2, _, _, _ := want.At(x, y).RGBA()
				if r1>>8 != r2>>8 {
					return llmtest.Fail(400, "the fax's pixels differ")
				}
			}
		}
		return llmtest.Reply("FAX " + huckFinn)
	}), llmtest.Fail(503, "the model is overloaded"))
	n, err := o.ocr.Run(context.Background(), f, nil)
	if err == nil || n != 1 {
		t.Fatalf("first run read %d pages, err %v; want 1 and the model's failure", n, err)
	}
	if got := o.found(t, f, "FAX tiptoeing"); got[1] != "ocr-1" {
		t.Fatalf("page 1 not found after the first run: %v", got)
	}
	p := progress.Of(o.state(t, f))
	if p.Searchable != 1 || p.Pages != 2 || !p.Pending || !strings.Contains(p.Message, "1 of 2 pages searchable") {
		t.Fatalf("progress after the failure %+v", p)
	}
	o.w.Server.Script(llmtest.Decide(readsScan))
	if n, err := o.ocr.Run(context.Background(), f, nil); err != nil || n != 1 {
		t.Fatalf("second run read %d pages: %v", n, err)
	}
	if got := len(o.w.Server.ChatRequests()); got != 3 {
		t.Fatalf("%d model requests, want 3 (page 1, page 2 failed, page 2)", got)
	}
	if got := o.found(t, f, "tiptoeing"); got[2] != "ocr-2" {
		t.Fatalf("page 2 not found: %v", got)
	}
}

// TestOCRNotConfigured: without an OCR model the scan stays unsearchable,
// and its status says why and how to enable OCR; no model is asked.
func TestOCRNotConfigured(t *testing.T) {
	o := newOCRWorld(t, false, "pdf")
	f := o.ingest(t, "scan.pdf", testcorpus.Read(t, "pdf", "ocrmypdf-c02-22-scanned.pdf"))
	if n, err := o.ocr.Run(context.Background(), f, nil); err != nil || n != 0 {
		t.Fatalf("run %d %v", n, err)
	}
	p := progress.Of(o.state(t, f))
	if p.OCR != kindex.OCRNotConfigured || p.Pending || p.Searchable != 0 || !strings.Contains(p.Message, "AGENTHOST_MODEL_OCR") {
		t.Fatalf("progress %+v", p)
	}
	if n := len(o.w.Server.Requests()); n != 0 {
		t.Fatalf("%d model requests", n)
	}
}

// TestOCRImageFile: a picture of text (the fax page as PNG) is indexed
// image only, not as an ordinary success, and OCR sends the file as it is.
func TestOCRImageFile(t *testing.T) {
	o := newOCRWorld(t, true, "pdf", "office")
	data, err := os.ReadFile("../../plugins/pdf/pdftext/testdata/fax-c02-22-g4.pdfimages.png")
	if err != nil {
		t.Fatal(err)
	}
	f := o.ingest(t, "letter.png", data)
	st := o.state(t, f)
	if st.Index.Structure[kindex.StructTextStatus] != kindex.TextImageOnly {
		t.Fatalf("image file structure %v", st.Index.Structure)
	}
	o.w.Server.Script(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if img, _, ok := pageImage(r); !ok || !bytes.Equal(img.Data, data) {
			return llmtest.Fail(400, "expected the file itself")
		}
		return llmtest.Reply(huckFinn)
	}))
	if n, err := o.ocr.Run(context.Background(), f, nil); err != nil || n != 1 {
		t.Fatalf("run %d %v", n, err)
	}
	if got := o.found(t, f, "tiptoeing"); got[0] != "ocr" {
		t.Fatalf("found %v", got)
	}
	if p := progress.Of(o.state(t, f)); p.Searchable != 1 || p.Pending {
		t.Fatalf("progress %+v", p)
	}
}

// BenchmarkOCRPagesPerMinute: the host-side cost of the OCR path, with a
// scripted model that answers at once: a 20-page scan (the corpus's JPEG
// page and its CCITT fax, alternating) is indexed, then every page is
// taken out of the PDF in the sandbox (the JPEG as it is, the fax decoded
// and re-encoded as PNG), sent to the model in OpenAI's wire format and
// its text stored and indexed. The figure is pages read per minute of
// that run.
func BenchmarkOCRPagesPerMinute(b *testing.B) {
	dir := b.TempDir()
	var in []string
	for range 10 {
		in = append(in, testcorpus.Path(b, "pdf", "ocrmypdf-c02-22-scanned.pdf"), testcorpus.Path(b, "pdf", "fax-c02-22-g4.pdf"))
	}
	merged := filepath.Join(dir, "scans.pdf")
	if err := api.MergeCreateFile(in, merged, false, nil); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(merged)
	if err != nil {
		b.Fatal(err)
	}
	var rates []float64
	for range b.N {
		o := newOCRWorldTB(b)
		o.w.Server.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
			if _, _, ok := pageImage(r); !ok {
				return llmtest.Fail(400, "no page image")
			}
			return llmtest.Reply(huckFinn)
		}))
		f := o.ingestTB(b, "scans.pdf", data)
		start := time.Now()
		n, err := o.ocr.Run(context.Background(), f, nil)
		if err != nil || n != len(in) {
			b.Fatalf("read %d of %d pages: %v", n, len(in), err)
		}
		rates = append(rates, float64(n)/time.Since(start).Minutes())
	}
	figure.Report("ocr.pages_per_min", figure.Median(rates), "pages/min")
}

// TestProgressOfLongPDF: a long PDF indexed by its pre-scan says, in its
// index and where the agent reads it, how many pages are searchable so far,
// until the background completion has extracted every page.
func TestProgressOfLongPDF(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf")
	f := w.ingest(t, ingest.SmartPDF{MaxPages: 40}, "pdf", "deb-gutenprint-users-manual.pdf")
	var ix knowledge.IndexResponse
	if err := w.call(w.caller, "index", map[string]any{"file": f.ID}, &ix); err != nil {
		t.Fatal(err)
	}
	if ix.Status != kindex.StatusIndexed || ix.Progress == nil || ix.Progress.Searchable != 0 || ix.Progress.Pages != 73 || !ix.Progress.Pending {
		t.Fatalf("index of a pre-scanned PDF: status %s, progress %+v", ix.Status, ix.Progress)
	}
	var read knowledge.ReadObjectsResponse
	if err := w.call(w.caller, "read_objects", map[string]any{"file": f.ID, "pages": []int{9}}, &read); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read.Indexing, "still being indexed: 1 of 73 pages searchable; 72 pages are still being extracted") {
		t.Fatalf("read_objects says %q", read.Indexing)
	}
	reader := ondemand.NewReader(w.db, w.blobs, w.pages)
	if _, err := reader.ExtractRest(context.Background(), f, nil); err != nil {
		t.Fatal(err)
	}
	ix = knowledge.IndexResponse{}
	if err := w.call(w.caller, "index", map[string]any{"file": f.ID}, &ix); err != nil {
		t.Fatal(err)
	}
	if ix.Progress.Searchable != 73 || ix.Progress.Pending {
		t.Fatalf("progress after completion %+v", ix.Progress)
	}
	read = knowledge.ReadObjectsResponse{}
	if err := w.call(w.caller, "read_objects", map[string]any{"file": f.ID, "pages": []int{9}}, &read); err != nil || read.Indexing != "" {
		t.Fatalf("read_objects of a complete PDF says %q (%v)", read.Indexing, err)
	}
}

// TestOCRThroughTheQueue: an upload queues its ingestion and its OCR; the
// OCR job waits for the ingestion, then reads the scan in the background,
// and the file becomes searchable without anyone asking.
func TestOCRThroughTheQueue(t *testing.T) {
	o := newOCRWorld(t, true, "pdf")
	ctx := context.Background()
	db := o.w.DB
	if err := jobs.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	reg := jobs.NewRegistry()
	indexing.RegisterJobs(reg, ingest.New(db, o.w.Blobs, o.ex, nil), db)
	indexing.RegisterCompletion(reg, ondemand.NewReader(db, o.w.Blobs, o.ex), db, db)
	indexing.RegisterOCR(reg, o.ocr, db)
	q, err := jobs.New(db, jobs.Config{Registry: reg, Work: true, RetryBase: 50 * time.Millisecond, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	o.w.Server.SetDefault(llmtest.EndpointChat, llmtest.Decide(readsScan))
	svc := files.NewService(db, o.w.Blobs, 0).WithIndexer(indexing.NewJobIndexer(q), nil)
	f, _, err := svc.Upload(ctx, o.w.P, files.Upload{WorkspaceID: o.w.Workspace, Name: "scan.pdf", Content: bytes.NewReader(testcorpus.Read(t, "pdf", "ocrmypdf-c02-22-scanned.pdf"))})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if got := o.found(t, f, "tiptoeing"); got[1] == "ocr-1" {
			break
		}
		if time.Now().After(deadline) {
			st, _ := db.ContentStateOf(ctx, f.TenantID, f.SHA256)
			t.Fatalf("the scan was not read by OCR in the background: %s %+v", st.Status, progress.Of(st))
		}
	}
	if p := progress.Of(o.state(t, f)); p.Pending || p.Searchable != 1 || p.OCR != kindex.OCRDone {
		t.Fatalf("progress %+v", p)
	}
}

// TestOCRMultiPageTIFF: every page of a multi-page TIFF (a two-page fax
// written by libtiff) is image only and read by OCR, each page sent as its
// own picture and found on its page; before, a TIFF was one picture, its
// first page, and the second page was never read.
func TestOCRMultiPageTIFF(t *testing.T) {
	o := newOCRWorld(t, true, "pdf", "office")
	f := o.ingest(t, "fax.tif", testcorpus.Read(t, "images", "fax-camlidl-2pages.tif"))
	st := o.state(t, f)
	if got := kindex.ImageOnlyPages(st.Index); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("image-only pages %v, want [1 2] (structure %v)", got, st.Index.Structure)
	}
	var sent [][]byte
	page := func(r llmtest.ChatRequest) llmtest.Step {
		img, im, ok := pageImage(r)
		if !ok || img.MIMEType != "image/png" || im.Bounds().Dx() != 827 {
			return llmtest.Fail(400, "expected one 827-pixel-wide page as PNG")
		}
		sent = append(sent, img.Data)
		return llmtest.Reply([]string{"Camlidl user's manual", "interface definition language stub generator"}[min(len(sent), 2)-1])
	}
	o.w.Server.Script(llmtest.Decide(page), llmtest.Decide(page))
	if n, err := o.ocr.Run(context.Background(), f, nil); err != nil || n != 2 {
		t.Fatalf("run %d %v", n, err)
	}
	if len(sent) != 2 || bytes.Equal(sent[0], sent[1]) {
		t.Fatalf("%d pictures sent, the same twice: %v", len(sent), len(sent) == 2)
	}
	if got := o.found(t, f, "stub generator"); got[2] != "ocr-2" {
		t.Errorf("page 2's text found at %v", got)
	}
	st = o.state(t, f)
	if p := progress.Of(st); p.Pages != 2 || p.Searchable != 2 || p.Pending {
		t.Errorf("progress %+v", p)
	}
	if st.Index.Structure[kindex.StructTextStatus] != kindex.TextOCR {
		t.Errorf("text status %v once both pages are read", st.Index.Structure[kindex.StructTextStatus])
	}
}
