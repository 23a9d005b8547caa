package indexing_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestDocumentsPluginArchive: the agent's path through an archive with the
// documents plugin's tools — browseContainer lists the entries, the inner
// files are read by path (pages of a PDF, a section of a Markdown file),
// extractContainerItem answers for an entry, and another user sees none of it.
func TestDocumentsPluginArchive(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "office", "containers", "documents")
	ctx := context.Background()
	archive := w.upload(t, w.svc, "bundle.zip", zipOf(t, map[string][]byte{
		"manuals/camlidl.pdf": testcorpus.Read(t, "pdf", "deb-camlidl-1.04.pdf"),
		"policy/handbook.md":  []byte(handbook),
	}))
	ing := ingest.New(w.db, w.blobs, w.ex, nil).WithContainers(extract.NewContainers(w.host), w.db, w.blobs)
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
	if got := recall(reference(t, "deb-camlidl-1.04", 3), r.Text); !r.OK || got < 0.9 || !strings.Contains(r.Text, "entry bundle.zip/manuals/camlidl.pdf") {
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

// TestDocumentsPluginFolder: a folder of the workspace browsed like a
// container (a prompt's "@folder/"): subfolders, then files with their
// indexing status; the files in no folder under "/"; another workspace's
// folder is not found.
func TestDocumentsPluginFolder(t *testing.T) {
	w := newKnowledgeWorld(t, "office", "documents")
	ctx := context.Background()
	w.kc.Folders = w.svc
	contracts, err := w.svc.CreateFolder(ctx, w.p, filemeta.Folder{WorkspaceID: w.ws, Name: "contracts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreateFolder(ctx, w.p, filemeta.Folder{WorkspaceID: w.ws, Name: "2025", ParentID: contracts.ID}); err != nil {
		t.Fatal(err)
	}
	put := func(name, folder string, data string) filemeta.Item {
		t.Helper()
		f, _, err := w.svc.Upload(ctx, w.p, files.Upload{WorkspaceID: w.ws, Name: name, FolderID: folder, Content: strings.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	lease := put("lease.md", contracts.ID, handbook)
	if _, err := ingest.New(w.db, w.blobs, w.ex, nil).Ingest(ctx, lease.ID, false); err != nil {
		t.Fatal(err)
	}
	put("draft.txt", contracts.ID, "not indexed yet")
	put("loose.txt", "", "a file in no folder")
	p, _ := w.host.Plugin("documents")
	tool := func(ctx context.Context, args any) wasm.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		return p.Call(ctx, "browseContainer", raw, nil)
	}
	r := tool(w.caller, map[string]any{"folder": contracts.ID})
	if !r.OK || !strings.Contains(r.Text, "Folder contracts") || !strings.Contains(r.Text, "1 subfolders, 2 files") || !strings.Contains(r.Text, "2025/") ||
		!strings.Contains(r.Text, "lease.md  text/markdown") || !strings.Contains(r.Text, "indexed  (file "+lease.ID) ||
		!strings.Contains(r.Text, "draft.txt") || !strings.Contains(r.Text, "pending") || strings.Contains(r.Text, "loose.txt") {
		t.Fatalf("browseContainer {folder}: %+v\n%s", r.Error, r.Text)
	}
	r = tool(w.caller, map[string]any{"folder": "/"})
	if !r.OK || !strings.Contains(r.Text, "loose.txt") || strings.Contains(r.Text, "lease.md") || !strings.Contains(r.Text, "contracts/") {
		t.Errorf("browseContainer {folder: /}: %+v\n%s", r.Error, r.Text)
	}
	// The other user works in another workspace: this folder is not theirs.
	other := toolcall.With(ctx, toolcall.Caller{Principal: w.other, WorkspaceID: "elsewhere"})
	if r := tool(other, map[string]any{"folder": contracts.ID}); r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeNotFound) {
		t.Errorf("another user's folder: %+v %s", r.Error, r.Text)
	}
	if r := tool(w.caller, map[string]any{"folder": contracts.ID, "file": lease.ID}); r.OK {
		t.Errorf("file and folder at once: %s", r.Text)
	}
	if r := tool(w.caller, map[string]any{"folder": "no-such-folder"}); r.OK || !strings.Contains(r.Error.Error(), knowledge.CodeNotFound) {
		t.Errorf("unknown folder: %+v %s", r.Error, r.Text)
	}
}
