package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestAgentSharePointToOutlook: a scripted agent browses a SharePoint
// folder, downloads a PDF (it lands in the workspace through the file
// bridge and is indexed by the real PDF extractor) and mails a summary
// through Outlook, all with the connection tools over the fake Graph. The
// downloaded file is uploaded back to another library; a download over
// the host's limit stores nothing; no token reaches the model.
func TestAgentSharePointToOutlook(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workflow: "ms", Model: &worldtest.Model{
		Models:  map[llm.Operation][]llm.ModelConfig{llm.OpAgent: {{Model: "agent-model", ContextWindow: 32000}}},
		Timeout: 20 * time.Second,
	}})
	m := newMSWorld(t, w.DB)
	conn := m.connect(t, w.P, "work")
	rec := &connectionstest.Recorder{}
	fileSvc := w.Files.WithIndexer(rec, nil)
	toolsCap := &connections.ToolsCapability{}
	h := m.host(t, nil, []wasm.Capability{(&files.Capability{Files: fileSvc, Workflows: w.Workflows}).Wasm(), toolsCap.Wasm()}, "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: m.svc}

	set, missing, err := tools.NewRegistry(h, map[string][]string{"conn": {"listConnections", "externalBrowse", "externalDownload", "sendMail"}}).Set("conn")
	if err != nil || len(missing) != 0 {
		t.Fatalf("tool set: %v %v", missing, err)
	}
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	folder := "/sites/Marketing/Documents/Reports"
	w.Server.Script(
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn.ID, "service": "sharepoint", "path": folder}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "sharepoint", "path": spHost + folder + "/camlidl.pdf"}))),
		llmtest.CallTools(llmtest.Call("sendMail", args(map[string]any{"connection": conn.ID, "service": "outlook", "to": []string{"carol@contoso.com"},
			"subject": "camlidl summary", "body": "CamlIDL generates stub code for interfacing Caml with C."}))),
		llmtest.Reply("Mailed the summary."))
	rctx := toolcall.With(ctx, toolcall.Caller{Principal: w.P, WorkspaceID: w.Workspace, WorkflowID: w.Workflow})
	rctx = llm.WithAttribution(rctx, llm.Attribution{TenantID: w.Tenant.ID, WorkspaceID: w.Workspace, UserID: w.User.ID, WorkflowID: w.Workflow, Purpose: "agent"})
	res := agent.New(w.Client, agent.Config{}, nil).Run(rctx, agent.Input{Prompt: "summarise the camlidl PDF and mail it to carol", Round: 1}, set, nil)
	if res.Outcome != agent.Completed || res.ToolCalls != 4 {
		t.Fatalf("run: %s, %d tool calls, %v", res.Outcome, res.ToolCalls, res.Err)
	}
	reqs := w.Server.ChatRequests()
	toolResult := func(i int) string {
		msg := reqs[i].Messages[len(reqs[i].Messages)-1]
		if msg.Role != "tool" {
			t.Fatalf("request %d ends with %+v", i, msg)
		}
		return msg.Content
	}
	if got := toolResult(1); !strings.Contains(got, "provider=microsoft") || !strings.Contains(got, "onedrive,outlook,sharepoint,teams") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := toolResult(2); !strings.Contains(got, `"camlidl.pdf" path=`+spHost+folder+`/camlidl.pdf`) || !strings.Contains(got, `folder "Old"`) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := toolResult(3)
	ref := docItemRef(got)
	if !strings.Contains(got, "downloaded 'camlidl.pdf'") || ref == "" {
		t.Fatalf("externalDownload: %s", got)
	}
	if got := toolResult(4); !strings.Contains(got, `sent "camlidl summary"`) {
		t.Fatalf("sendMail: %s", got)
	}
	if s := m.graph.Sent(); len(s) != 1 || s[0].To[0] != "carol@contoso.com" || !strings.Contains(s[0].Body, "CamlIDL") {
		t.Fatalf("Graph received %+v", s)
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
	if !bytes.Equal(stored, m.pdf) {
		t.Fatalf("stored %d bytes, want the PDF's %d", len(stored), len(m.pdf))
	}
	ids := rec.IDs()
	if len(ids) != 1 || ids[0] != docs[0].FileID {
		t.Fatalf("indexer got %v", ids)
	}
	ing := knowledge.NewIngester(w.DB, w.Blobs, knowledge.NewExtractors(h), nil)
	if _, err := ing.Ingest(ctx, ids[0], false); err != nil {
		t.Fatal(err)
	}
	if st, err := w.DB.ContentState(ctx, w.P, ids[0]); err != nil || st.Status != knowledge.StatusIndexed {
		t.Fatalf("content state %+v %v", st, err)
	}

	call := func(tool string, a any) wasm.Result {
		b, _ := json.Marshal(a)
		return h.Call(rctx, tool, b, &wasm.CallOptions{Tenant: w.P.TenantID})
	}
	// The document goes back to another library, byte for byte.
	up := call("externalUpload", map[string]any{"connection": conn.ID, "service": "sharepoint", "path": spHost + "/sites/Marketing/Archive", "file": ref})
	if !up.OK || !strings.Contains(up.Text, "uploaded \"camlidl.pdf\"") {
		t.Fatalf("externalUpload: %+v %+v", up, up.Error)
	}
	if ups := m.graph.Uploads(); len(ups) != 1 || !bytes.Equal(ups[0].Content, m.pdf) || ups[0].MIMEType != "application/pdf" {
		t.Fatalf("uploads %d", len(ups))
	}
	// Over the host's download limit: a clear error, nothing stored or indexed.
	toolsCap.MaxDownload = 1000
	before, err := fileSvc.List(ctx, w.P, files.Filter{WorkspaceID: w.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	big := call("externalDownload", map[string]string{"connection": conn.ID, "service": "sharepoint", "path": spHost + folder + "/camlidl.pdf"})
	if big.OK || big.Error == nil || !strings.Contains(big.Error.Error(), "too_large") {
		t.Fatalf("over the limit: %+v %+v", big, big.Error)
	}
	after, err := fileSvc.List(ctx, w.P, files.Filter{WorkspaceID: w.Workspace})
	if err != nil || len(after.Items) != len(before.Items) || len(rec.IDs()) != 1 {
		t.Fatalf("a refused download left %d files (was %d), %d indexed: %v", len(after.Items), len(before.Items), len(rec.IDs()), err)
	}
	// Nothing the model saw holds a token.
	for _, rq := range reqs {
		b, _ := json.Marshal(rq)
		for _, tok := range m.as.Issued() {
			if bytes.Contains(b, []byte(tok)) {
				t.Fatal("a token reached the model")
			}
		}
	}
}
