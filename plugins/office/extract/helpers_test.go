package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/pdk/content"
)

// entry is one file of a zip built by a test.
type entry struct {
	name, body string
	store      bool // stored uncompressed, as Office keeps media
}

// zipOf builds a zip of the entries, in order.
func zipOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		method := zip.Deflate
		if e.store {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// run extracts bytes.
func run(t testing.TB, b []byte, name, mime string, lim Limits) (content.Index, []content.Object, error) {
	t.Helper()
	return Extract(context.Background(), bytes.NewReader(b), int64(len(b)), name, mime, lim)
}

// mustRun extracts bytes and fails the test on an error.
func mustRun(t testing.TB, b []byte, name, mime string, lim Limits) (content.Index, []content.Object) {
	t.Helper()
	idx, objs, err := run(t, b, name, mime, lim)
	if err != nil {
		t.Fatalf("Extract(%s): %v", name, err)
	}
	return idx, objs
}

// pngOf encodes a w×h PNG.
func pngOf(t testing.TB, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// texts returns the text objects' data.
func texts(objs []content.Object) []string {
	var out []string
	for _, o := range objs {
		if o.ContentType == content.Text {
			out = append(out, o.Data)
		}
	}
	return out
}

const (
	nsW   = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
	nsR   = `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	nsA   = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"`
	nsP   = `xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	nsMC  = `xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`
	relNS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
)

// rels writes a relationships part: id, type (last segment), target.
func rels(r ...[3]string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for _, x := range r {
		mode := ""
		if strings.HasPrefix(x[2], "http") {
			mode = ` TargetMode="External"`
		}
		b.WriteString(`<Relationship Id="` + x[0] + `" Type="` + relNS + x[1] + `" Target="` + x[2] + `"` + mode + `/>`)
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}
