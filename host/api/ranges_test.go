package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
)

// TestFileContentRanges: a file's content (and a version's) answers a byte
// range with 206 and its Content-Range, so that a PDF viewer reads only
// the pages it shows; the forms of RFC 9110 §14 (closed, open, suffix), a
// range past the end (416 with the size), an If-Range of another content
// and several ranges (the whole file, 200) and a malformed header (ignored).
func TestFileContentRanges(t *testing.T) {
	ts := server(t)
	content := "0123456789abcdefghij" // 20 bytes
	body, ct := multipartBody(t, "digits.txt", []byte(content), nil)
	status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/files", ts.alice, ct, body})
	var f filemeta.Item
	if status != 201 || json.Unmarshal(raw, &f) != nil {
		t.Fatalf("upload: %d %s", status, raw)
	}
	etag := `"` + f.SHA256 + `"`
	cases := []struct {
		name, rng, ifRange string
		status             int
		body, contentRange string
	}{
		{"whole", "", "", 200, content, ""},
		{"closed", "bytes=2-5", "", 206, "2345", "bytes 2-5/20"},
		{"open", "bytes=15-", "", 206, "fghij", "bytes 15-19/20"},
		{"suffix", "bytes=-3", "", 206, "hij", "bytes 17-19/20"},
		{"suffix longer than the file", "bytes=-50", "", 206, content, "bytes 0-19/20"},
		{"end past the size", "bytes=18-99", "", 206, "ij", "bytes 18-19/20"},
		{"start past the end", "bytes=20-", "", 416, "", "bytes */20"},
		{"empty suffix", "bytes=-0", "", 416, "", "bytes */20"},
		{"several ranges", "bytes=0-1,4-5", "", 200, content, ""},
		{"other unit", "items=0-1", "", 200, content, ""},
		{"malformed", "bytes=5-2", "", 200, content, ""},
		{"if-range matches", "bytes=0-0", etag, 206, "0", "bytes 0-0/20"},
		{"if-range of another content", "bytes=0-0", `"0000"`, 200, content, ""},
	}
	for _, path := range []string{"/files/" + f.ID + "/content", "/files/" + f.ID + "/versions/1/content"} {
		for _, c := range cases {
			t.Run(path[len(path)-12:]+"/"+c.name, func(t *testing.T) {
				req, _ := http.NewRequest("GET", ts.base+path, nil)
				req.Header.Set("Authorization", "Bearer "+ts.alice)
				if c.rng != "" {
					req.Header.Set("Range", c.rng)
				}
				if c.ifRange != "" {
					req.Header.Set("If-Range", c.ifRange)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != c.status || resp.Header.Get("Content-Range") != c.contentRange {
					t.Fatalf("%d %q, want %d %q", resp.StatusCode, resp.Header.Get("Content-Range"), c.status, c.contentRange)
				}
				if c.status != 416 && string(got) != c.body {
					t.Fatalf("body %q, want %q", got, c.body)
				}
				if resp.Header.Get("Accept-Ranges") != "bytes" || resp.Header.Get("ETag") != etag {
					t.Fatalf("Accept-Ranges %q ETag %q", resp.Header.Get("Accept-Ranges"), resp.Header.Get("ETag"))
				}
				if c.status == 416 && !strings.Contains(string(got), "20 bytes") && !strings.Contains(string(got), "no bytes") {
					t.Fatalf("416 body %q does not say why", got)
				}
			})
		}
	}
}
