package indexing_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
)

// countingPages counts on-demand page extractions (calls of the PDF
// plugin's readPages and the pages they covered).
type countingPages struct {
	inner        *extract.Set
	calls, pages atomic.Int32
}

func (c *countingPages) ReadPages(ctx context.Context, name, mimeType string, in wasm.Input, from, to int, sections []ondemand.Section) ([]content.Object, error) {
	c.calls.Add(1)
	c.pages.Add(int32(to - from + 1))
	return c.inner.ReadPages(ctx, name, mimeType, in, from, to, sections)
}

// knowledgeWorld is an env with the knowledge capability wired as `serve`
// wires it, a plugin host offering it, and a second user of the same
// tenant in another workspace.
type knowledgeWorld struct {
	env
	host   *wasm.Host
	ex     *extract.Set
	pages  *countingPages
	kc     *knowledge.Capability
	svc    *files.Service
	wf     *workflows.Service
	caller context.Context // ctx carrying e.p as the tool call's caller
	other  tenancy.Principal
}

func newKnowledgeWorld(t testing.TB, plugins ...string) *knowledgeWorld {
	t.Helper()
	ctx := context.Background()
	w := &knowledgeWorld{env: newEnv(t), kc: &knowledge.Capability{}}
	reg, err := wasm.NewRegistry(wasmtest.WithModel(append(wasm.StandardCapabilities(wasm.EgressOptions{}), w.kc.Wasm()))...)
	if err != nil {
		t.Fatal(err)
	}
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
	w.host = h
	w.ex = extract.New(h)
	w.pages = &countingPages{inner: w.ex}
	w.svc = files.NewService(w.db, w.blobs, 0)
	w.wf = workflows.NewService(w.db, workflows.NewBroker(w.db, workflows.BrokerConfig{}), nil)
	*w.kc = knowledge.Capability{Files: w.svc, Documents: w.wf, Search: search.New(w.db, nil, nil),
		Reader: ondemand.NewReader(w.db, w.blobs, w.pages)}
	w.caller = toolcall.With(ctx, toolcall.Caller{Principal: w.p, WorkspaceID: w.ws})
	tn := w.p.TenantID
	ws2, _ := w.db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn, Name: "other"})
	u2, _ := w.db.CreateUser(ctx, tenancy.User{TenantID: tn, Email: "o@t"})
	if err := w.db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws2.ID, UserID: u2.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	w.other = tenancy.Principal{TenantID: tn, UserID: u2.ID}
	return w
}

// handbook is a Markdown file with numbered sections (1, 1.1, 2).
const handbook = "# Travel\n\nTrains are booked in second class.\n\n## Flights\n\nFlights need a department head's approval.\n\n# Hotels\n\nHotel nights are reimbursed up to 180 CHF.\n"

// ingestBytes uploads data and indexes it.
func (w *knowledgeWorld) ingestBytes(t *testing.T, name string, data []byte) filemeta.Item {
	t.Helper()
	f := w.upload(t, w.svc, name, data)
	if _, err := ingest.New(w.db, w.blobs, w.ex, nil).Ingest(context.Background(), f.ID, false); err != nil {
		t.Fatal(err)
	}
	return f
}

// ingest uploads a corpus file and indexes it with the given PDF policy.
func (w *knowledgeWorld) ingest(t *testing.T, smart ingest.SmartPDF, parts ...string) filemeta.Item {
	t.Helper()
	data, err := os.ReadFile(testcorpus.Path(t, parts...))
	if err != nil {
		t.Fatal(err)
	}
	f := w.upload(t, w.svc, parts[len(parts)-1], data)
	in := ingest.New(w.db, w.blobs, w.ex, nil).WithSmartPDF(smart)
	if _, err := in.Ingest(context.Background(), f.ID, false); err != nil {
		t.Fatal(err)
	}
	return f
}

// call runs a knowledge function and decodes its answer into out.
func (w *knowledgeWorld) call(ctx context.Context, fn string, req any, out any) error {
	raw, _ := json.Marshal(req)
	res, err := w.kc.Call(ctx, fn, raw)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(res)
	return json.Unmarshal(b, out)
}

// reference reads a corpus PDF page's pdftotext text.
func reference(t *testing.T, doc string, page int) string {
	t.Helper()
	b, err := os.ReadFile(testcorpus.Path(t, "pdf", doc+".pages", fmt.Sprintf("%04d.txt", page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recall is the share of the reference's words (lower-cased, 3+ letters)
// that occur in got.
func recall(ref, got string) float64 {
	have := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(got)) {
		have[strings.Trim(w, ".,;:()[]\"'")] = true
	}
	n, hit := 0, 0
	for _, w := range strings.Fields(strings.ToLower(ref)) {
		w = strings.Trim(w, ".,;:()[]\"'")
		if len(w) < 3 {
			continue
		}
		n++
		if have[w] {
			hit++
		}
	}
	if n == 0 {
		return 1
	}
	return float64(hit) / float64(n)
}

func code(err error) string {
	var ce *wasm.CapabilityError
	if errors.As(err, &ce) {
		return ce.Code
	}
	if err == nil {
		return ""
	}
	return "untyped: " + err.Error()
}

// TestKnowledgeCapability: every function for the caller in ctx only,
// inside its file scope, with docItem references resolved in its workflow
// and bad arguments refused with a clear code.
func TestKnowledgeCapability(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "office")
	ctx := context.Background()
	pdf := w.ingest(t, ingest.SmartPDF{}, "pdf", "deb-camlidl-1.04.pdf")
	docx := w.ingest(t, ingest.SmartPDF{}, "office", "docx", "python-docx-comments-rich-para.docx")
	md := w.ingestBytes(t, "handbook.md", []byte(handbook))
	wf, err := w.wf.Start(ctx, w.p, workflows.NewWorkflow{WorkspaceID: w.ws})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := w.wf.AddMessage(ctx, w.p, workflows.Message{WorkflowID: wf.ID, Role: workflows.RoleUser, Content: "see attached", Status: workflows.MessageFirst,
		Documents: []workflows.Document{{FileID: pdf.ID}}})
	if err != nil || len(msg.Documents) != 1 {
		t.Fatalf("message: %+v %v", msg, err)
	}
	docItem := msg.Documents[0].Ref()
	inWorkflow := toolcall.With(ctx, toolcall.Caller{Principal: w.p, WorkspaceID: w.ws, WorkflowID: wf.ID})
	asOther := toolcall.With(ctx, toolcall.Caller{Principal: w.other})
	page3 := reference(t, "deb-camlidl-1.04", 3)

	for _, c := range []struct {
		name  string
		ctx   context.Context
		fn    string
		req   any
		code  string
		check func(t *testing.T, raw json.RawMessage)
	}{
		{"no caller", ctx, "index", map[string]any{"file": pdf.ID}, knowledge.CodeNoCaller, nil},
		{"unknown function", w.caller, "drop", map[string]any{}, knowledge.CodeInvalidArgument, nil},
		{"index", w.caller, "index", map[string]any{"file": pdf.ID}, "", func(t *testing.T, raw json.RawMessage) {
			var ix knowledge.IndexResponse
			json.Unmarshal(raw, &ix)
			if ix.Status != kindex.StatusIndexed || ix.Pages != 26 || ix.OnDemand || ix.TotalObjects != 26 || len(ix.Objects) == 0 || ix.FileName != pdf.Name {
				t.Errorf("index: %+v", ix)
			}
		}},
		{"index of another user's file", asOther, "index", map[string]any{"file": pdf.ID}, knowledge.CodeNotFound, nil},
		{"index by docItem", inWorkflow, "index", map[string]any{"file": docItem}, "", func(t *testing.T, raw json.RawMessage) {
			var ix knowledge.IndexResponse
			json.Unmarshal(raw, &ix)
			if ix.FileID != pdf.ID {
				t.Errorf("docItem resolved to %q, want %q", ix.FileID, pdf.ID)
			}
		}},
		{"docItem outside a workflow", w.caller, "index", map[string]any{"file": docItem}, knowledge.CodeInvalidArgument, nil},
		{"docItem not in the workflow", inWorkflow, "index", map[string]any{"file": "docItem:nope"}, knowledge.CodeNotFound, nil},
		{"docList", inWorkflow, "index", map[string]any{"file": "docList:x"}, knowledge.CodeInvalidArgument, nil},
		{"no file", w.caller, "index", map[string]any{}, knowledge.CodeInvalidArgument, nil},
		{"unknown field", w.caller, "index", map[string]any{"file": pdf.ID, "owner": "root"}, knowledge.CodeInvalidArgument, nil},
		{"read page 3", w.caller, "read_objects", map[string]any{"file": pdf.ID, "pages": []int{3}}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.ReadObjectsResponse
			json.Unmarshal(raw, &r)
			if r.Total != 1 || len(r.Objects) != 1 || r.Objects[0].Ref.PageIndex != 3 {
				t.Fatalf("page 3: %+v", r)
			}
			if got := recall(page3, r.Objects[0].Data); got < 0.9 {
				t.Errorf("page 3 has %.2f of pdftotext's words", got)
			}
		}},
		{"read pages 2-4, limit 2, then on", w.caller, "read_objects", map[string]any{"file": pdf.ID, "pages": []int{4, 2, 3}, "limit": 2}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.ReadObjectsResponse
			json.Unmarshal(raw, &r)
			if r.Total != 3 || len(r.Objects) != 2 || r.Objects[0].Ref.PageIndex != 2 || r.Objects[1].Ref.PageIndex != 3 || r.NextOffset != 2 {
				t.Errorf("paged read: total %d next %d objects %d", r.Total, r.NextOffset, len(r.Objects))
			}
		}},
		{"byte cap", w.caller, "read_objects", map[string]any{"file": pdf.ID, "maxBytes": 1000}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.ReadObjectsResponse
			json.Unmarshal(raw, &r)
			if len(r.Objects) != 1 || len(r.Objects[0].Data) > 1000 || !r.Truncated || r.NextOffset != 1 {
				t.Errorf("capped read: %d objects, truncated %v, next %d", len(r.Objects), r.Truncated, r.NextOffset)
			}
		}},
		{"read by docItem", inWorkflow, "read_objects", map[string]any{"file": docItem, "pages": []int{3}}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.ReadObjectsResponse
			json.Unmarshal(raw, &r)
			if len(r.Objects) != 1 || r.FileID != pdf.ID {
				t.Errorf("read by docItem: %+v", r)
			}
		}},
		{"read another user's file", asOther, "read_objects", map[string]any{"file": pdf.ID}, knowledge.CodeNotFound, nil},
		{"page 0", w.caller, "read_objects", map[string]any{"file": pdf.ID, "pages": []int{0}}, knowledge.CodeInvalidArgument, nil},
		{"limit too large", w.caller, "read_objects", map[string]any{"file": pdf.ID, "limit": 5000}, knowledge.CodeInvalidArgument, nil},
		{"unknown type", w.caller, "read_objects", map[string]any{"file": pdf.ID, "types": []string{"hologram"}}, knowledge.CodeInvalidArgument, nil},
		{"docx paragraphs", w.caller, "read_objects", map[string]any{"file": docx.ID, "types": []string{"text"}}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.ReadObjectsResponse
			json.Unmarshal(raw, &r)
			if len(r.Objects) == 0 || r.Objects[0].Ref.Paragraph == 0 || r.Objects[0].ContentType != content.Text {
				t.Fatalf("docx paragraphs: %+v", r)
			}
		}},
		{"section with its subsections", w.caller, "read_section", map[string]any{"file": md.ID, "section": "Travel"}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.ReadObjectsResponse
			json.Unmarshal(raw, &r)
			text := ""
			for _, o := range r.Objects {
				text += o.Data
			}
			if r.Section == nil || r.Section.ID != "1" || !strings.Contains(text, "second class") || !strings.Contains(text, "approval") || strings.Contains(text, "180 CHF") {
				t.Fatalf("section 1: %+v", r)
			}
			for _, o := range r.Objects {
				if o.Ref.SectionID != "1" && !strings.HasPrefix(o.Ref.SectionID, "1.") {
					t.Errorf("object %s of section %q in section 1's read", o.ID, o.Ref.SectionID)
				}
			}
		}},
		{"unknown section", w.caller, "read_section", map[string]any{"file": pdf.ID, "section": "no such chapter"}, knowledge.CodeInvalidArgument, nil},
		{"section missing", w.caller, "read_section", map[string]any{"file": pdf.ID}, knowledge.CodeInvalidArgument, nil},
		{"search", w.caller, "search", map[string]any{"query": strings.Join(strings.Fields(page3)[20:28], " "), "fileIds": []string{pdf.ID}}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.SearchResponse
			json.Unmarshal(raw, &r)
			if len(r.Hits) == 0 || r.Hits[0].FileID != pdf.ID {
				t.Errorf("search: %+v", r.Hits)
			}
		}},
		{"search as another user", asOther, "search", map[string]any{"query": "camlidl interface"}, "", func(t *testing.T, raw json.RawMessage) {
			var r knowledge.SearchResponse
			json.Unmarshal(raw, &r)
			if len(r.Hits) != 0 {
				t.Errorf("another user finds %d hits in files they cannot read", len(r.Hits))
			}
		}},
		{"search without words", w.caller, "search", map[string]any{"query": "  "}, knowledge.CodeInvalidArgument, nil},
		{"search in another user's file", asOther, "search", map[string]any{"query": "camlidl", "fileIds": []string{pdf.ID}}, knowledge.CodeNotFound, nil},
		{"search, bad layer", w.caller, "search", map[string]any{"query": "camlidl", "layer": "everything"}, knowledge.CodeInvalidArgument, nil},
		{"extract item, no containers", w.caller, "extract_item", map[string]any{"file": pdf.ID, "path": "a/b.txt"}, knowledge.CodeUnsupported, nil},
		{"extract item, no path", w.caller, "extract_item", map[string]any{"file": pdf.ID}, knowledge.CodeInvalidArgument, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, _ := json.Marshal(c.req)
			res, err := w.kc.Call(c.ctx, c.fn, raw)
			if got := code(err); got != c.code {
				t.Fatalf("code %q (%v), want %q", got, err, c.code)
			}
			if c.check != nil {
				b, _ := json.Marshal(res)
				c.check(t, b)
			}
		})
	}
}

// TestDocumentsPlugin: the documents plugin's tools through the wasm host,
// as an agent calls them, on a corpus PDF and DOCX.
func TestDocumentsPlugin(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "office", "documents")
	pdf := w.ingest(t, ingest.SmartPDF{}, "pdf", "deb-camlidl-1.04.pdf")
	docx := w.ingest(t, ingest.SmartPDF{}, "office", "docx", "python-docx-comments-rich-para.docx")
	md := w.ingestBytes(t, "handbook.md", []byte(handbook))
	p, ok := w.host.Plugin("documents")
	if !ok {
		t.Fatal("documents plugin not loaded")
	}
	tool := func(ctx context.Context, name string, args any) wasm.Result {
		raw, _ := json.Marshal(args)
		return p.Call(ctx, name, raw, nil)
	}
	r := tool(w.caller, "readContentObjects", map[string]any{"file": pdf.ID, "pages": []int{3}})
	if !r.OK {
		t.Fatalf("readContentObjects: %+v", r.Error)
	}
	if got := recall(reference(t, "deb-camlidl-1.04", 3), r.Text); got < 0.9 || !strings.Contains(r.Text, "page 3") || strings.Contains(r.Text, "page 4)") {
		t.Errorf("page 3 through the plugin (%.2f of the reference's words):\n%s", got, r.Text)
	}
	r = tool(w.caller, "browseContainer", map[string]any{"file": pdf.ID})
	if !r.OK || !strings.Contains(r.Text, "26 pages") || !strings.Contains(r.Text, "Sections") {
		t.Errorf("browseContainer: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, "readSection", map[string]any{"file": md.ID, "section": "1.1"})
	if !r.OK || !strings.Contains(r.Text, "section 1.1") || !strings.Contains(r.Text, "approval") || strings.Contains(r.Text, "second class") {
		t.Errorf("readSection: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, "searchKnowledge", map[string]any{"query": "Heading 2 paragraph style"})
	if !r.OK || !strings.Contains(r.Text, docx.Name) || !strings.Contains(r.Text, "Heading 2") {
		t.Errorf("searchKnowledge: %+v\n%s", r.Error, r.Text)
	}
	// No caller: the capability refuses, the tool fails with its reason.
	r = tool(context.Background(), "browseContainer", map[string]any{"file": pdf.ID})
	if r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeNoCaller) {
		t.Errorf("without a caller: %+v %s", r.Error, r.Text)
	}
	// Another user's file is not found.
	r = tool(toolcall.With(context.Background(), toolcall.Caller{Principal: w.other}), "readContentObjects", map[string]any{"file": pdf.ID})
	if r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeNotFound) {
		t.Errorf("another user's file: %+v %s", r.Error, r.Text)
	}
	// extractContainerItem writes: the runtime links it the write function.
	r = tool(w.caller, "extractContainerItem", map[string]any{"file": pdf.ID, "path": "x.txt"})
	if r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeUnsupported) {
		t.Errorf("extractContainerItem without containers: %+v %s", r.Error, r.Text)
	}
}

// TestSmartPDF: a PDF over the page threshold is pre-scanned only; reading
// a section extracts that section's pages once, a second read extracts
// nothing, concurrent readers of one page extract it once, and searches
// find the pages read.
func TestSmartPDF(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "documents")
	const doc = "deb-gutenprint-users-manual"
	f := w.ingest(t, ingest.SmartPDF{MaxPages: 40}, "pdf", doc+".pdf")
	var ix knowledge.IndexResponse
	if err := w.call(w.caller, "index", map[string]any{"file": f.ID}, &ix); err != nil {
		t.Fatal(err)
	}
	if ix.Status != kindex.StatusIndexed || !ix.OnDemand || ix.Pages != 73 || len(ix.ExtractedPages) != 0 || ix.TotalObjects != 0 || len(ix.Sections) == 0 {
		t.Fatalf("pre-scan index: %+v", ix)
	}
	chunks, err := w.db.ContentChunks(context.Background(), w.p, f.ID, kindex.ChunkFilter{})
	if err != nil || len(chunks) != 0 {
		t.Fatalf("a pre-scanned PDF has %d chunks (%v), want none", len(chunks), err)
	}
	sec, ok := ondemand.FindSection(content.Index{Structure: map[string]any{"sections": ix.Sections}}, "General Requirements")
	if !ok || sec.StartPage != 9 || sec.EndPage != 9 {
		t.Fatalf("section General Requirements: %+v %v", sec, ok)
	}

	read := func(req map[string]any) (knowledge.ReadObjectsResponse, time.Duration) {
		t.Helper()
		var r knowledge.ReadObjectsResponse
		start := time.Now()
		if err := w.call(w.caller, "read_section", req, &r); err != nil {
			t.Fatal(err)
		}
		return r, time.Since(start)
	}
	first, firstTook := read(map[string]any{"file": f.ID, "section": "General Requirements"})
	if w.pages.calls.Load() != 1 || w.pages.pages.Load() != 1 || !slices.Equal(first.ExtractedPages, []int{9}) {
		t.Fatalf("first read: %d readPages calls for %d pages, extracted %v; want 1 call for page 9", w.pages.calls.Load(), w.pages.pages.Load(), first.ExtractedPages)
	}
	if len(first.Objects) != 1 || first.Objects[0].Ref.PageIndex != 9 {
		t.Fatalf("section read: %+v", first)
	}
	if got := recall(reference(t, doc, 9), first.Objects[0].Data); got < 0.9 {
		t.Errorf("page 9 has %.2f of pdftotext's words", got)
	}
	var cached []time.Duration
	for range 5 {
		again, took := read(map[string]any{"file": f.ID, "section": sec.ID})
		cached = append(cached, took)
		if len(again.ExtractedPages) != 0 || again.Objects[0].Data != first.Objects[0].Data {
			t.Fatalf("second read extracted %v", again.ExtractedPages)
		}
	}
	if n := w.pages.calls.Load(); n != 1 {
		t.Fatalf("%d readPages calls after reading the section again, want 1", n)
	}
	slices.Sort(cached)
	figure.Report("pdf.readsection.first", float64(firstTook.Microseconds())/1000, "ms")
	figure.Report("pdf.readsection.cached.p50", float64(cached[len(cached)/2].Microseconds())/1000, "ms")

	// Two readers of the same pages at once: one extraction.
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r knowledge.ReadObjectsResponse
			if err := w.call(w.caller, "read_objects", map[string]any{"file": f.ID, "pages": []int{20, 21}}, &r); err != nil || len(r.Objects) != 2 {
				t.Errorf("concurrent read: %d objects, %v", len(r.Objects), err)
			}
		}()
	}
	wg.Wait()
	if n, pg := w.pages.calls.Load(), w.pages.pages.Load(); n != 2 || pg != 3 {
		t.Fatalf("after two concurrent reads of pages 20-21: %d calls for %d pages, want 2 for 3", n, pg)
	}

	// The pages read are searchable now, with their page.
	words := strings.Fields(reference(t, doc, 9))
	var sr knowledge.SearchResponse
	if err := w.call(w.caller, "search", map[string]any{"query": strings.Join(words[len(words)/2:len(words)/2+6], " "), "fileIds": []string{f.ID}}, &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Hits) == 0 || sr.Hits[0].Ref.PageIndex != 9 {
		t.Fatalf("search after reading page 9: %+v", sr.Hits)
	}
	if err := w.call(w.caller, "index", map[string]any{"file": f.ID}, &ix); err != nil || !slices.Equal(ix.ExtractedPages, []int{9, 20, 21}) || ix.TotalObjects != 3 {
		t.Fatalf("index after reads: pages %v, objects %d, %v", ix.ExtractedPages, ix.TotalObjects, err)
	}
	// A page outside the document is a bad argument, not an extraction.
	if err := w.call(w.caller, "read_objects", map[string]any{"file": f.ID, "pages": []int{74}}, &struct{}{}); code(err) != knowledge.CodeInvalidArgument {
		t.Fatalf("page 74 of 73: %v", err)
	}
	// Through the plugin, as a model sees it.
	p, _ := w.host.Plugin("documents")
	r := p.Call(w.caller, "browseContainer", json.RawMessage(`{"file":"`+f.ID+`"}`), nil)
	if !r.OK || !strings.Contains(r.Text, "read so far: 9, 20-21") {
		t.Errorf("browseContainer of a large PDF: %+v\n%s", r.Error, r.Text)
	}
}

// zipOf is a ZIP archive of the named members.
func zipOf(t *testing.T, members map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := slices.Sorted(maps.Keys(members))
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSmartPDFInArchive: a large PDF inside an archive follows the smart
// policy: ingestion pre-scans it only; a section read (by the entry's
// path, access checked on the archive) extracts its pages once, a second
// read extracts nothing, and searches find the page with its container
// path.
func TestSmartPDFInArchive(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "containers")
	ctx := context.Background()
	const doc = "deb-gutenprint-users-manual"
	archive := w.upload(t, w.svc, "bundle.zip", zipOf(t, map[string][]byte{
		"docs/manual.pdf": testcorpus.Read(t, "pdf", doc+".pdf"),
		"docs/notes.txt":  []byte("Printer drivers are reviewed every spring."),
	}))
	ing := ingest.New(w.db, w.blobs, w.ex, nil).WithSmartPDF(ingest.SmartPDF{MaxPages: 40}).
		WithContainers(extract.NewContainers(w.host), w.db, w.blobs)
	if _, err := ing.Ingest(ctx, archive.ID, false); err != nil {
		t.Fatal(err)
	}
	w.kc.Containers = indexing.NewContainers(w.db, ing)

	// Pre-scanned only: an index with sections and pages, no chunks.
	var ix knowledge.IndexResponse
	if err := w.call(w.caller, "index", map[string]any{"file": archive.ID, "path": "docs/manual.pdf"}, &ix); err != nil {
		t.Fatal(err)
	}
	if ix.Status != kindex.StatusIndexed || !ix.OnDemand || ix.Pages != 73 || len(ix.ExtractedPages) != 0 || len(ix.Sections) == 0 ||
		ix.Path != "bundle.zip/docs/manual.pdf" || ix.FileName != "manual.pdf" || ix.MIMEType != extract.PDF {
		t.Fatalf("inner PDF's index: %+v", ix)
	}
	entries, err := w.db.ContainerEntries(ctx, w.p, archive.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sha string
	for _, e := range entries {
		if e.Path == "bundle.zip/docs/manual.pdf" {
			sha = e.SHA256
		}
	}
	if chunks, err := w.db.ContentChunksOf(ctx, w.p.TenantID, sha, kindex.ChunkFilter{}); sha == "" || err != nil || len(chunks) != 0 {
		t.Fatalf("the inner PDF (%q) has %d chunks at ingestion (%v), want none", sha, len(chunks), err)
	}
	if w.pages.calls.Load() != 0 {
		t.Fatalf("%d readPages calls at ingestion", w.pages.calls.Load())
	}

	read := func(req map[string]any) knowledge.ReadObjectsResponse {
		t.Helper()
		var r knowledge.ReadObjectsResponse
		if err := w.call(w.caller, "read_section", req, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The entry by its path inside the archive, then by its full path.
	first := read(map[string]any{"file": archive.ID, "path": "docs/manual.pdf", "section": "General Requirements"})
	if w.pages.calls.Load() != 1 || !slices.Equal(first.ExtractedPages, []int{9}) || len(first.Objects) != 1 || first.Objects[0].Ref.PageIndex != 9 ||
		first.Path != "bundle.zip/docs/manual.pdf" || first.FileID != archive.ID {
		t.Fatalf("first read: %d calls, %+v", w.pages.calls.Load(), first)
	}
	if got := recall(reference(t, doc, 9), first.Objects[0].Data); got < 0.9 {
		t.Errorf("page 9 has %.2f of pdftotext's words", got)
	}
	if sec := first.Objects[0].Ref.SectionID; sec == "" || first.Section == nil || sec != first.Section.ID {
		t.Errorf("page 9's section %q, the section read %+v", sec, first.Section)
	}
	again := read(map[string]any{"file": archive.ID, "path": "bundle.zip/docs/manual.pdf", "section": "General Requirements"})
	if w.pages.calls.Load() != 1 || len(again.ExtractedPages) != 0 || again.Objects[0].Data != first.Objects[0].Data {
		t.Fatalf("second read: %d calls, extracted %v", w.pages.calls.Load(), again.ExtractedPages)
	}

	// Searches find the page read, in the archive, with its container path.
	words := strings.Fields(reference(t, doc, 9))
	var sr knowledge.SearchResponse
	if err := w.call(w.caller, "search", map[string]any{"query": strings.Join(words[len(words)/2:len(words)/2+6], " "), "fileIds": []string{archive.ID}}, &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Hits) == 0 || sr.Hits[0].Ref.PageIndex != 9 || sr.Hits[0].FileID != archive.ID || sr.Hits[0].Ref.ContainerPath != "bundle.zip/docs/manual.pdf" {
		t.Fatalf("search after reading page 9: %+v", sr.Hits)
	}

	// Access and bad paths.
	asOther := toolcall.With(ctx, toolcall.Caller{Principal: w.other})
	for _, c := range []struct {
		name string
		ctx  context.Context
		req  map[string]any
		code string
	}{
		{"another user", asOther, map[string]any{"file": archive.ID, "path": "docs/manual.pdf", "pages": []int{9}}, knowledge.CodeNotFound},
		{"no such entry", w.caller, map[string]any{"file": archive.ID, "path": "docs/missing.pdf"}, knowledge.CodeNotFound},
		{"a page outside the entry", w.caller, map[string]any{"file": archive.ID, "path": "docs/manual.pdf", "pages": []int{74}}, knowledge.CodeInvalidArgument},
		{"a file that is no container", w.caller, map[string]any{"file": w.upload(t, w.svc, "plain.md", []byte(handbook)).ID, "path": "x.pdf"}, knowledge.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, _ := json.Marshal(c.req)
			if _, err := w.kc.Call(c.ctx, "read_objects", raw); code(err) != c.code {
				t.Fatalf("code %q (%v), want %q", code(err), err, c.code)
			}
		})
	}
	if w.pages.calls.Load() != 1 {
		t.Fatalf("%d readPages calls after the refused reads", w.pages.calls.Load())
	}
}

// TestSmartPDFVectors: with an embedding model, the pages read on demand
// get vectors (billed like ingestion's), added to those of pages read
// before, so a vector query finds them.
func TestSmartPDFVectors(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf")
	ctx := context.Background()
	srv := llmtest.New(t, llmtest.WithEmbeddingDimension(64))
	var mu sync.Mutex
	var billed []llm.Attribution
	client, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "p", BaseURL: srv.URL()}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {{Provider: "p", Model: "text-embedding-3-small"}}},
	}, llm.MeterFunc(func(ctx context.Context, u modeluse.Usage) error {
		mu.Lock()
		defer mu.Unlock()
		billed = append(billed, llm.AttributionFrom(ctx))
		return nil
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.kc.Reader.WithEmbedder(client, nil)
	const doc = "deb-gutenprint-users-manual"
	f := w.ingest(t, ingest.SmartPDF{MaxPages: 40}, "pdf", doc+".pdf")

	readPages := func(pages ...int) {
		t.Helper()
		var r knowledge.ReadObjectsResponse
		if err := w.call(w.caller, "read_objects", map[string]any{"file": f.ID, "pages": pages}, &r); err != nil || len(r.Objects) != len(pages) {
			t.Fatalf("read %v: %d objects, %v", pages, len(r.Objects), err)
		}
	}
	readPages(9)
	readPages(20, 21) // a later read adds its vectors, page 9's stay
	mu.Lock()
	n := len(billed)
	for _, a := range billed {
		if a.TenantID != f.TenantID || a.WorkspaceID != f.WorkspaceID || a.UserID != f.CreatedBy || a.Purpose != "embedding" {
			t.Errorf("embedding billed to %+v, want the file's tenant, workspace and uploader", a)
		}
	}
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d embedding calls billed for two reads, want 2", n)
	}

	chunks, err := w.db.ContentChunks(ctx, w.p, f.ID, kindex.ChunkFilter{})
	if err != nil {
		t.Fatal(err)
	}
	model, _ := client.Model(modeluse.OpEmbedding)
	for _, pg := range []int{9, 20, 21} {
		var text string
		for _, c := range chunks {
			if c.Ref.PageIndex == pg {
				text = c.Text
				break
			}
		}
		if text == "" {
			t.Fatalf("no chunk of page %d", pg)
		}
		q, _, err := client.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := w.db.SearchVectors(ctx, w.p, kindex.Query{FileIDs: []string{f.ID}, Limit: 3}, model.Name, q[0])
		if err != nil || len(hits) == 0 || hits[0].Ref.PageIndex != pg || hits[0].Score < 0.99 {
			t.Fatalf("vector query with page %d's text: %+v %v", pg, hits, err)
		}
	}
	// Hybrid search (the searcher with the same model) finds it too.
	hits, err := search.New(w.db, client, nil).Search(ctx, w.p, kindex.Query{Text: chunks[0].Text, FileIDs: []string{f.ID}})
	if err != nil || len(hits) == 0 || hits[0].Ref.PageIndex != chunks[0].Ref.PageIndex {
		t.Fatalf("hybrid search: %+v %v", hits, err)
	}
}
