package google

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func newFake(t *testing.T) *Server {
	t.Helper()
	s := New(func(tok string) bool { return tok == "good" }, "me@example.org")
	t.Cleanup(s.Close)
	return s
}

func do(t *testing.T, s *Server, method, path string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer good")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%s: not JSON: %s", name, got)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		_ = os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(pretty)) {
		t.Fatalf("%s:\n%s\nwant\n%s", name, pretty, want)
	}
}

// TestErrorBodies: Google's error documents, as golden files.
func TestErrorBodies(t *testing.T) {
	s := newFake(t)
	doc := s.Add(File{Name: "Doc", MIMEType: DocumentType})
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"unauthenticated", "GET", "/drive/v3/files", map[string]string{"Authorization": "Bearer expired"}, 401},
		{"not_found", "GET", "/drive/v3/files/nope", nil, 404},
		{"not_downloadable", "GET", "/drive/v3/files/" + doc + "?alt=media", nil, 403},
		{"conversion", "GET", "/drive/v3/files/" + doc + "/export?mimeType=image/png", nil, 400},
		{"page_size", "GET", "/drive/v3/files?pageSize=1001", nil, 400},
		{"fulltext_order", "GET", "/drive/v3/files?" + url.Values{"q": {"fullText contains 'x'"}, "orderBy": {"name"}}.Encode(), nil, 400},
		{"gmail_not_found", "GET", "/gmail/v1/users/me/messages/18f", nil, 404},
	} {
		resp, b := do(t, s, tc.method, tc.path, nil, tc.hdr)
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", tc.name, resp.StatusCode, b)
		}
		golden(t, tc.name, b)
	}
}

// TestQueryLanguage: the q subset, with escaped quotes, and paging.
func TestQueryLanguage(t *testing.T) {
	s := newFake(t)
	f := s.AddFolder("Fin", "")
	s.Add(File{Name: "Valentine's Day", MIMEType: "text/plain", Parents: []string{f}, Content: []byte("roses")})
	s.Add(File{Name: `back\slash`, MIMEType: "application/pdf", Parents: []string{f}})
	s.Add(File{Name: "gone", MIMEType: "text/plain", Parents: []string{f}, Trashed: true})
	s.Add(File{Name: "Plan", MIMEType: DocumentType, Text: "quarterly plan"})
	for q, want := range map[string]string{
		`'` + f + `' in parents and trashed = false`:         "Valentine's Day,back\\slash",
		`'` + f + `' in parents`:                             "Valentine's Day,back\\slash,gone",
		`name = 'Valentine\'s Day'`:                          "Valentine's Day",
		`name = 'back\\slash'`:                               "back\\slash",
		`mimeType = 'application/pdf' or name contains 'pl'`: "back\\slash,Plan",
		`fullText contains 'Quarterly'`:                      "Plan",
		`fullText contains 'roses' and not trashed = true`:   "Valentine's Day",
		`mimeType != 'application/vnd.google-apps.folder' and (name = 'gone' or name = 'Plan')`: "gone,Plan",
	} {
		resp, b := do(t, s, "GET", "/drive/v3/files?"+url.Values{"q": {q}}.Encode(), nil, nil)
		var l struct {
			Files []struct{ Name string } `json:"files"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &l) != nil {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, b)
		}
		var got []string
		for _, x := range l.Files {
			got = append(got, x.Name)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
	for _, q := range []string{`name = 'unterminated`, `owner = 'x'`, `'x' in owners`, `trashed = 'no'`, `name`} {
		if resp, _ := do(t, s, "GET", "/drive/v3/files?"+url.Values{"q": {q}}.Encode(), nil, nil); resp.StatusCode != 400 {
			t.Errorf("%s: %d", q, resp.StatusCode)
		}
	}
	// Paging: a token is bound to its query.
	_, b := do(t, s, "GET", "/drive/v3/files?pageSize=2&fields=nextPageToken,files(id,name,size)", nil, nil)
	var p struct {
		NextPageToken string           `json:"nextPageToken"`
		Files         []map[string]any `json:"files"`
	}
	if json.Unmarshal(b, &p) != nil || p.NextPageToken == "" || len(p.Files) != 2 || p.Files[0]["mimeType"] != nil {
		t.Fatalf("first page %s", b)
	}
	if resp, _ := do(t, s, "GET", "/drive/v3/files?pageToken="+p.NextPageToken+"&q=trashed+%3D+false", nil, nil); resp.StatusCode != 400 {
		t.Fatalf("a token of another query: %d", resp.StatusCode)
	}
	if resp, b := do(t, s, "GET", "/drive/v3/files?fields=files(id,bogus)", nil, nil); resp.StatusCode != 400 || !strings.Contains(string(b), "bogus") {
		t.Fatalf("bad fields: %d %s", resp.StatusCode, b)
	}
}

// TestUploadsAndMail: multipart, resumable in chunks (308 until done),
// a sent message in SENT with its payload in base64url, throttling.
func TestUploadsAndMail(t *testing.T) {
	s := newFake(t)
	body := "--xx\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"a.txt\",\"parents\":[\"root\"]}\r\n--xx\r\nContent-Type: text/plain\r\n\r\nhello\r\n--xx--\r\n"
	resp, b := do(t, s, "POST", "/upload/drive/v3/files?uploadType=multipart&fields=id,name,size,parents", []byte(body), map[string]string{"Content-Type": "multipart/related; boundary=xx"})
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"size":"5"`) || !strings.Contains(string(b), RootID) {
		t.Fatalf("multipart: %d %s", resp.StatusCode, b)
	}
	// Chunks but the last are multiples of 256 KiB (Drive's "Perform a
	// resumable upload": "in multiples of 256 KB (256 x 1024 bytes)").
	first := bytes.Repeat([]byte("0"), 256<<10)
	total := strconv.Itoa(len(first) + 5)
	resp, _ = do(t, s, "POST", "/upload/drive/v3/files?uploadType=resumable", []byte(`{"name":"big.bin"}`),
		map[string]string{"Content-Type": "application/json", "X-Upload-Content-Length": total})
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 200 || loc == nil || loc.Query().Get("upload_id") == "" {
		t.Fatalf("resumable start: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = do(t, s, "PUT", loc.RequestURI(), first, map[string]string{"Content-Range": "bytes 0-262143/" + total})
	if resp.StatusCode != 308 || resp.Header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("first chunk: %d %v", resp.StatusCode, resp.Header)
	}
	resp, b = do(t, s, "PUT", loc.RequestURI(), []byte("56789"), map[string]string{"Content-Range": "bytes 262144-262148/" + total})
	if resp.StatusCode != 200 || len(s.Uploads()) != 2 || string(s.Uploads()[1].Content) != string(first)+"56789" {
		t.Fatalf("last chunk: %d %s", resp.StatusCode, b)
	}
	raw := base64.URLEncoding.EncodeToString([]byte("To: bob@example.org\r\nSubject: hi\r\n\r\nhello bob\r\n"))
	resp, b = do(t, s, "POST", "/gmail/v1/users/me/messages/send", []byte(`{"raw":"`+raw+`"}`), map[string]string{"Content-Type": "application/json"})
	var sent struct {
		ID       string   `json:"id"`
		LabelIDs []string `json:"labelIds"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &sent) != nil || sent.LabelIDs[0] != "SENT" {
		t.Fatalf("send: %d %s", resp.StatusCode, b)
	}
	_, b = do(t, s, "GET", "/gmail/v1/users/me/messages/"+sent.ID+"?format=full", nil, nil)
	var m struct {
		Payload struct {
			Body struct{ Data string } `json:"body"`
		} `json:"payload"`
	}
	if json.Unmarshal(b, &m) != nil {
		t.Fatalf("get: %s", b)
	}
	if d, err := base64.URLEncoding.DecodeString(m.Payload.Body.Data); err != nil || string(d) != "hello bob\r\n" {
		t.Fatalf("body %q %v", d, err)
	}
	if resp, _ := do(t, s, "POST", "/gmail/v1/users/me/messages/send", []byte(`{"raw":"`+base64.URLEncoding.EncodeToString([]byte("Subject: x\r\n\r\nx"))+`"}`), nil); resp.StatusCode != 400 {
		t.Fatalf("no recipient: %d", resp.StatusCode)
	}
	if resp, _ := do(t, s, "GET", "/gmail/v1/users/someone@else.org/labels", nil, nil); resp.StatusCode != 403 {
		t.Fatalf("another mailbox: %d", resp.StatusCode)
	}
	s.Throttle(429, 7*time.Second)
	s.Throttle(403, time.Second)
	if resp, b := do(t, s, "GET", "/gmail/v1/users/me/labels", nil, nil); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(b), "RESOURCE_EXHAUSTED") {
		t.Fatalf("429: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, s, "GET", "/gmail/v1/users/me/labels", nil, nil); resp.StatusCode != 403 || !strings.Contains(string(b), "rateLimitExceeded") {
		t.Fatalf("403: %d %s", resp.StatusCode, b)
	}
	if n := len(s.Authorizations()); n != 10 {
		t.Fatal(fmt.Sprint("requests recorded: ", n))
	}
}
