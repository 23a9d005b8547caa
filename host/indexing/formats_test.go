package indexing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestOfficeFormatsIngestion: OpenDocument, RTF, Word, Excel and
// PowerPoint 97-2003 files go through the sandboxed office plugin into chunks a
// question finds with their references; an RTF uploaded without an
// extension (sniffed by the host as text) is still read as RTF, not as its
// markup.
func TestOfficeFormatsIngestion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	ingester := ingest.New(e.db, e.blobs, extract.New(wasmtest.Host(t, "office")), nil)
	svc := files.NewService(e.db, e.blobs, 0)
	for _, c := range []struct {
		file  []string
		name  string // the upload's name; the file's own when empty
		query string
		match func(kindex.Hit) bool
	}{
		{file: []string{"odt", "odfpy-twolevellist.odt"}, query: "Subitem",
			match: func(h kindex.Hit) bool { return h.Ref.Part == "document" && h.Ref.Paragraph == 4 }},
		{file: []string{"ods", "odfpy-countrystatistics.ods"}, query: "Austria",
			match: func(h kindex.Hit) bool { return h.Ref.SheetName == "Population" && strings.Contains(h.Text, "8.3") }},
		{file: []string{"odp", "odfpy-ol.odp"}, query: "Tsvelf",
			match: func(h kindex.Hit) bool { return h.Ref.SlideIndex == 1 }},
		{file: []string{"rtf", "unrtf-accents.rtf"}, query: "caffè nessuno fuma",
			match: func(h kindex.Hit) bool { return h.Ref.Part == "document" && !strings.Contains(h.Text, `\rtf`) }},
		{file: []string{"rtf", "unrtf-lists.rtf"}, name: "lists-without-extension", query: "quick brown fox",
			match: func(h kindex.Hit) bool { return h.Ref.Paragraph == 1 && !strings.Contains(h.Text, "fonttbl") }},
		{file: []string{"doc", "antiword-testdoc.doc"}, query: "Antiword icon",
			match: func(h kindex.Hit) bool {
				return h.Ref.Part == "document" && strings.Contains(h.Text, "This JPEG image is the Antiword icon.")
			}},
		{file: []string{"xls", "readxl-clippy.xls"}, query: "paperclip",
			match: func(h kindex.Hit) bool { return h.Ref.SheetName != "" && strings.Contains(h.Text, "2007-01-01") }},
		{file: []string{"doc", "lo-stations-table.doc"}, query: "Jungfraujoch",
			match: func(h kindex.Hit) bool { return strings.Contains(h.Text, "| Jungfraujoch | 3571 m |  |") }},
		// A table nested in a cell: a search for a station finds its
		// row of the inner table, beside its altitude, in the outer row.
		{file: []string{"nested", "lo-nested-table.doc"}, query: "Hospental",
			match: func(h kindex.Hit) bool {
				return strings.Contains(h.Text, "| Gotthard | Uri | Two stations:<br>Station · Altitude<br>Hospental · 1452 m")
			}},
		{file: []string{"nested", "lo-nested-table.docx"}, query: "Oberaar snow",
			match: func(h kindex.Hit) bool {
				return strings.Contains(h.Text, "Oberaar · (Wind · since 1994; Snow · since 2003) |")
			}},
		{file: []string{"ppt", "lo-glacier-deck.ppt"}, query: "drone flights moraine",
			match: func(h kindex.Hit) bool { return h.Ref.Location == "slide:1/notes" && h.Ref.Part == "notes1" }},
		{file: []string{"ppt", "mscfb-test.ppt"}, name: "slides-without-extension", query: "claritatem insitam",
			match: func(h kindex.Hit) bool { return h.Ref.SlideIndex == 1 && h.Ref.Label == "Test" }},
	} {
		name := c.name
		if name == "" {
			name = c.file[len(c.file)-1]
		}
		t.Run(name, func(t *testing.T) {
			f := e.upload(t, svc, name, testcorpus.Read(t, append([]string{"office"}, c.file...)...))
			if extracted, err := ingester.Ingest(ctx, f.ID, false); err != nil || !extracted {
				t.Fatalf("ingest: %v %v", extracted, err)
			}
			st, err := e.db.ContentState(ctx, e.p, f.ID)
			if err != nil || st.Status != kindex.StatusIndexed || st.Index.TotalObjects == 0 {
				t.Fatalf("state: %+v %v", st, err)
			}
			hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: c.query, FileIDs: []string{f.ID}, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, h := range hits {
				found = found || c.match(h)
			}
			if !found {
				t.Fatalf("no hit with the right reference for %q (index MIME %s): %+v", c.query, st.Index.MIMEType, hits)
			}
		})
	}
}

// TestArchiveFormatsIngestion: .tar.bz2, .tar.xz, .7z and RAR archives go
// through the sandboxed container plugin like ZIP and TAR: every file is
// indexed and found through the archive by its container path; links and
// encrypted entries are listed as failed with their reason; a tar's "./"
// root is not an entry at all.
func TestArchiveFormatsIngestion(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	for _, a := range []struct {
		file    string
		files   int
		failed  map[string]string // path below the archive → reason it contains
		query   string
		hitPath string
		// encrypted: nothing in it is readable without the password, so
		// the archive fails as encrypted (issue 26), its entries listed.
		encrypted bool
	}{
		{file: "constructed-docs.tar.bz2", files: 2, query: "moderately complicated converter", hitPath: "README.txt"},
		{file: "constructed-docs.tar.xz", files: 2, query: "moderately complicated converter", hitPath: "README.txt"},
		{file: "constructed-docs.7z", files: 2, query: "moderately complicated converter", hitPath: "README.txt"},
		{file: "libarchive-rar4.rar", files: 2, failed: map[string]string{"testlink": "links are not followed"},
			query: "test text document", hitPath: "test.txt"},
		{file: "libarchive-rar4-encrypted-data.rar", failed: map[string]string{"foo.txt": "password", "bar.txt": "password"}, encrypted: true},
	} {
		t.Run(a.file, func(t *testing.T) {
			f, st, entries := c.ingest(t, a.file, testcorpus.Read(t, "archives", "formats", a.file), time.Minute, 256<<20)
			switch {
			case a.encrypted && (st.Status != kindex.StatusFailed || !strings.HasPrefix(st.Error, "encrypted:")):
				t.Fatalf("archive: %+v, want failed as encrypted", st)
			case !a.encrypted && st.Status != kindex.StatusIndexed:
				t.Fatalf("archive: %+v", st)
			}
			files := 0
			for _, e := range entries {
				p := strings.TrimPrefix(e.Path, a.file+"/")
				if strings.HasSuffix(e.Path, "/.") || p == "" {
					t.Errorf("the root is an entry: %+v", e)
				}
				if why, ok := a.failed[p]; ok {
					if e.Status == string(kindex.StatusIndexed) || !strings.Contains(e.Error, why) {
						t.Errorf("entry %s: %s %q, want a failure saying %q", p, e.Status, e.Error, why)
					}
					continue
				}
				if e.Container {
					continue
				}
				if e.Status != string(kindex.StatusIndexed) || e.Error != "" {
					t.Errorf("entry %+v", e)
				}
				files++
			}
			if files != a.files {
				t.Errorf("%d files indexed, want %d: %+v", files, a.files, entries)
			}
			if a.query == "" {
				return
			}
			hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: a.query, FileIDs: []string{f.ID}, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, h := range hits {
				found = found || strings.HasSuffix(h.Ref.ContainerPath, "/"+a.hitPath)
			}
			if !found {
				t.Fatalf("no hit in %s for %q: %+v", a.hitPath, a.query, hits)
			}
		})
	}
}
