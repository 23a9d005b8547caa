package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/plugins/containers/archive"
)

// TestManifestRoutesWhatTheLibraryResolves: the host routes uploads to this
// plugin by plugin.json's MIME types and extensions, so every MIME type the
// library gives a container it recognises must be listed, as must the
// extensions of the formats.
func TestManifestRoutesWhatTheLibraryResolves(t *testing.T) {
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Capabilities []string `json:"capabilities"`
		Extractor    struct {
			MIMETypes  []string `json:"mimeTypes"`
			Extensions []string `json:"extensions"`
		} `json:"extractor"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.Capabilities, "input") || !slices.Contains(m.Capabilities, "output") {
		t.Fatalf("capabilities %v: the host hands containers only to extractors with input and output", m.Capabilities)
	}
	var zbuf, tbuf, gbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("a.txt")
	w.Write([]byte("a"))
	zw.Close()
	tw := tar.NewWriter(&tbuf)
	tw.WriteHeader(&tar.Header{Name: "a.txt", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("a"))
	tw.Close()
	gw := gzip.NewWriter(&gbuf)
	gw.Write(tbuf.Bytes())
	gw.Close()
	for _, c := range []struct {
		name string
		data []byte
	}{{"a.zip", zbuf.Bytes()}, {"a.tar", tbuf.Bytes()}, {"a.tgz", gbuf.Bytes()}, {"a.gz", gbuf.Bytes()},
		{"a.bz2", testcorpus.Read(t, "archives", "formats", "constructed-docs.tar.bz2")},
		{"a.xz", testcorpus.Read(t, "archives", "formats", "constructed-docs.tar.xz")},
		{"a.zst", testcorpus.Read(t, "archives", "formats", "constructed-docs.tar.zst")},
		{"a.tzst", testcorpus.Read(t, "archives", "formats", "constructed-docs.tar.zst")},
		{"a.7z", testcorpus.Read(t, "archives", "formats", "constructed-docs.7z")},
		{"a.rar", testcorpus.Read(t, "archives", "formats", "libarchive-rar4.rar")},
		{"b.rar", testcorpus.Read(t, "archives", "formats", "libarchive-rar5-solid.rar")}} {
		res, err := archive.Resolve(context.Background(), bytes.NewReader(c.data), int64(len(c.data)), c.name, archive.Limits{})
		if err != nil || len(res.Entries) < 2 || res.Entries[0].Container == archive.None {
			t.Fatalf("%s: %+v %v", c.name, res, err)
		}
		if mt := res.Entries[0].MIMEType; !slices.Contains(m.Extractor.MIMETypes, mt) {
			t.Errorf("%s: the library calls it %s, which plugin.json does not list", c.name, mt)
		}
		if ext := path.Ext(c.name); !slices.Contains(m.Extractor.Extensions, ext) {
			t.Errorf("extension %s is not in plugin.json", ext)
		}
	}
}
