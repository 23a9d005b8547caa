package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/jira"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestAgentDownloadsJiraAttachment: a scripted agent lists the user's
// connections, browses a Jira issue, downloads its PDF attachment with the
// connection tools; the file lands in the workspace through the file
// bridge (a docItem of the workflow), is handed to the indexer like an
// upload, and is indexed by the real PDF extractor.
func TestAgentDownloadsJiraAttachment(t *testing.T) {
	ctx := context.Background()
	w := connectionstest.NewAgent(t, "jira")
	svc, err := connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: w.DB, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
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

	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"acme.atlassian.net:" + u.Port()}, Resolver: connectionstest.DNS{"acme.atlassian.net": "127.0.0.1"}}
	connCap := &connections.Capability{Service: svc, Egress: opts}
	toolsCap := &connections.ToolsCapability{Events: w.Workflows, Files: w.Opener()}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{w.FileBridge(), connCap.Wasm(), toolsCap.Wasm()}}, "jira", "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}
	// The connector's own tools are not agent tools.
	for _, ti := range h.Tools() {
		if ti.Plugin == "jira" {
			t.Fatalf("connector tool %s offered to agents", ti.Name)
		}
	}

	att := issue.Attachments[0].ID
	reqs := w.Run(t, h, "get the PDF of PROJ-7", []string{"listConnections", "externalBrowse", "externalDownload", "externalSearch"}, 3,
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", connectionstest.Args(map[string]string{"connection": conn.ID, "service": "issues", "path": "PROJ-7"}))),
		llmtest.CallTools(llmtest.Call("externalDownload", connectionstest.Args(map[string]string{"connection": conn.ID, "service": "issues", "path": "PROJ-7/" + att}))),
		llmtest.Reply("Downloaded camlidl.pdf."))
	if got := connectionstest.ToolResult(t, reqs, 1); !strings.Contains(got, conn.ID) || !strings.Contains(got, "provider=jira") || !strings.Contains(got, "issues") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := connectionstest.ToolResult(t, reqs, 2); !strings.Contains(got, `"camlidl.pdf" path=PROJ-7/`+att) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := connectionstest.ToolResult(t, reqs, 3)
	ref := connectionstest.DocItemRef(got)
	if !strings.Contains(got, "downloaded 'camlidl.pdf'") || ref == "" {
		t.Fatalf("externalDownload: %s", got)
	}
	// The file is the workflow's document, byte for byte.
	doc, stored := w.Document(t, ref)
	if !bytes.Equal(stored, pdf) {
		t.Fatalf("stored %d bytes, want the %d of the attachment", len(stored), len(pdf))
	}
	// Handed to the indexer like an upload, then indexed by the PDF extractor.
	ids := w.Index.IDs()
	if len(ids) != 1 || ids[0] != doc.ID {
		t.Fatalf("indexer got %v", ids)
	}
	w.Ingest(t, h, ids[0])
	// The workflow records each reach into the source (dataSourceAccess):
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
	connectionstest.NeverSent(t, reqs, "jira-api-token-7")
}
