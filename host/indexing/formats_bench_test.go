package indexing_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// formatSample is one real file of a format: a query, and text the hit
// must hold (in the archive's file at path, for archives).
type formatSample struct {
	format string
	name   string
	data   func(tb testing.TB) []byte
	query  string
	want   string
	path   string // for archives: the container path's last segments
}

func corpusFile(parts ...string) func(tb testing.TB) []byte {
	return func(tb testing.TB) []byte { return testcorpus.Read(tb, parts...) }
}

// officeSamples are the office formats the office plugin reads, one corpus
// file each.
var officeSamples = []formatSample{
	{format: "docx", name: "t.docx", data: corpusFile("office", "docx", "textract-paragraphs_and_tables.docx"), query: "paragraph before the table", want: "before the table"},
	{format: "xlsx", name: "c.xlsx", data: corpusFile("office", "dates", "readxl-clippy.xlsx"), query: "paperclip", want: "2007-01-01"},
	{format: "pptx", name: "r.pptx", data: corpusFile("office", "pptx", "textract-raw_text.pptx"), query: "lovely", want: "It is lovely"},
	{format: "odt", name: "l.odt", data: corpusFile("office", "odt", "odfpy-twolevellist.odt"), query: "Subitem", want: "Subitem B.1"},
	{format: "ods", name: "s.ods", data: corpusFile("office", "ods", "odfpy-countrystatistics.ods"), query: "Austria", want: "| Austria | 8.3 |"},
	{format: "odp", name: "p.odp", data: corpusFile("office", "odp", "odfpy-ol.odp"), query: "Tsvelf", want: "Tsvelf"},
	{format: "rtf", name: "a.rtf", data: corpusFile("office", "rtf", "unrtf-accents.rtf"), query: "caffè", want: "andrò a un caffè"},
	{format: "doc", name: "t.doc", data: corpusFile("office", "doc", "antiword-testdoc.doc"), query: "Antiword icon", want: "This JPEG image is the Antiword icon."},
	{format: "xls", name: "c.xls", data: corpusFile("office", "xls", "readxl-clippy.xls"), query: "paperclip", want: "2007-01-01"},
	{format: "ppt", name: "g.ppt", data: corpusFile("office", "ppt", "lo-glacier-deck.ppt"), query: "Aletsch measurements", want: "Aletsch measurements resumed in August"},
	{format: "epub", name: "c.epub", data: corpusFile("office", "epub", "candide-3-chapters.epub"), query: "Vestphalie baron", want: "Il y avait en Vestphalie"},
}

// mailSamples are the mail formats: a message found by its attachment's
// text at the attachment's path, by its body, a mailbox by a message.
var mailSamples = []formatSample{
	{format: "eml", name: "r.eml", data: corpusFile("mail", "report-iso-8859-2-attachments.eml"), query: "Отчёт о продажах", path: "otchet.txt"},
	{format: "msg", name: "t.msg", data: corpusFile("mail", "mscfb-test.msg"), query: "State Records Authority", want: "State Records Authority of New South Wales"},
	{format: "mbox", name: "l.mbox", data: corpusFile("mail", "list-archive.mbox"), query: "planning meeting Thursday", path: "00001 Planning meeting.eml"},
}

// readme is the start of unrtf's README (the corpus's constructed-docs
// README.txt), for the ZIP, TAR and TGZ built here.
func readme(tb testing.TB) []byte {
	tb.Helper()
	return []byte("Greetings,\n\nUnRTF is a moderately complicated converter from RTF to other formats.\n")
}

func zipOfReadme(tb testing.TB) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("docs/README.txt")
	w.Write(readme(tb))
	zw.Close()
	return buf.Bytes()
}

func tarOfReadme(tb testing.TB) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	b := readme(tb)
	tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "./docs/README.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))})
	tw.Write(b)
	tw.Close()
	return buf.Bytes()
}

func tgzOfReadme(tb testing.TB) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(tarOfReadme(tb))
	zw.Close()
	return buf.Bytes()
}

// archiveSamples are the archive formats the container plugin resolves.
var archiveSamples = []formatSample{
	{format: "zip", name: "a.zip", data: zipOfReadme, query: "moderately complicated converter", path: "docs/README.txt"},
	{format: "tar", name: "a.tar", data: tarOfReadme, query: "moderately complicated converter", path: "docs/README.txt"},
	{format: "gzip", name: "a.tgz", data: tgzOfReadme, query: "moderately complicated converter", path: "docs/README.txt"},
	{format: "bzip2", name: "d.tar.bz2", data: corpusFile("archives", "formats", "constructed-docs.tar.bz2"), query: "moderately complicated converter", path: "README.txt"},
	{format: "xz", name: "d.tar.xz", data: corpusFile("archives", "formats", "constructed-docs.tar.xz"), query: "moderately complicated converter", path: "README.txt"},
	{format: "7z", name: "d.7z", data: corpusFile("archives", "formats", "constructed-docs.7z"), query: "moderately complicated converter", path: "README.txt"},
	{format: "rar4", name: "r4.rar", data: corpusFile("archives", "formats", "libarchive-rar4.rar"), query: "test text document", path: "test.txt"},
	{format: "rar5", name: "r5.rar", data: corpusFile("archives", "formats", "libarchive-rar5-symlink.rar"), query: "1234", path: "file.txt"},
	{format: "zstd", name: "d.tar.zst", data: corpusFile("archives", "formats", "constructed-docs.tar.zst"), query: "moderately complicated converter", path: "README.txt"},
}

// BenchmarkFormatsSupported reports office.formats.supported,
// archive.formats.supported and mail.formats.supported: how many formats of
// each family go through the
// sandboxed plugins into the index with their text found by a search (a
// real file per format; issue 16 items 7 and 8).
func BenchmarkFormatsSupported(b *testing.B) {
	ctx := context.Background()
	host := wasmtest.Host(b, "containers", "office")
	e := newEnv(b)
	ing := ingest.New(e.db, e.blobs, extract.New(host), nil).WithContainers(extract.NewContainers(host), e.db, e.blobs)
	svc := files.NewService(e.db, e.blobs, 0)
	found := func(s formatSample) bool {
		f := e.upload(b, svc, s.name, s.data(b))
		if _, err := ing.Ingest(ctx, f.ID, false); err != nil {
			b.Logf("%s: %v", s.format, err)
			return false
		}
		hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: s.query, FileIDs: []string{f.ID}, Limit: 5})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hits {
			if s.path != "" && strings.HasSuffix(h.Ref.ContainerPath, "/"+s.path) || s.path == "" && strings.Contains(h.Text, s.want) {
				return true
			}
		}
		b.Logf("%s: no hit for %q: %+v", s.format, s.query, hits)
		return false
	}
	count := func(samples []formatSample) (n float64) {
		for _, s := range samples {
			if found(s) {
				n++
			}
		}
		return n
	}
	office, archives, mails := count(officeSamples), count(archiveSamples), count(mailSamples)
	for range b.N {
		// Counted once above: each format is one file.
	}
	figure.Report("office.formats.supported", office, "formats")
	figure.Report("archive.formats.supported", archives, "formats")
	figure.Report("mail.formats.supported", mails, "formats")
}
