package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// uploadTyped posts a file with its MIME type to the world's workspace and
// returns its id.
func uploadTyped(t testing.TB, w *uiWorld, name, mimeType string, data []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	hdr.Set("Content-Type", mimeType)
	part, _ := mw.CreatePart(hdr)
	part.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", w.base+"/api/v1/workspaces/"+w.ws+"/files", &body)
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var f struct{ ID string }
	if resp.StatusCode != 201 || json.Unmarshal(raw, &f) != nil || f.ID == "" {
		t.Fatalf("upload %s: %d %s", name, resp.StatusCode, raw)
	}
	return f.ID
}

// waitStatus waits until a file's indexing ends (indexed or failed) and
// returns how.
func waitStatus(t testing.TB, w *uiWorld, id string) string {
	t.Helper()
	for i := 0; i < 3000; i++ {
		req, _ := http.NewRequest("GET", w.base+"/api/v1/files/"+id+"/index", nil)
		req.Header.Set("Authorization", "Bearer "+w.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Status string }
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if st.Status == "indexed" || st.Status == "failed" {
			return st.Status
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("file %s: still not indexed", id)
	return ""
}

// testPNG is a picture (a gradient), drawn here: an image file is shown as
// itself, whatever it shows.
func testPNG(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for x := 0; x < 64; x++ {
		for y := 0; y < 48; y++ {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fiveHundredPagePDF merges the corpus's longest real manuals (pdfcpu)
// and keeps their first 500 pages: the Gri manual, the Debian
// maintainers' guide and the Gutenprint manual.
func fiveHundredPagePDF(t testing.TB) []byte {
	t.Helper()
	api.DisableConfigDir()
	type doc struct {
		data  []byte
		pages int
	}
	var docs []doc
	for _, p := range testcorpus.Glob(t, "pdf", "*.pdf") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := api.PageCount(bytes.NewReader(data), model.NewDefaultConfiguration()); err == nil {
			docs = append(docs, doc{data, n})
		}
	}
	slices.SortFunc(docs, func(x, y doc) int { return y.pages - x.pages })
	var in []io.ReadSeeker
	for pages, i := 0, 0; pages < 500 && len(docs) > 0; i++ {
		d := docs[i%len(docs)]
		in = append(in, bytes.NewReader(d.data))
		pages += d.pages
	}
	var merged, trimmed bytes.Buffer
	if err := api.MergeRaw(in, &merged, false, model.NewDefaultConfiguration()); err != nil {
		t.Fatalf("merge: %v", err)
	}
	if err := api.Trim(bytes.NewReader(merged.Bytes()), &trimmed, []string{"1-500"}, model.NewDefaultConfiguration()); err != nil {
		t.Fatalf("trim: %v", err)
	}
	return trimmed.Bytes()
}

// TestBrowserPreview drives the preview in headless Chromium against a real
// serve (host/webui/e2e/preview.test.mjs): a citation in a multi-page PDF
// (the Debian maintainers' guide, 143 pages) opens its page drawn by pdf.js
// with the cited passage marked, having fetched only that page's copy;
// page navigation, zoom and Escape; an encrypted PDF read by ranges; an office document's structure (a
// DOCX's table, an ODT's heading, a PPTX's slide with its notes); an
// image; an archive's tree; the preview as a full-screen sheet at 390 px;
// axe-core on the views.
func TestBrowserPreview(t *testing.T) {
	e2e := browserPrereqs(t)
	w := startUIWorld(t)
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts", "preview"))
	os.RemoveAll(artefacts)
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		env, name, mime string
		data            []byte
	}{
		{"UI_PV_PDF", "deb-debmake-doc.en.pdf", "application/pdf", testcorpus.Read(t, "pdf", "deb-debmake-doc.en.pdf")},
		{"UI_PV_DOCX", "paragraphs_and_tables.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			testcorpus.Read(t, "office", "docx", "textract-paragraphs_and_tables.docx")},
		{"UI_PV_ODT", "headerfooter.odt", "application/vnd.oasis.opendocument.text", testcorpus.Read(t, "office", "odt", "odfpy-headerfooter.odt")},
		{"UI_PV_PPTX", "prs-notes.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation",
			testcorpus.Read(t, "office", "pptx", "python-pptx-prs-notes.pptx")},
		{"UI_PV_PNG", "gradient.png", "image/png", testPNG(t)},
		{"UI_PV_ZIP", "project-docs.zip", "application/zip", testcorpus.Read(t, "archives", "benign", "project-docs.zip")},
		{"UI_PV_LOCKED", "owner-password.pdf", "application/pdf", testcorpus.Read(t, "pdf", "pypdf-r6-owner-password.pdf")},
	}
	var env []string
	for _, f := range files {
		id := uploadTyped(t, w, f.name, f.mime, f.data)
		env = append(env, f.env+"="+id, f.env+"_SIZE="+fmt.Sprint(len(f.data)))
	}
	for _, e := range env {
		if id, ok := strings.CutPrefix(e, "UI_PV_PDF="); ok {
			if st := waitStatus(t, w, id); st != "indexed" {
				t.Fatalf("the PDF's indexing: %s", st)
			}
		}
	}
	for _, e := range env {
		k, id, _ := strings.Cut(e, "=")
		if !strings.HasSuffix(k, "_SIZE") && k != "UI_PV_PDF" && k != "UI_PV_PNG" && k != "UI_PV_LOCKED" {
			if st := waitStatus(t, w, id); st != "indexed" {
				t.Fatalf("%s's indexing: %s", k, st)
			}
		}
	}
	t.Setenv("UI_PV_FILES", strings.Join(env, " "))
	runNode(t, e2e, "preview.test.mjs", w, artefacts)
	noCrash(t, w.server)
}
