package indexing_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
)

// TestDocumentsPluginArchive: the agent's path through an archive with the
// documents plugin's tools — browseContainer lists the entries, the inner
// files are read by path (pages of a PDF, a section of a Markdown file),
// extractContainerItem answers for an entry, and another user sees none of it.
func TestDocumentsPluginArchive(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "office", "containers", "documents")
	ctx := context.Background()
	archive := w.upload(t, w.svc, "bundle.zip", zipOf(t, map[string][]byte{
		"manuals/camlidl.pdf": corpusFile(t, "pdf", "deb-camlidl-1.04.pdf"),
		"policy/handbook.md":  []byte(handbook),
	}))
	ing := knowledge.NewIngester(w.db, w.blobs, w.ex, nil).WithContainers(knowledge.NewContainers(w.host), w.db, w.blobs)
	if _, err := ing.Ingest(ctx, archive.ID, false); err != nil {
		t.Fatal(err)
	}
	w.kc.Containers = indexing.NewContainers(w.db, ing)
	p, ok := w.host.Plugin("documents")
	if !ok {
		t.Fatal("documents plugin not loaded")
	}
	tool := func(ctx context.Context, name string, args any) wasm.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		return p.Call(ctx, name, raw, nil)
	}

	r := tool(w.caller, "browseContainer", map[string]any{"file": archive.ID})
	if !r.OK || !strings.Contains(r.Text, "Container entries (2)") || !strings.Contains(r.Text, "bundle.zip/manuals/camlidl.pdf  application/pdf  192532 bytes  indexed") ||
		!strings.Contains(r.Text, "bundle.zip/policy/handbook.md") {
		t.Fatalf("browseContainer on the archive: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, "browseContainer", map[string]any{"file": archive.ID, "path": "manuals/camlidl.pdf"})
	if !r.OK || !strings.Contains(r.Text, "26 pages") {
		t.Errorf("browseContainer on the inner PDF: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, "readContentObjects", map[string]any{"file": archive.ID, "path": "manuals/camlidl.pdf", "pages": []int{3}})
	if got := recall(reference(t, "deb-camlidl-1.04", 3), r.Text); !r.OK || got < 0.9 {
		t.Errorf("page 3 of the inner PDF (%.2f of the reference's words): %+v\n%s", got, r.Error, r.Text)
	}
	r = tool(w.caller, "readSection", map[string]any{"file": archive.ID, "path": "bundle.zip/policy/handbook.md", "section": "1.1"})
	if !r.OK || !strings.Contains(r.Text, "approval") || strings.Contains(r.Text, "second class") {
		t.Errorf("readSection of the inner Markdown file: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, "extractContainerItem", map[string]any{"file": archive.ID, "path": "bundle.zip/policy/handbook.md"})
	if !r.OK || !strings.Contains(r.Text, "Extracted bundle.zip/policy/handbook.md") || !strings.Contains(r.Text, "indexed") {
		t.Errorf("extractContainerItem: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, "readContentObjects", map[string]any{"file": archive.ID, "path": "manuals/missing.pdf"})
	if r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeNotFound) {
		t.Errorf("an entry the archive does not have: %+v %s", r.Error, r.Text)
	}
	// Another user of the tenant cannot read the archive, so neither its
	// entries nor their content.
	other := toolcall.With(ctx, toolcall.Caller{Principal: w.other})
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"browseContainer", map[string]any{"file": archive.ID}},
		{"readContentObjects", map[string]any{"file": archive.ID, "path": "manuals/camlidl.pdf"}},
		{"extractContainerItem", map[string]any{"file": archive.ID, "path": "bundle.zip/policy/handbook.md"}},
	} {
		if r := tool(other, call.name, call.args); r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeNotFound) {
			t.Errorf("%s by another user: %+v %s", call.name, r.Error, r.Text)
		}
	}
}
