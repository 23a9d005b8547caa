package filetransfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/filetransfer"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestAgentDownloadsFromSFTP: a scripted agent browses the user's SFTP
// server with the connection tools, downloads a PDF (it lands in the
// workspace through the file bridge and is indexed by the real PDF
// extractor), then tries a download from an FTP server that vanishes in
// the middle of the transfer: a clear error, and nothing of it stored.
func TestAgentDownloadsFromSFTP(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workflow: "sftp", Model: &worldtest.Model{
		Models:  map[llm.Operation][]llm.ModelConfig{llm.OpAgent: {{Model: "agent-model", ContextWindow: 32000}}},
		Timeout: 20 * time.Second,
	}})
	svc, err := connections.New(connections.Options{Store: w.DB, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	root, pdf := tree(t)
	srv := startSFTP(t, account, password, nil)
	vanish := startHostileFTP(t, "vanish")
	conn, err := svc.AddToken(ctx, w.P, connections.NewToken{Provider: "ftp", Label: "files", Auth: "basic",
		BaseURL: "sftp://files.test:" + srv.port + filepath.ToSlash(root), Account: account, Token: password, HostKey: srv.fingerprint})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := svc.AddToken(ctx, w.P, connections.NewToken{Provider: "ftp", Label: "flaky", Auth: "basic",
		BaseURL: "ftp://files.test:" + vanish.port, Account: account, Token: password})
	if err != nil {
		t.Fatal(err)
	}

	rec := &connectionstest.Recorder{}
	fileSvc := w.Files.WithIndexer(rec, nil)
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"files.test:" + srv.port, "files.test:" + vanish.port}, Resolver: connectionstest.DNS{"files.test": "127.0.0.1"}}
	fc := &files.Capability{Files: fileSvc, Workflows: w.Workflows}
	ft := &filetransfer.Capability{Logins: svc, Egress: opts}
	t.Cleanup(ft.Close)
	toolsCap := &connections.ToolsCapability{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{fc.Wasm(), ft.Wasm(), toolsCap.Wasm()}}, "ftp", "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}

	set, missing, err := tools.NewRegistry(h, map[string][]string{"conn": {"listConnections", "externalBrowse", "externalDownload", "externalSearch"}}).Set("conn")
	if err != nil || len(missing) != 0 {
		t.Fatalf("tool set: %v %v", missing, err)
	}
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	w.Server.Script(
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn.ID, "service": "files", "path": "docs"}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "files", "path": "docs/camlidl.pdf"}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": broken.ID, "service": "files", "path": "big.bin"}))),
		llmtest.Reply("Downloaded camlidl.pdf; the other server broke off."))
	rctx := toolcall.With(ctx, toolcall.Caller{Principal: w.P, WorkspaceID: w.Workspace, WorkflowID: w.Workflow})
	rctx = llm.WithAttribution(rctx, llm.Attribution{TenantID: w.Tenant.ID, WorkspaceID: w.Workspace, UserID: w.User.ID, WorkflowID: w.Workflow, Purpose: "agent"})
	res := agent.New(w.Client, agent.Config{}, nil).Run(rctx, agent.Input{Prompt: "get the PDF from my SFTP server", Round: 1}, set, nil)
	if res.Outcome != agent.Completed || res.ToolCalls != 4 {
		t.Fatalf("run: %s, %d tool calls, %v", res.Outcome, res.ToolCalls, res.Err)
	}
	reqs := w.Server.ChatRequests()
	toolResult := func(i int) string {
		m := reqs[i].Messages[len(reqs[i].Messages)-1]
		if m.Role != "tool" {
			t.Fatalf("request %d ends with %+v", i, m)
		}
		return m.Content
	}
	if got := toolResult(1); !strings.Contains(got, conn.ID) || !strings.Contains(got, "provider=ftp") || !strings.Contains(got, "files") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := toolResult(2); !strings.Contains(got, `"camlidl.pdf" path=docs/camlidl.pdf`) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := toolResult(3)
	ref := docItemRef(got)
	if !strings.Contains(got, "downloaded 'camlidl.pdf'") || ref == "" {
		t.Fatalf("externalDownload: %s", got)
	}
	if got := toolResult(4); strings.Contains(got, "docItem:") || !strings.Contains(got, "server_error") {
		t.Fatalf("download from a vanishing server: %s", got)
	}
	docs, err := w.Workflows.ResolveDocuments(ctx, w.P, w.Workflow, []string{ref})
	if err != nil || len(docs) != 1 {
		t.Fatalf("docItem: %v %v", docs, err)
	}
	_, r, err := fileSvc.Open(ctx, w.P, docs[0].FileID)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(stored, pdf) {
		t.Fatalf("stored %d bytes, want the %d of the file", len(stored), len(pdf))
	}
	// Only the PDF is in the workspace and went to the indexer.
	page, err := fileSvc.List(ctx, w.P, files.Filter{WorkspaceID: w.Workspace})
	ids := rec.IDs()
	if err != nil || len(page.Items) != 1 || len(ids) != 1 || ids[0] != docs[0].FileID {
		t.Fatalf("workspace files %+v, indexer got %v (%v)", page.Items, ids, err)
	}
	ing := knowledge.NewIngester(w.DB, w.Blobs, knowledge.NewExtractors(h), nil)
	if _, err := ing.Ingest(ctx, ids[0], false); err != nil {
		t.Fatal(err)
	}
	st, err := w.DB.ContentState(ctx, w.P, ids[0])
	if err != nil || st.Status != knowledge.StatusIndexed {
		t.Fatalf("content state %+v %v", st, err)
	}
	for _, rq := range reqs {
		b, _ := json.Marshal(rq)
		if bytes.Contains(b, []byte(password)) {
			t.Fatal("the password reached the model")
		}
	}
}

func docItemRef(s string) string {
	i := strings.Index(s, "docItem:")
	if i < 0 {
		return ""
	}
	j := i + len("docItem:")
	for j < len(s) && (s[j] == '-' || s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
		j++
	}
	return s[i:j]
}
