package sdk_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/sdk"
)

// guard only keeps a broken test from hanging; no assertion depends on it.
const guard = 2 * time.Minute

func testClient(t *testing.T, h http.Handler) *sdk.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := sdk.New(srv.URL, sdk.WithToken("ahk_test"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestErrors: answers of 400 and above are *sdk.Error with the problem
// document's fields, or what a non-problem body says.
func TestErrors(t *testing.T) {
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/workflows/missing":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(404)
			io.WriteString(w, `{"type":"about:blank","title":"Not Found","status":404,"detail":"workflow missing"}`)
		case "/api/v1/workflows/proxied":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<h1>upstream down</h1>")
		case "/api/v1/workspaces/ws/workflows":
			w.Header().Set("Content-Type", "application/problem+json")
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			io.WriteString(w, `{"type":"about:blank","title":"Too Many Requests","status":429}`)
		}
	}))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		want sdk.Error
	}{
		{"problem", func() error { _, err := c.GetWorkflow(ctx, "missing"); return err },
			sdk.Error{Status: 404, Type: "about:blank", Title: "Not Found", Detail: "workflow missing", Method: "GET", Path: "/api/v1/workflows/missing"}},
		{"not a problem", func() error { _, err := c.GetWorkflow(ctx, "proxied"); return err },
			sdk.Error{Status: 502, Title: "Bad Gateway", Detail: "<h1>upstream down</h1>", Method: "GET", Path: "/api/v1/workflows/proxied"}},
		{"retry after", func() error { _, err := c.StartWorkflow(ctx, "ws", sdk.StartRequest{Prompt: "x"}); return err },
			sdk.Error{Status: 429, Type: "about:blank", Title: "Too Many Requests", RetryAfter: 7 * time.Second, Method: "POST", Path: "/api/v1/workspaces/ws/workflows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *sdk.Error
			if err := tc.call(); !errors.As(err, &e) {
				t.Fatalf("err %v (%T), want *sdk.Error", err, err)
			}
			if *e != tc.want {
				t.Fatalf("error %+v, want %+v", *e, tc.want)
			}
		})
	}
}

// TestRequests: the bearer token, path parameters escaped (an id cannot
// reach another route), query parameters, and JSON bodies as the API
// reads them.
func TestRequests(t *testing.T) {
	var got []string
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization")+" "+string(body))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/files"):
			io.WriteString(w, `{"items":[{"id":"f1","name":"a.pdf","tags":["x"],"createdAt":"2026-11-26T04:00:00Z"}],"next":"c2"}`)
		default:
			io.WriteString(w, `{"id":"wf1","status":"running"}`)
		}
	}))
	ctx := context.Background()
	page, err := c.ListFiles(ctx, &sdk.ListFilesParams{Workspace: "w 1", Limit: 5})
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "a.pdf" || page.Next != "c2" || page.Items[0].CreatedAt.Year() != 2026 {
		t.Fatalf("ListFiles: %+v %v", page, err)
	}
	if _, err := c.GetWorkflow(ctx, "../tokens"); err != nil {
		t.Fatal(err)
	}
	wf := "wf0"
	if _, err := c.StartWorkflow(ctx, "ws", sdk.StartRequest{Prompt: "hi", FileIDs: []string{"f1"}, WorkflowID: &wf}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /api/v1/files?limit=5&workspace=w+1 Bearer ahk_test ",
		"GET /api/v1/workflows/..%2Ftokens? Bearer ahk_test ",
		`POST /api/v1/workspaces/ws/workflows? Bearer ahk_test {"fileIds":["f1"],"prompt":"hi","workflowId":"wf0"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// halfReader gives its first half, then waits until the server has read
// it before giving the second: a client that read the whole file before
// sending would never see the server read anything.
type halfReader struct {
	first, second []byte
	served        <-chan struct{}
}

func (h *halfReader) Read(p []byte) (int, error) {
	if len(h.first) > 0 {
		n := copy(p, h.first)
		h.first = h.first[n:]
		return n, nil
	}
	if h.served != nil {
		select {
		case <-h.served:
		case <-time.After(guard):
			return 0, errors.New("the server never received the first half: the upload was buffered")
		}
		h.served = nil
	}
	if len(h.second) > 0 {
		n := copy(p, h.second)
		h.second = h.second[n:]
		return n, nil
	}
	return 0, io.EOF
}

// TestUploadStreams: an upload is sent while it is read, with its form
// fields and the file's name and type.
func TestUploadStreams(t *testing.T) {
	served := make(chan struct{})
	first, second := strings.Repeat("a", 40<<10), strings.Repeat("b", 40<<10)
	var fields []string
	var content string
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if p.FormName() == "file" {
				fields = append(fields, "file="+p.FileName()+" "+p.Header.Get("Content-Type"))
				head := make([]byte, len(first))
				if _, err := io.ReadFull(p, head); err != nil {
					http.Error(w, err.Error(), 400)
					return
				}
				close(served)
				rest, _ := io.ReadAll(p)
				content = string(head) + string(rest)
				continue
			}
			v, _ := io.ReadAll(p)
			fields = append(fields, p.FormName()+"="+string(v))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"id":"f9","name":"r.pdf","existing":false}`)
	}))
	up, err := c.UploadFile(context.Background(), "ws", sdk.UploadFileRequest{
		File: &halfReader{first: []byte(first), second: []byte(second), served: served}, FileName: "r.pdf", Tags: "a,b",
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.ID != "f9" || up.Existing || content != first+second {
		t.Fatalf("upload %+v, %d bytes arrived", up, len(content))
	}
	if strings.Join(fields, ";") != "file=r.pdf application/pdf;tags=a,b" {
		t.Fatalf("fields %q", fields)
	}
	if _, err := c.UploadFile(context.Background(), "ws", sdk.UploadFileRequest{Tags: "x"}); err == nil || !strings.Contains(err.Error(), `"file" is required`) {
		t.Fatalf("upload without a file: %v", err)
	}
}

// TestNewRefusesBadURLs: a server URL must be http(s) with a host.
func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://", "http://a b"} {
		if _, err := sdk.New(u); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}

// TestUploadLength: a file whose size is known is sent with an exact
// Content-Length (some servers do not read a chunked body whole); one of
// unknown size is sent chunked.
func TestUploadLength(t *testing.T) {
	var lengths []int64
	var read []int
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		lengths = append(lengths, r.ContentLength)
		read = append(read, len(raw))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"f1"}`)
	}))
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("note ", 10000)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	for _, body := range []sdk.UploadFileRequest{
		{File: f, FileName: "notes.txt", Description: "d", Tags: "a"},
		{File: strings.NewReader("hello"), FileName: "h.txt"},
		{File: io.MultiReader(strings.NewReader("hello")), FileName: "h.txt"},
	} {
		if _, err := c.UploadFile(ctx, "ws", body); err != nil {
			t.Fatal(err)
		}
	}
	if lengths[0] != int64(read[0]) || lengths[1] != int64(read[1]) || lengths[2] != -1 || read[0] < 50000 {
		t.Fatalf("Content-Length %v, bodies of %v bytes", lengths, read)
	}
}
