package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/wasm"
)

// TestAgentSharePointToOutlook: a scripted agent browses a SharePoint
// folder, downloads a PDF (it lands in the workspace through the file
// bridge and is indexed by the real PDF extractor) and mails a summary
// through Outlook, all with the connection tools over the fake Graph. The
// downloaded file is uploaded back to another library; a download over
// the host's limit stores nothing; no token reaches the model.
func TestAgentSharePointToOutlook(t *testing.T) {
	ctx := context.Background()
	w := connectionstest.NewAgent(t, "ms")
	m := newMSWorld(t, w.DB)
	conn := m.connect(t, w.P, "work")
	toolsCap := &connections.ToolsCapability{Files: w.Opener()}
	h := m.host(t, nil, []wasm.Capability{w.FileBridge(), toolsCap.Wasm()}, "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: m.svc}

	args := connectionstest.Args
	folder := "/sites/Marketing/Documents/Reports"
	reqs := w.Run(t, h, "summarise the camlidl PDF and mail it to carol", []string{"listConnections", "externalBrowse", "externalDownload", "sendMail"}, 4,
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn.ID, "service": "sharepoint", "path": folder}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "sharepoint", "path": spHost + folder + "/camlidl.pdf"}))),
		llmtest.CallTools(llmtest.Call("sendMail", args(map[string]any{"connection": conn.ID, "service": "outlook", "to": []string{"carol@contoso.com"},
			"subject": "camlidl summary", "body": "CamlIDL generates stub code for interfacing Caml with C."}))),
		llmtest.Reply("Mailed the summary."))
	toolResult := func(i int) string { return connectionstest.ToolResult(t, reqs, i) }
	if got := toolResult(1); !strings.Contains(got, "provider=microsoft") || !strings.Contains(got, "onedrive,outlook,sharepoint,teams") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := toolResult(2); !strings.Contains(got, `"camlidl.pdf" path=`+spHost+folder+`/camlidl.pdf`) || !strings.Contains(got, `folder "Old"`) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := toolResult(3)
	ref := connectionstest.DocItemRef(got)
	if !strings.Contains(got, "downloaded 'camlidl.pdf'") || ref == "" {
		t.Fatalf("externalDownload: %s", got)
	}
	if got := toolResult(4); !strings.Contains(got, `sent "camlidl summary"`) {
		t.Fatalf("sendMail: %s", got)
	}
	if s := m.graph.Sent(); len(s) != 1 || s[0].To[0] != "carol@contoso.com" || !strings.Contains(s[0].Body, "CamlIDL") {
		t.Fatalf("Graph received %+v", s)
	}
	doc, stored := w.Document(t, ref)
	if !bytes.Equal(stored, m.pdf) {
		t.Fatalf("stored %d bytes, want the PDF's %d", len(stored), len(m.pdf))
	}
	ids := w.Index.IDs()
	if len(ids) != 1 || ids[0] != doc.ID {
		t.Fatalf("indexer got %v", ids)
	}
	w.Ingest(t, h, ids[0])

	rctx := w.Context()
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
	before, err := w.Files.List(ctx, w.P, filemeta.Filter{WorkspaceID: w.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	big := call("externalDownload", map[string]string{"connection": conn.ID, "service": "sharepoint", "path": spHost + folder + "/camlidl.pdf"})
	if big.OK || big.Error == nil || !strings.Contains(big.Error.Error(), "too_large") {
		t.Fatalf("over the limit: %+v %+v", big, big.Error)
	}
	after, err := w.Files.List(ctx, w.P, filemeta.Filter{WorkspaceID: w.Workspace})
	if err != nil || len(after.Items) != len(before.Items) || len(w.Index.IDs()) != 1 {
		t.Fatalf("a refused download left %d files (was %d), %d indexed: %v", len(after.Items), len(before.Items), len(w.Index.IDs()), err)
	}
	// Nothing the model saw holds a token.
	connectionstest.NeverSent(t, reqs, m.as.Issued()...)
}
