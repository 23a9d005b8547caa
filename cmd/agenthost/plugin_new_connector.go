package main

// connectorScaffold is a connector for a generic REST provider named like
// the plugin: the service "files" (browse a folder, download a file) over
// pdk/connection, with fixtures for the simulated connection of
// `agenthost plugin test`.
var connectorScaffold = map[string]string{
	"plugin.json": `{
  "name": "[[.Name]]",
  "version": "0.1.0",
  "kind": "connector",
  "description": "[[.Name]]: the files of the provider [[.Name]] (browse folders, download files) with the user's connection.",
  "capabilities": ["connection"],
  "connector": {
    "provider": "[[.Name]]",
    "services": ["files"],
    "hosts": ["[[.Host]]"],
    "auth": "token",
    "scopes": ["files.read"]
  }
}
`,
	"main.go": `// Command [[.Name]] is an agenthost connector plugin: the service "files"
// of the provider [[.Name]]'s REST API (browse a folder, download a file)
// with the calling user's connection. The host attaches the connection's
// credentials to each request, and sends it only to the hosts of
// plugin.json's connector section that are also the connection's own:
// the plugin never holds them. Build it with ` + "`agenthost plugin build .`" + `,
// try it with ` + "`agenthost plugin test .`" + `.
package main

import (
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
	"github.com/agenthost/agenthost/pdk/connector"
)

func init() {
	// One adapter per service of plugin.json's connector section; Serve
	// exports browse, download, upload and search, each dispatching to
	// the service a call names.
	connector.Serve(map[string]connector.ServiceAdapter{"files": files{}})
}

func main() {}

// item is a folder entry or a file's metadata as the provider's API
// answers it.
type item struct {
	ID       string ` + "`" + `json:"id"` + "`" + `
	Name     string ` + "`" + `json:"name"` + "`" + `
	Type     string ` + "`" + `json:"type"` + "`" + ` // "folder" or "file"
	Size     int64  ` + "`" + `json:"size"` + "`" + `
	MIMEType string ` + "`" + `json:"mimeType"` + "`" + `
}

// get sends GET path to the connection's site and returns a 200 answer;
// other answers become errors the connection tools pass on.
func get(conn, path string) (connection.Response, error) {
	info, err := connection.Info(conn) // provider, base URL, account: never the secret
	if err != nil {
		return connection.Response{}, err
	}
	if info.BaseURL == "" {
		return connection.Response{}, pdk.Errorf("no_base_url", "connection %q names no site", info.Label)
	}
	resp, err := connection.Do(connection.Request{Connection: conn, URL: info.BaseURL + path})
	if err != nil {
		return resp, err
	}
	switch resp.Status {
	case 200:
		return resp, nil
	case 404:
		return resp, pdk.Errorf("not_found", "%s: no such item", path)
	case 429:
		return resp, pdk.Errorf("rate_limited", "the provider asks to wait %s s", resp.Headers["retry-after"])
	}
	return resp, pdk.Errorf("provider_error", "%s: HTTP %d", path, resp.Status)
}

// getJSON gets path and decodes its JSON answer into out.
func getJSON(conn, path string, out any) error {
	resp, err := get(conn, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return pdk.Errorf("bad_response", "%s: %v", path, err)
	}
	return nil
}

type files struct{}

// Browse lists a folder ("" is the root), a page at a time: the
// provider's cursor is the listing's next.
func (files) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	folder := r.Path
	if folder == "" {
		folder = "root"
	}
	q := url.Values{}
	if r.Cursor != "" {
		q.Set("cursor", r.Cursor)
	}
	if r.Limit > 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	path := "/v1/folders/" + url.PathEscape(folder) + "/items"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var page struct {
		Items      []item ` + "`" + `json:"items"` + "`" + `
		NextCursor string ` + "`" + `json:"nextCursor"` + "`" + `
	}
	if err := getJSON(r.Connection, path, &page); err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}, Next: page.NextCursor}
	for _, it := range page.Items {
		out.Entries = append(out.Entries, connector.Entry{ID: it.ID, Name: it.Name, Path: it.ID,
			Folder: it.Type == "folder", Size: it.Size, MIMEType: it.MIMEType})
	}
	return out, nil
}

// Download fetches a file's metadata, then its content, within the
// caller's size bound.
func (files) Download(r connector.DownloadRequest) (connector.File, error) {
	id := r.ID
	if id == "" {
		id = r.Path
	}
	if id == "" {
		return connector.File{}, pdk.Errorf("invalid_request", "download needs a file's id or path")
	}
	var meta item
	if err := getJSON(r.Connection, "/v1/files/"+url.PathEscape(id), &meta); err != nil {
		return connector.File{}, err
	}
	if meta.Type == "folder" {
		return connector.File{}, pdk.Errorf("not_a_file", "%s is a folder", meta.Name)
	}
	if r.MaxBytes > 0 && meta.Size > r.MaxBytes {
		return connector.File{}, pdk.Errorf("too_large", "%s has %d bytes, more than %d", meta.Name, meta.Size, r.MaxBytes)
	}
	content, err := get(r.Connection, "/v1/files/"+url.PathEscape(id)+"/content")
	if err != nil {
		return connector.File{}, err
	}
	if r.MaxBytes > 0 && int64(len(content.Body)) > r.MaxBytes {
		return connector.File{}, pdk.Errorf("too_large", "%s has more than %d bytes", meta.Name, r.MaxBytes)
	}
	mt := meta.MIMEType
	if mt == "" {
		mt = content.Headers["content-type"] // the host lower-cases header names
	}
	return connector.File{Name: meta.Name, MIMEType: mt, Data: content.Body}, nil
}

// Upload is not offered yet: the connection tools say so.
func (files) Upload(connector.UploadRequest) (connector.Entry, error) {
	return connector.Entry{}, connector.ErrUnsupported("files", "upload")
}

// Search is not offered yet.
func (files) Search(connector.SearchRequest) (connector.Listing, error) {
	return connector.Listing{}, connector.ErrUnsupported("files", "search")
}
`,
	"main_test.go": `package main

import (
	"testing"

	"github.com/agenthost/agenthost/host/plugintest"
)

// TestFixtures builds this connector for WebAssembly and runs every
// fixture of testdata/ against it with a simulated connection (a fake
// credential the host attaches) and recorded provider answers, as
// ` + "`agenthost plugin test .`" + ` does.
func TestFixtures(t *testing.T) {
	plugintest.Test(t, ".")
}
`,
	"testdata/browses-the-root-folder.json": `{
  "tool": "browse",
  "args": {"connection": "conn-1", "service": "files", "path": ""},
  "connection": {"provider": "[[.Name]]", "auth": "token", "token": "fake-token-for-tests", "baseUrl": "https://[[.Host]]"},
  "http": [{
    "url": "https://[[.Host]]/v1/folders/root/items",
    "wantHeaders": {"Authorization": "Bearer fake-token-for-tests"},
    "body": {"items": [{"id": "f1", "name": "Reports", "type": "folder"},
                       {"id": "d7", "name": "notes.txt", "type": "file", "size": 15, "mimeType": "text/plain"}],
             "nextCursor": "page-2"}
  }],
  "want": {"data": {"entries": [{"id": "f1", "name": "Reports", "path": "f1", "folder": true},
                                {"id": "d7", "name": "notes.txt", "path": "d7", "size": 15, "mimeType": "text/plain"}],
                    "next": "page-2"}}
}
`,
	"testdata/downloads-a-file.json": `{
  "tool": "download",
  "args": {"connection": "conn-1", "service": "files", "id": "d7"},
  "connection": {"provider": "[[.Name]]", "auth": "token", "token": "fake-token-for-tests", "baseUrl": "https://[[.Host]]"},
  "http": [
    {"url": "https://[[.Host]]/v1/files/d7", "wantHeaders": {"Authorization": "Bearer fake-token-for-tests"},
     "body": {"id": "d7", "name": "notes.txt", "type": "file", "size": 15, "mimeType": "text/plain"}},
    {"url": "https://[[.Host]]/v1/files/d7/content", "wantHeaders": {"Authorization": "Bearer fake-token-for-tests"},
     "headers": {"Content-Type": "text/plain"}, "body": "Call Ada back.\n"}
  ],
  "want": {"data": {"name": "notes.txt", "mimeType": "text/plain", "data": "Q2FsbCBBZGEgYmFjay4K"}}
}
`,
	"testdata/reports-a-missing-folder.json": `{
  "tool": "browse",
  "args": {"connection": "conn-1", "service": "files", "path": "gone"},
  "connection": {"provider": "[[.Name]]", "auth": "token", "token": "fake-token-for-tests", "baseUrl": "https://[[.Host]]"},
  "http": [{"url": "https://[[.Host]]/v1/folders/gone/items", "status": 404, "body": {"error": "not found"}}],
  "wantError": "not_found"
}
`,
	"testdata/refuses-a-site-outside-its-hosts.json": `{
  "tool": "browse",
  "args": {"connection": "conn-1", "service": "files", "path": ""},
  "connection": {"provider": "[[.Name]]", "auth": "token", "token": "fake-token-for-tests", "baseUrl": "https://files.elsewhere.example"},
  "http": [{"url": "https://files.elsewhere.example/v1/folders/root/items", "body": {"items": []}}],
  "wantError": "host_refused"
}
`,
	"testdata/refuses-another-providers-connection.json": `{
  "tool": "browse",
  "args": {"connection": "conn-1", "service": "files", "path": ""},
  "connection": {"provider": "another-provider", "auth": "token", "token": "fake-token-for-tests", "baseUrl": "https://[[.Host]]"},
  "http": [{"url": "https://[[.Host]]/v1/folders/root/items", "body": {"items": []}}],
  "wantError": "wrong_provider"
}
`,
	"testdata/has-no-upload-yet.json": `{
  "tool": "upload",
  "args": {"connection": "conn-1", "service": "files", "name": "a.txt", "data": "YQ=="},
  "connection": {"provider": "[[.Name]]", "auth": "token", "token": "fake-token-for-tests", "baseUrl": "https://[[.Host]]"},
  "wantError": "unsupported"
}
`,
}
