package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

// TestPagePDFRoute reads a page of a real manual through the page route
// of a running server: a one-page PDF (the PDF plugin's copy, made in its
// sandbox) with the page's text, a fraction of the file's bytes, the
// document's page count beside it, revalidated by its ETag, refused to
// another tenant and past the last page.
func TestPagePDFRoute(t *testing.T) {
	w := startUIWorld(t)
	data, err := os.ReadFile(testcorpus.Glob(t, "pdf", "deb-gri-manual.pdf")[0])
	if err != nil {
		t.Fatal(err)
	}
	id := uploadTyped(t, w, "gri.pdf", "application/pdf", data)
	if st := waitStatus(t, w, id); st != "indexed" {
		t.Fatalf("upload %s", st)
	}
	orig, err := pdftext.Open(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	get := func(token, page, etag string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", w.base+"/api/v1/files/"+id+"/pages/"+page+"/pdf", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, pg := range []int{1, 150, orig.PageCount()} {
		t0 := time.Now()
		resp, body := get(w.token, strconv.Itoa(pg), "")
		t.Logf("page %d: %d bytes in %v", pg, len(body), time.Since(t0))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("page %d: %d %s %.200s", pg, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if n := resp.Header.Get("Agenthost-Page-Count"); n != strconv.Itoa(orig.PageCount()) {
			t.Errorf("page %d: page count %q, want %d", pg, n, orig.PageCount())
		}
		if len(body) > len(data)/2 {
			t.Errorf("page %d: %d bytes of the file's %d", pg, len(body), len(data))
		}
		c, err := pdftext.Open(bytes.NewReader(body))
		if err != nil || c.PageCount() != 1 {
			t.Fatalf("page %d: copy: %v", pg, err)
		}
		got, _ := c.PageText(1)
		want, _ := orig.PageText(pg)
		if got != want || want == "" {
			t.Errorf("page %d: text %.200q, want %.200q", pg, got, want)
		}
		if again, _ := get(w.token, strconv.Itoa(pg), resp.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("page %d revalidated: %d", pg, again.StatusCode)
		}
	}
	if resp, body := get(w.otherToken, "1", ""); resp.StatusCode != 404 {
		t.Errorf("another tenant: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(w.token, strconv.Itoa(orig.PageCount()+1), ""); resp.StatusCode != 400 || !bytes.Contains(body, []byte("pages")) {
		t.Errorf("past the last page: %d %s", resp.StatusCode, body)
	}
}
