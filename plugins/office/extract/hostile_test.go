package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// deflated compresses n bytes of a repeated pattern: a stream that expands
// about a thousandfold.
func deflated(t testing.TB, pattern string, n int) (raw []byte, crc uint32) {
	t.Helper()
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	h := crc32.NewIEEE()
	chunk := []byte(strings.Repeat(pattern, 64<<10/len(pattern)))
	for written := 0; written < n; written += len(chunk) {
		fw.Write(chunk)
		h.Write(chunk)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), h.Sum32()
}

// withRawPart builds a DOCX whose word/document.xml is a raw deflate stream
// with the sizes the header is told to claim.
func withRawPart(t testing.TB, name string, raw []byte, crc uint32, claimed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("_rels/.rels")
	io.WriteString(w, rels([3]string{"rId1", "officeDocument", name}))
	rw, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(raw)), UncompressedSize64: claimed})
	if err != nil {
		t.Fatal(err)
	}
	rw.Write(raw)
	zw.Close()
	return buf.Bytes()
}

// heapGrowth runs f and returns how much the heap grew (allocated bytes).
func heapGrowth(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func TestHostile(t *testing.T) {
	const bomb = 64 << 20
	raw, crc := deflated(t, "<w:p><w:r><w:t>bomb</w:t></w:r></w:p>", bomb)
	lim := Limits{MaxPartBytes: 4 << 20}

	t.Run("zip bomb in a docx, honest header", func(t *testing.T) {
		b := withRawPart(t, "word/document.xml", raw, crc, bomb)
		var err error
		grew := heapGrowth(func() { _, _, err = run(t, b, "bomb.docx", "", lim) })
		if !errors.Is(err, ErrLimit) {
			t.Fatalf("err %v, want ErrLimit", err)
		}
		if grew > 8<<20 {
			t.Errorf("allocated %d bytes refusing a bomb", grew)
		}
	})
	t.Run("zip bomb in a docx, lying header", func(t *testing.T) {
		// The header claims the part is small; reading must stop there.
		b := withRawPart(t, "word/document.xml", raw, crc, 1<<20)
		var err error
		grew := heapGrowth(func() { _, _, err = run(t, b, "liar.docx", "", lim) })
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("err %v, want ErrMalformed", err)
		}
		// encoding/xml allocates some 40 bytes per byte it parses: reading
		// the claimed 1 MiB costs tens of MB, the whole bomb would cost GBs.
		if grew > 128<<20 {
			t.Errorf("allocated %d bytes reading a lying part", grew)
		}
	})
	t.Run("zip bomb in an xlsx is refused before excelize reads it", func(t *testing.T) {
		b := withRawPart(t, "xl/workbook.xml", raw, crc, bomb)
		if _, _, err := run(t, b, "bomb.xlsx", "", lim); !errors.Is(err, ErrLimit) {
			t.Fatalf("err %v, want ErrLimit", err)
		}
	})
	t.Run("package budget", func(t *testing.T) {
		// Many parts, each within the part limit, together over budget.
		var body strings.Builder
		var extra []entry
		for i := range 8 {
			extra = append(extra, entry{name: "word/header" + string(rune('1'+i)) + ".xml", body: `<w:hdr ` + nsW + `>` + strings.Repeat(wp("", "header text"), 20000) + `</w:hdr>`})
		}
		body.WriteString(wp("", "main"))
		var hdrRels [][3]string
		for i := range extra {
			hdrRels = append(hdrRels, [3]string{"rIdH" + string(rune('1'+i)), "header", strings.TrimPrefix(extra[i].name, "word/")})
		}
		extra = append(extra, entry{name: "word/_rels/document.xml.rels", body: rels(hdrRels...)})
		idx, objs := mustRun(t, docxOf(t, body.String(), extra...), "many.docx", "", Limits{MaxUnzippedBytes: 3 << 20})
		if len(objs) == 0 || idx.Structure["skipped"] == nil {
			t.Errorf("%d objects, structure %v", len(objs), idx.Structure)
		}
	})
	t.Run("real 1 GiB bomb from the corpus as a docx part", func(t *testing.T) {
		name := testcorpus.Path(t, "archives", "hostile", "bomb-single-entry-1GiB.zip")
		zr, err := zip.OpenReader(name)
		if err != nil {
			t.Fatalf("corpus bomb: %v", err)
		}
		defer zr.Close()
		f := zr.File[0]
		r, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		braw, _ := io.ReadAll(r)
		b := withRawPart(t, "word/document.xml", braw, f.CRC32, f.UncompressedSize64)
		// Refused by the sizes the archive declares: most of the part's
		// compressed bytes are never read, let alone inflated.
		r2 := &countingReaderAt{r: bytes.NewReader(b)}
		if _, _, err := Extract(context.Background(), r2, int64(len(b)), "bomb.docx", "", Limits{}); !errors.Is(err, ErrLimit) {
			t.Fatalf("err %v, want ErrLimit", err)
		}
		if n := r2.n.Load(); n > int64(len(braw))/4 {
			t.Errorf("refusing read %d bytes of a file whose bomb part is %d bytes compressed", n, len(braw))
		}
	})

	docx := docxOf(t, strings.Repeat(wp("", "some text"), 200))
	for _, c := range []struct {
		name, file string
		data       []byte
		want       error
	}{
		{"truncated docx", "cut.docx", docx[:len(docx)/2], ErrMalformed},
		{"truncated docx, central directory cut", "cut.docx", docx[:len(docx)-10], ErrMalformed},
		{"random bytes named .xlsx", "random.xlsx", randomBytes(5000), ErrMalformed},
		{"random bytes named .docx", "random.docx", randomBytes(5000), ErrMalformed},
		{"random bytes named .pptx", "random.pptx", randomBytes(5000), ErrMalformed},
		{"empty .docx", "empty.docx", nil, ErrMalformed},
		{"OLE-wrapped docx", "secret.docx", oleBytes(), ErrEncrypted},
		{"OLE-wrapped xlsx", "secret.xlsx", oleBytes(), ErrEncrypted},
		{"OLE-wrapped pptx", "secret.pptx", oleBytes(), ErrEncrypted},
		{"zip without the main part", "x.docx", zipOf(t, entry{name: "word/other.xml", body: "<x/>"}), ErrMalformed},
		{"xlsx without a workbook", "x.xlsx", zipOf(t, entry{name: "a.txt", body: "a"}), ErrMalformed},
		{"encrypted zip entry", "enc.docx", encryptedEntry(t), ErrEncrypted},
		{"document.xml not XML", "x.docx", docxRaw(t, "this is \x00 not <xml"), ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, c.data, c.file, "", Limits{})
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.file) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}

	t.Run("deep nesting", func(t *testing.T) {
		const depth = 100_000
		body := strings.Repeat("<w:sdt><w:sdtContent>", depth) + wp("", "deep") + strings.Repeat("</w:sdtContent></w:sdt>", depth) + wp("", "after")
		deep := docxOf(t, body)
		_, objs := mustRun(t, deep, "deep.docx", "", Limits{})
		if len(objs) != 1 || objs[0].Data != "after" {
			t.Errorf("objects %q", texts(objs))
		}
		// Linear, not worse: as fast as as many elements side by side
		// (the faster of three interleaved runs each, so that a busy
		// machine slows both alike).
		flat := docxOf(t, strings.Repeat("<w:sdt><w:sdtContent></w:sdtContent></w:sdt>", depth)+wp("", "after"))
		var deepBest, flatBest time.Duration
		for i := range 3 {
			for _, c := range []struct {
				doc  []byte
				best *time.Duration
			}{{deep, &deepBest}, {flat, &flatBest}} {
				start := time.Now()
				mustRun(t, c.doc, "x.docx", "", Limits{})
				if d := time.Since(start); i == 0 || d < *c.best {
					*c.best = d
				}
			}
		}
		if deepBest > 20*flatBest+50*time.Millisecond {
			t.Errorf("%d nested elements took %v, as many side by side %v", depth, deepBest, flatBest)
		}
		// x/net/html refuses more than 512 open elements: a clear error.
		html := strings.Repeat("<div>", depth) + "deep" + strings.Repeat("</div>", depth) + "<p>after</p>"
		if _, _, err := run(t, []byte(html), "deep.html", "", Limits{}); !errors.Is(err, ErrMalformed) {
			t.Errorf("deep HTML: %v", err)
		}
		grp := strings.Repeat(`<p:grpSp>`, depth) + strings.Repeat(`</p:grpSp>`, depth)
		pres := `<p:presentation ` + nsR + ` ` + nsP + `><p:sldIdLst><p:sldId r:id="rId2"/></p:sldIdLst></p:presentation>`
		_, objs = mustRun(t, zipOf(t,
			entry{name: "ppt/presentation.xml", body: pres},
			entry{name: "ppt/_rels/presentation.xml.rels", body: rels([3]string{"rId2", "slide", "slides/slide1.xml"})},
			entry{name: "ppt/slides/slide1.xml", body: slide("", grp+shape("", "after"))},
		), "deep.pptx", "", Limits{})
		if !strings.Contains(strings.Join(texts(objs), "\n"), "after") {
			t.Errorf("deep pptx: objects %q", texts(objs))
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := Extract(ctx, bytes.NewReader(docx), int64(len(docx)), "a.docx", "", Limits{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v", err)
		}
	})
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// oleBytes is the start of an OLE compound file, as Office writes
// password-protected documents.
func oleBytes() []byte {
	return append([]byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1}, make([]byte, 504)...)
}

func encryptedEntry(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("_rels/.rels")
	io.WriteString(w, rels([3]string{"rId1", "officeDocument", "word/document.xml"}))
	ew, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store, Flags: 1, CompressedSize64: 10, UncompressedSize64: 10})
	if err != nil {
		t.Fatal(err)
	}
	ew.Write([]byte("0123456789"))
	zw.Close()
	return buf.Bytes()
}

func docxRaw(t *testing.T, doc string) []byte {
	return zipOf(t, entry{name: "word/document.xml", body: doc})
}

// TestMutations: corrupted corpus files (and constructed ones) give an
// error or a result, never a panic; the recover at the API boundary is a
// safety net, so reaching it counts as a failure here.
func TestMutations(t *testing.T) {
	var files [][2]string // name, data
	for _, kind := range []string{"docx", "xlsx", "pptx"} {
		names := testcorpus.Glob(t, "office", kind, "*."+kind)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, [2]string{filepath.Base(n), string(b)})
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	runs := 0
	for _, f := range files {
		for range 40 {
			b := []byte(f[1])
			switch r.IntN(3) {
			case 0: // flip bytes
				for range 1 + r.IntN(20) {
					b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
				}
			case 1: // cut
				b = b[:r.IntN(len(b))]
			case 2: // overwrite a run with junk
				at := r.IntN(len(b))
				for i := at; i < min(len(b), at+r.IntN(200)); i++ {
					b[i] = byte(r.Uint32())
				}
			}
			_, _, err := run(t, b, f[0], "", Limits{})
			runs++
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Errorf("%s mutant: %v", f[0], firstLine(err.Error()))
			}
		}
	}
	if runs == 0 {
		t.Fatal("no corpus files")
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
