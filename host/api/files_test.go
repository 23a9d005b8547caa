package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
)

type call struct {
	method, path, token, contentType string
	body                             io.Reader
}

func do(t testing.TB, base string, c call) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, c.body)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

func multipartBody(t *testing.T, name string, content []byte, fields map[string]string) (io.Reader, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if name != "" {
		part, _ := w.CreateFormFile("file", name)
		part.Write(content)
	}
	w.Close()
	return &buf, w.FormDataContentType()
}

func TestFilesAPI(t *testing.T) {
	ts := server(t)
	base, alice, carol, wsA := ts.base, ts.alice, ts.carol, ts.wsA
	body, ct := multipartBody(t, "notes.md", []byte("# Notes\nhello"), map[string]string{"tags": "draft, q4", "description": "d"})
	status, _, raw := do(t, base, call{"POST", "/workspaces/" + wsA + "/files", alice, ct, body})
	if status != 201 {
		t.Fatalf("upload: %d %s", status, raw)
	}
	var f struct {
		files.Item
		Existing bool `json:"existing"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.Name != "notes.md" || len(f.Tags) != 2 || f.Existing {
		t.Fatalf("upload result: %s %v", raw, err)
	}
	body, ct = multipartBody(t, "notes.md", []byte("# Notes\nhello"), nil)
	if status, _, raw := do(t, base, call{"POST", "/workspaces/" + wsA + "/files", alice, ct, body}); status != 200 || !strings.Contains(string(raw), `"existing":true`) {
		t.Fatalf("duplicate upload: %d %s", status, raw)
	}
	if status, _, raw := do(t, base, call{"GET", "/files/" + f.ID + "/content", alice, "", nil}); status != 200 || string(raw) != "# Notes\nhello" {
		t.Fatalf("content: %d %q", status, raw)
	}
	if status, _, raw := do(t, base, call{"GET", "/files?tag=q4&workspace=" + wsA, alice, "", nil}); status != 200 || !strings.Contains(string(raw), f.ID) {
		t.Fatalf("list: %d %s", status, raw)
	}
	status, _, raw = do(t, base, call{"PATCH", "/files/" + f.ID, alice, "application/json", strings.NewReader(`{"name":"renamed.md","addTags":["final"]}`)})
	if status != 200 || !strings.Contains(string(raw), `"renamed.md"`) {
		t.Fatalf("patch: %d %s", status, raw)
	}
	status, _, raw = do(t, base, call{"POST", "/workspaces/" + wsA + "/folders", alice, "application/json", strings.NewReader(`{"name":"Finance","autoRule":"tag:financial"}`)})
	if status != 201 {
		t.Fatalf("folder: %d %s", status, raw)
	}

	big := bytes.Repeat([]byte("x"), 3<<20)
	bigBody, bigCT := multipartBody(t, "big.bin", big, nil)
	for _, c := range []struct {
		name   string
		call   call
		status int
		detail string
	}{
		{"no token", call{"GET", "/files", "", "", nil}, 401, "Bearer"},
		{"bad token", call{"GET", "/files", "ahk_nope", "", nil}, 401, "malformed"},
		{"other workspace's file", call{"GET", "/files/" + f.ID, carol, "", nil}, 404, "not found"},
		{"other workspace's content", call{"GET", "/files/" + f.ID + "/content", carol, "", nil}, 404, "not found"},
		{"upload into another workspace", call{"POST", "/workspaces/" + wsA + "/files", carol, "", nil}, 404, "workspace"},
		{"unknown file", call{"GET", "/files/nope", alice, "", nil}, 404, "nope"},
		{"path trick in name", call{"POST", "/workspaces/" + wsA + "/files", alice, "", nil}, 400, "path separator"},
		{"malformed JSON", call{"PATCH", "/files/" + f.ID, alice, "application/json", strings.NewReader(`{"name":`)}, 400, "malformed JSON"},
		{"unknown field", call{"PATCH", "/files/" + f.ID, alice, "application/json", strings.NewReader(`{"nam":"x"}`)}, 400, "unknown field"},
		{"bad limit", call{"GET", "/files?limit=abc", alice, "", nil}, 400, "limit"},
		{"bad status", call{"GET", "/files?status=gone", alice, "", nil}, 400, "status"},
		{"bad auto-rule", call{"POST", "/workspaces/" + wsA + "/folders", alice, "application/json", strings.NewReader(`{"name":"x","autoRule":"weird"}`)}, 400, "auto-rule"},
		{"duplicate folder", call{"POST", "/workspaces/" + wsA + "/folders", alice, "application/json", strings.NewReader(`{"name":"Finance"}`)}, 409, "exists"},
		{"search without text", call{"GET", "/workspaces/" + wsA + "/search", alice, "", nil}, 400, "required"},
		{"search with only punctuation", call{"GET", "/workspaces/" + wsA + "/search?q=%3F%21", alice, "", nil}, 400, "no words"},
		{"search another workspace", call{"GET", "/workspaces/" + wsA + "/search?q=notes&layer=instance", carol, "", nil}, 404, "workspace"}, // issue 11 item 15: like every workspace route
		// Issue 11 item 5: a file whose indexing job waits is pending, not
		// missing.
		{"index of a file not indexed yet", call{"GET", "/files/" + f.ID + "/index", alice, "", nil}, 200, `"note":"queued"`},
		{"index of another workspace's file", call{"GET", "/files/" + f.ID + "/index", carol, "", nil}, 404, "not found"},
		{"entries of a file that is no container", call{"GET", "/files/" + f.ID + "/entries", alice, "", nil}, 200, "[]"},
		{"entries of another workspace's file", call{"GET", "/files/" + f.ID + "/entries", carol, "", nil}, 404, "not found"},
		{"oversized upload", call{"POST", "/workspaces/" + wsA + "/files", alice, bigCT, bigBody}, 413, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.call.body == nil && c.call.method == "POST" {
				name := "x.txt"
				if c.name == "path trick in name" {
					name = "../../etc/passwd"
				}
				c.call.body, c.call.contentType = multipartBody(t, name, []byte("x"), nil)
			}
			status, ctype, raw := do(t, base, c.call)
			if c.status == 200 {
				ctype = "application/problem+json" // a success row: only status and body matter
			}
			if status != c.status || ctype != "application/problem+json" || !strings.Contains(string(raw), c.detail) {
				t.Fatalf("%d %s %s, want %d with %q", status, ctype, raw, c.status, c.detail)
			}
		})
	}
	// Refused requests changed nothing: one file, still named renamed.md.
	_, _, raw = do(t, base, call{"GET", "/files?workspace=" + wsA, alice, "", nil})
	var page files.Page
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Items) != 1 || page.Items[0].Name != "renamed.md" {
		t.Fatalf("after refused requests: %s", raw)
	}
}
