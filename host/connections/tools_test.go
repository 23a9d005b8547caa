package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/jira"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestAgentDownloadsJiraAttachment: a scripted agent lists the user's
// connections, browses a Jira issue, downloads its PDF attachment with the
// connection tools; the file lands in the workspace through the file
// bridge (a docItem of the workflow), is handed to the indexer like an
// upload, and is indexed by the real PDF extractor.
func TestAgentDownloadsJiraAttachment(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workflow: "jira", Model: &worldtest.Model{
		Models:  map[llm.Operation][]llm.ModelConfig{llm.OpAgent: {{Model: "agent-model", ContextWindow: 32000}}},
		Timeout: 20 * time.Second,
	}})
	svc, err := connections.New(connections.Options{Store: w.DB, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	site := jira.New("me@acme.example", "jira-api-token-7")
	t.Cleanup(site.Close)
	pdf, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "deb-camlidl-1.04.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	issue := site.AddIssue("PROJ-7", "Port camlidl", "In Progress", jira.Attachment{Filename: "camlidl.pdf", MIMEType: "application/pdf", Content: pdf})
	u, _ := url.Parse(site.URL)
	conn, err := svc.AddToken(ctx, w.P, connections.NewToken{Provider: "jira", Label: "acme", Auth: "basic",
		BaseURL: "http://acme.atlassian.net:" + u.Port(), Account: "me@acme.example", Token: "jira-api-token-7"})
	if err != nil {
		t.Fatal(err)
	}

	rec := &connectionstest.Recorder{}
	fileSvc := w.Files.WithIndexer(rec, nil)
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"acme.atlassian.net:" + u.Port()}, Resolver: connectionstest.DNS{"acme.atlassian.net": "127.0.0.1"}}
	fc := &files.Capability{Files: fileSvc, Workflows: w.Workflows}
	connCap := &connections.Capability{Service: svc, Egress: opts}
	toolsCap := &connections.ToolsCapability{Events: w.Workflows}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{fc.Wasm(), connCap.Wasm(), toolsCap.Wasm()}}, "jira", "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}
	// The connector's own tools are not agent tools.
	for _, ti := range h.Tools() {
		if ti.Plugin == "jira" {
			t.Fatalf("connector tool %s offered to agents", ti.Name)
		}
	}

	set, missing, err := tools.NewRegistry(h, map[string][]string{"conn": {"listConnections", "externalBrowse", "externalDownload", "externalSearch"}}).Set("conn")
	if err != nil || len(missing) != 0 {
		t.Fatalf("tool set: %v %v", missing, err)
	}
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	att := issue.Attachments[0].ID
	w.Server.Script(
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn.ID, "service": "issues", "path": "PROJ-7"}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "issues", "path": "PROJ-7/" + att}))),
		llmtest.Reply("Downloaded camlidl.pdf."))
	rctx := toolcall.With(ctx, toolcall.Caller{Principal: w.P, WorkspaceID: w.Workspace, WorkflowID: w.Workflow})
	rctx = llm.WithAttribution(rctx, llm.Attribution{TenantID: w.Tenant.ID, WorkspaceID: w.Workspace, UserID: w.User.ID, WorkflowID: w.Workflow, Purpose: "agent"})
	res := agent.New(w.Client, agent.Config{}, nil).Run(rctx, agent.Input{Prompt: "get the PDF of PROJ-7", Round: 1}, set, nil)
	if res.Outcome != agent.Completed || res.ToolCalls != 3 {
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
	if got := toolResult(1); !strings.Contains(got, conn.ID) || !strings.Contains(got, "provider=jira") || !strings.Contains(got, "issues") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := toolResult(2); !strings.Contains(got, `"camlidl.pdf" path=PROJ-7/`+att) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := toolResult(3)
	ref := docItemRef(got)
	if !strings.Contains(got, "downloaded 'camlidl.pdf'") || ref == "" {
		t.Fatalf("externalDownload: %s", got)
	}
	// The file is the workflow's document, byte for byte.
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
		t.Fatalf("stored %d bytes, want the %d of the attachment", len(stored), len(pdf))
	}
	// Handed to the indexer like an upload, then indexed by the PDF extractor.
	ids := rec.IDs()
	if len(ids) != 1 || ids[0] != docs[0].FileID {
		t.Fatalf("indexer got %v", ids)
	}
	ing := knowledge.NewIngester(w.DB, w.Blobs, knowledge.NewExtractors(h), nil)
	if _, err := ing.Ingest(ctx, ids[0], false); err != nil {
		t.Fatal(err)
	}
	st, err := w.DB.ContentState(ctx, w.P, ids[0])
	if err != nil || st.Status != knowledge.StatusIndexed {
		t.Fatalf("content state %+v %v", st, err)
	}
	// The workflow records each reach into the source (seed 000 §9.4):
	// the browse and the download, with the connector and the path.
	evs, err := w.Workflows.Events(ctx, w.P, w.Workflow, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var access []string
	for _, ev := range evs {
		if ev.Type == workflows.EventDataSourceAccess {
			var d workflows.DataSourceAccessData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			access = append(access, d.Operation+" "+d.Provider+"/"+d.Service+" "+d.Path+" by "+d.Tool)
		}
	}
	if strings.Join(access, "; ") != "browse jira/issues PROJ-7 by externalBrowse; download jira/issues PROJ-7/"+att+" by externalDownload" {
		t.Fatalf("dataSourceAccess events: %q", access)
	}
	// Nothing the model saw holds the API token.
	for _, rq := range reqs {
		b, _ := json.Marshal(rq)
		if bytes.Contains(b, []byte("jira-api-token-7")) {
			t.Fatal("the token reached the model")
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
