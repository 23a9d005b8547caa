package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
)

// TestDOCXAltChunk: a document whose body imports parts in other formats
// (w:altChunk, ECMA-376 Part 1 17.17.2.1; lo-altchunk.docx, LibreOffice
// saves assembled by make-altchunk.py beside it) yields each part's text at
// its place in the body, read by the part's own reader: LibreOffice's HTML
// (a heading, a paragraph, a table), its RTF and a whole DOCX package.
func TestDOCXAltChunk(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "altchunk", "lo-altchunk.docx"), "lo-altchunk.docx", "", Limits{})
	all := strings.Join(texts(objs), "\n")
	order := []string{
		"Report on the alpine huts, before the imported parts.",
		"Hut wardens (HTML part)",
		"The Hörnlihütte opens in July; its warden answers by radio.",
		"| Monte Rosa | 120 |",
		"Text between the first and the second imported part.",
		"Avalanche bulletin (RTF part): danger level 3 above 2200 m, Ébène ridge closed.",
		"Inner Word document (DOCX part): the Cabane de Moiry has 86 places.",
		"Its second paragraph names the glacier of Moiry.",
		"Closing remark after every imported part.",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(all[at:], want)
		if i < 0 {
			t.Fatalf("no %q (in order) in\n%s", want, all)
		}
		at += i + len(want)
	}
	chunkOf := map[string]string{"Hörnlihütte": "word/afchunk1.htm", "Avalanche": "word/afchunk2.rtf", "Cabane de Moiry": "word/afchunk3.docx"}
	last := 0
	for _, o := range objs {
		if o.Ref.Part != "document" || o.Ref.Paragraph <= last {
			t.Errorf("object %q: ref %+v, after paragraph %d", o.Data, o.Ref, last)
		}
		last = o.Ref.Paragraph
		for key, part := range chunkOf {
			if strings.Contains(o.Data, key) && o.Metadata["altChunk"] != part {
				t.Errorf("object %q: metadata %v, want altChunk %s", o.Data, o.Metadata, part)
			}
		}
	}
	if idx.Structure["skipped"] != nil {
		t.Errorf("skipped %v", idx.Structure["skipped"])
	}
}

// altChunkDOCX is a minimal WordprocessingML package (ECMA-376 Part 1,
// 11.3.10; the relationship type of 15.2.1) whose body is the paragraph
// text, then one w:altChunk per target, each to a part of its own holding
// the given bytes.
func altChunkDOCX(t testing.TB, text string, chunks ...[]byte) []byte {
	var body, rl strings.Builder
	var parts []entry
	for i, c := range chunks {
		id := fmt.Sprintf("rIdC%d", i)
		body.WriteString(`<w:altChunk r:id="` + id + `"/>`)
		rl.WriteString(`<Relationship Id="` + id + `" Type="` + relNS + `aFChunk" Target="chunk` + fmt.Sprint(i) + `.bin"/>`)
		parts = append(parts, entry{name: fmt.Sprintf("word/chunk%d.bin", i), body: string(c)})
	}
	entries := []entry{
		{name: "[Content_Types].xml", body: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "word/document.xml"})},
		{name: "word/document.xml", body: `<w:document ` + nsW + ` ` + nsR + `><w:body><w:p><w:r><w:t>` + text + `</w:t></w:r></w:p>` + body.String() + `</w:body></w:document>`},
		{name: "word/_rels/document.xml.rels", body: `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rl.String() + `</Relationships>`},
	}
	return zipOf(t, append(entries, parts...)...)
}

// TestDOCXAltChunkHostile: imported Word documents that import documents
// stop at maxAltChunkDepth levels, a fan-out of chunks (each level
// importing the level below many times over, 16^6 reads unbounded) stops
// at maxAltChunks reads, chunks without a relationship or of an unknown
// format are skipped by name, and a chunk in a table cell stays in its
// cell; the document's own text is never lost.
func TestDOCXAltChunkHostile(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		doc := altChunkDOCX(t, "level 9")
		for i := 8; i >= 0; i-- {
			doc = altChunkDOCX(t, fmt.Sprintf("level %d", i), doc)
		}
		idx, objs := mustRun(t, doc, "deep.docx", "", Limits{})
		got := strings.Join(texts(objs), "|")
		if got != "level 0|level 1|level 2|level 3" {
			t.Errorf("texts %q, want levels 0 to %d", got, maxAltChunkDepth)
		}
		if !strings.Contains(fmt.Sprint(idx.Structure["skipped"]), "nested deeper than 3 levels") {
			t.Errorf("skipped %v", idx.Structure["skipped"])
		}
	})
	t.Run("fan-out", func(t *testing.T) {
		doc := altChunkDOCX(t, "leaf")
		for i := 0; i < 6; i++ {
			fan := make([][]byte, 16)
			for j := range fan {
				fan[j] = doc
			}
			doc = altChunkDOCX(t, fmt.Sprintf("fan %d", i), fan...)
		}
		idx, objs := mustRun(t, doc, "fan.docx", "", Limits{})
		if len(objs) > maxAltChunks+1 || objs[0].Data != "fan 5" {
			t.Errorf("%d objects, first %q", len(objs), objs[0].Data)
		}
		if !strings.Contains(fmt.Sprint(idx.Structure["skipped"]), "more than 256 imported parts") {
			t.Errorf("skipped %v", idx.Structure["skipped"])
		}
	})
	t.Run("broken chunks", func(t *testing.T) {
		doc := altChunkDOCX(t, "own text", []byte("\x00\x01 binary"), []byte("PK\x03\x04 not a zip"))
		idx, objs := mustRun(t, doc, "broken.docx", "", Limits{})
		if got := texts(objs); len(got) != 1 || got[0] != "own text" {
			t.Errorf("texts %q", got)
		}
		if s := fmt.Sprint(idx.Structure["skipped"]); !strings.Contains(s, "word/chunk0.bin") || !strings.Contains(s, "word/chunk1.bin") {
			t.Errorf("skipped %v", s)
		}
	})
	t.Run("in a table cell", func(t *testing.T) {
		doc := zipOf(t,
			entry{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "word/document.xml"})},
			entry{name: "word/document.xml", body: `<w:document ` + nsW + ` ` + nsR + `><w:body><w:tbl><w:tr><w:tc><w:p><w:r><w:t>Cell</w:t></w:r></w:p><w:altChunk r:id="c"/></w:tc><w:tc><w:p><w:r><w:t>Next</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:body></w:document>`},
			entry{name: "word/_rels/document.xml.rels", body: rels([3]string{"c", "aFChunk", "imported.htm"})},
			entry{name: "word/imported.htm", body: "<html><body><p>Imported into the cell</p></body></html>"},
		)
		_, objs := mustRun(t, doc, "cell.docx", "", Limits{})
		if got := texts(objs); len(got) != 1 || got[0] != "| Cell<br>Imported into the cell | Next |\n| --- | --- |" {
			t.Errorf("texts %q", got)
		}
	})
	t.Run("text limit", func(t *testing.T) {
		doc := altChunkDOCX(t, "own", []byte("<html><body><p>"+strings.Repeat("imported words ", 400)+"</p></body></html>"))
		idx, objs := mustRun(t, doc, "limit.docx", "", Limits{MaxTextBytes: 100})
		n := 0
		for _, o := range objs {
			if o.ContentType == content.Text {
				n += len(o.Data)
			}
		}
		if n > 100 || idx.Structure["truncated"] == nil {
			t.Errorf("%d bytes of text, structure %v", n, idx.Structure)
		}
	})
}

// TestDOCXAltChunkFormats: the imported part's format comes from its
// content type in [Content_Types].xml (ECMA-376 Part 2, 10.1.2.2: an
// Override for the part; plain text has no bytes to tell it by), else from
// its bytes: an MHTML page (RFC 2557: a multipart/related MIME message
// whose root is the HTML), an RTF document.
func TestDOCXAltChunkFormats(t *testing.T) {
	mht := "MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"b1\"; type=\"text/html\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/html; charset=utf-8\r\nContent-Location: file:///C:/page.htm\r\n\r\n" +
		"<html><body><p>Web archive paragraph</p></body></html>\r\n--b1--\r\n"
	doc := zipOf(t,
		entry{name: "[Content_Types].xml", body: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="txt" ContentType="text/plain"/><Override PartName="/word/c3.bin" ContentType="application/rtf"/></Types>`},
		entry{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "word/document.xml"})},
		entry{name: "word/document.xml", body: `<w:document ` + nsW + ` ` + nsR + `><w:body><w:altChunk r:id="c1"/><w:altChunk r:id="c2"/><w:altChunk r:id="c3"/></w:body></w:document>`},
		entry{name: "word/_rels/document.xml.rels", body: rels([3]string{"c1", "aFChunk", "c1.txt"}, [3]string{"c2", "aFChunk", "c2.mht"}, [3]string{"c3", "aFChunk", "c3.bin"})},
		entry{name: "word/c1.txt", body: "Plain imported line"},
		entry{name: "word/c2.mht", body: mht},
		entry{name: "word/c3.bin", body: `{\rtf1\ansi Rich \u-10179?\u-8704? text\par}`},
	)
	idx, objs := mustRun(t, doc, "formats.docx", "", Limits{})
	got := strings.Join(texts(objs), "|")
	if got != "Plain imported line|Web archive paragraph|Rich 😀 text" {
		t.Errorf("texts %q, skipped %v", got, idx.Structure["skipped"])
	}
}
