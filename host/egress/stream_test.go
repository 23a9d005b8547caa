package egress_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/egress"
)

// TestStreamBody: a Stream body goes out with its Content-Length (never
// chunked: upload sessions want the length matching the Content-Range),
// and is opened again for a 307 that keeps it. A 308 without Location is
// Drive's "Resume Incomplete" (developers.google.com/drive/api/guides/
// manage-uploads#resumable): a final answer, returned with its Range.
func TestStreamBody(t *testing.T) {
	var got []string
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.Path+" "+r.Header.Get("Content-Length")+" "+strings.Join(r.TransferEncoding, ",")+" "+string(b))
		switch r.URL.Path {
		case "/again":
			http.Redirect(w, r, "/put", http.StatusTemporaryRedirect)
		case "/resume":
			w.Header().Set("Range", "bytes=0-9")
			w.WriteHeader(http.StatusPermanentRedirect)
		}
	})
	dns := fakeDNS{"api.example.test": "127.0.0.1"}
	c := egress.NewClient(egress.NewPolicy().WithResolver(dns).WithAllowedHosts("api.example.test").WithPrivateHostsAllowed("api.example.test:" + port))
	opens := 0
	st := &egress.Stream{Length: 10, Open: func() (io.Reader, error) { opens++; return bytes.NewReader([]byte("0123456789xx")), nil }}
	base := "http://api.example.test:" + port
	resp, err := c.Do(context.Background(), egress.Request{Method: "PUT", URL: base + "/again", Stream: st})
	if err != nil || resp.Status != 200 || opens != 2 {
		t.Fatalf("307: %+v %v, body opened %d times", resp, err, opens)
	}
	if want := "/again 10  0123456789|/put 10  0123456789"; strings.Join(got, "|") != want {
		t.Fatalf("server saw %q, want %q", strings.Join(got, "|"), want)
	}
	resp, err = c.Do(context.Background(), egress.Request{Method: "PUT", URL: base + "/resume", Stream: st,
		Redirect: func(egress.Hop) error { return nil }})
	if err != nil || resp.Status != http.StatusPermanentRedirect || resp.Headers.Get("Range") != "bytes=0-9" {
		t.Fatalf("308 without Location: %+v %v", resp, err)
	}
	got = nil
	if resp, err := c.Do(context.Background(), egress.Request{Method: "PUT", URL: base + "/empty", Stream: &egress.Stream{Open: func() (io.Reader, error) { return strings.NewReader(""), nil }}}); err != nil || resp.Status != 200 || got[0] != "/empty 0  " {
		t.Fatalf("empty stream: %+v %v %q", resp, err, got)
	}
}
