package filetransfer_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/filetransfer"
	"github.com/agenthost/agenthost/host/filetransfer/sftptest"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// TestAgentDownloadsFromSFTP: a scripted agent browses the user's SFTP
// server with the connection tools, downloads a PDF (it lands in the
// workspace through the file bridge and is indexed by the real PDF
// extractor), then tries a download from an FTP server that vanishes in
// the middle of the transfer: a clear error, and nothing of it stored.
func TestAgentDownloadsFromSFTP(t *testing.T) {
	ctx := context.Background()
	w := connectionstest.NewAgent(t, "sftp")
	svc, err := connections.New(connections.Options{Store: w.DB, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	root, pdf := tree(t)
	srv := sftptest.Start(t, account, password, nil)
	vanish := startHostileFTP(t, "vanish")
	conn, err := svc.AddToken(ctx, w.P, connections.NewToken{Provider: "ftp", Label: "files", Auth: "basic",
		BaseURL: "sftp://files.test:" + srv.Port + filepath.ToSlash(root), Account: account, Token: password, HostKey: srv.Fingerprint})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := svc.AddToken(ctx, w.P, connections.NewToken{Provider: "ftp", Label: "flaky", Auth: "basic",
		BaseURL: "ftp://files.test:" + vanish.port, Account: account, Token: password})
	if err != nil {
		t.Fatal(err)
	}

	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"files.test:" + srv.Port, "files.test:" + vanish.port}, Resolver: connectionstest.DNS{"files.test": "127.0.0.1"}}
	ft := &filetransfer.Capability{Logins: svc, Egress: opts}
	t.Cleanup(ft.Close)
	toolsCap := &connections.ToolsCapability{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{w.FileBridge(), ft.Wasm(), toolsCap.Wasm()}}, "ftp", "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}

	args := connectionstest.Args
	reqs := w.Run(t, h, "get the PDF from my SFTP server", []string{"listConnections", "externalBrowse", "externalDownload", "externalSearch"}, 4,
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn.ID, "service": "files", "path": "docs"}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "files", "path": "docs/camlidl.pdf"}))),
		llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": broken.ID, "service": "files", "path": "big.bin"}))),
		llmtest.Reply("Downloaded camlidl.pdf; the other server broke off."))
	toolResult := func(i int) string { return connectionstest.ToolResult(t, reqs, i) }
	if got := toolResult(1); !strings.Contains(got, conn.ID) || !strings.Contains(got, "provider=ftp") || !strings.Contains(got, "files") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := toolResult(2); !strings.Contains(got, `"camlidl.pdf" path=docs/camlidl.pdf`) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := toolResult(3)
	ref := connectionstest.DocItemRef(got)
	if !strings.Contains(got, "downloaded 'camlidl.pdf'") || ref == "" {
		t.Fatalf("externalDownload: %s", got)
	}
	if got := toolResult(4); strings.Contains(got, "docItem:") || !strings.Contains(got, "server_error") {
		t.Fatalf("download from a vanishing server: %s", got)
	}
	doc, stored := w.Document(t, ref)
	if !bytes.Equal(stored, pdf) {
		t.Fatalf("stored %d bytes, want the %d of the file", len(stored), len(pdf))
	}
	// Only the PDF is in the workspace and went to the indexer.
	page, err := w.Files.List(ctx, w.P, filemeta.Filter{WorkspaceID: w.Workspace})
	ids := w.Index.IDs()
	if err != nil || len(page.Items) != 1 || len(ids) != 1 || ids[0] != doc.ID {
		t.Fatalf("workspace files %+v, indexer got %v (%v)", page.Items, ids, err)
	}
	w.Ingest(t, h, ids[0])
	connectionstest.NeverSent(t, reqs, password)
}
