package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestPPTXOLEObjects: a slide's OLE object (p:oleObj in a graphic frame,
// ECMA-376 Part 1 19.3.1.36, its r:id a relationship of type package or
// oleObject to a part of ppt/embeddings) is read by its own format's
// reader where it stands: LibreOffice's PPTX save (lo-ole-objects.pptx)
// embeds an XLSX whose sheet carries a chart (series names in
// c:tx/c:strRef/c:strCache) and a DOCX.
func TestPPTXOLEObjects(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "embedded", "lo-ole-objects.pptx"), "ole.pptx", "", Limits{})
	slides := map[int]string{}
	for _, o := range objs {
		slides[o.Ref.SlideIndex] += o.Data + "\n"
	}
	for k, wants := range map[int][]string{
		1: {"Glacier length change", "Rhône glacier: 1990s = -112; 2000s = -154; 2010s = -198",
			"Aletsch glacier: 1990s = -210; 2000s = -380; 2010s = -495", "Mass balance chart", "| 2010s | -198 | -495 |"},
		2: {"Stations list", "Embedded text document: Jungfraujoch and Weissfluhjoch stations."},
	} {
		for _, w := range wants {
			if !strings.Contains(slides[k], w) {
				t.Errorf("slide %d: no %q in\n%s", k, w, slides[k])
			}
		}
	}
	if idx.Structure["embedded"] != 2 {
		t.Errorf("structure %v", idx.Structure)
	}
}

// TestPPTXOLEObjectsHostile: presentations embedding themselves (a PPTX
// in a PPTX, to any depth) stop at maxEmbedDepth levels; embedded parts
// that are no document, or of formats that are not documents, are skipped
// by name; the slide's own text stays.
func TestPPTXOLEObjectsHostile(t *testing.T) {
	slide := func(text string, embeds int) string {
		var b strings.Builder
		b.WriteString(`<p:sld ` + nsA + ` ` + nsP + ` ` + nsR + `><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>` + text + `</a:t></a:r></a:p></p:txBody></p:sp>`)
		for i := 0; i < embeds; i++ {
			b.WriteString(fmt.Sprintf(`<p:graphicFrame><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/presentationml/2006/ole"><p:oleObj progId="PowerPoint.Show.12" r:id="e%d"><p:embed/></p:oleObj></a:graphicData></a:graphic></p:graphicFrame>`, i))
		}
		b.WriteString(`</p:spTree></p:cSld></p:sld>`)
		return b.String()
	}
	pptx := func(text string, embeds ...[]byte) []byte {
		var r [][3]string
		ents := []entry{}
		for i, e := range embeds {
			name := fmt.Sprintf("../embeddings/e%d.pptx", i)
			if i == 1 {
				name = "../embeddings/e1.png"
			}
			r = append(r, [3]string{fmt.Sprintf("e%d", i), "package", name})
			ents = append(ents, entry{name: "ppt/embeddings/" + strings.TrimPrefix(name, "../embeddings/"), body: string(e)})
		}
		return zipOf(t, append([]entry{
			{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "ppt/presentation.xml"})},
			{name: "ppt/presentation.xml", body: `<p:presentation ` + nsP + ` ` + nsR + `><p:sldIdLst><p:sldId id="256" r:id="s1"/></p:sldIdLst></p:presentation>`},
			{name: "ppt/_rels/presentation.xml.rels", body: rels([3]string{"s1", "slide", "slides/slide1.xml"})},
			{name: "ppt/slides/slide1.xml", body: slide(text, len(embeds))},
			{name: "ppt/slides/_rels/slide1.xml.rels", body: rels(r...)},
		}, ents...)...)
	}
	t.Run("depth", func(t *testing.T) {
		doc := pptx("level 9")
		for i := 8; i >= 0; i-- {
			doc = pptx(fmt.Sprintf("level %d", i), doc)
		}
		idx, objs := mustRun(t, doc, "deep.pptx", "", Limits{})
		got := strings.Join(texts(objs), "|")
		if !strings.HasPrefix(got, "level 0") || !strings.Contains(got, "level 3") || strings.Contains(got, "level 4") {
			t.Errorf("texts %q, want levels 0 to %d", got, maxEmbedDepth)
		}
		if !strings.Contains(fmt.Sprint(idx.Structure["skipped"]), "nested deeper than 3 levels") {
			t.Errorf("skipped %v", idx.Structure["skipped"])
		}
	})
	t.Run("not documents", func(t *testing.T) {
		idx, objs := mustRun(t, pptx("own text", []byte("PK\x03\x04 broken"), []byte(pngOf(t, 2, 2))), "junk.pptx", "", Limits{})
		if got := texts(objs); len(got) != 1 || got[0] != "own text" {
			t.Errorf("texts %q", got)
		}
		if s := fmt.Sprint(idx.Structure["skipped"]); !strings.Contains(s, "ppt/embeddings/e0.pptx") || !strings.Contains(s, "ppt/embeddings/e1.png") {
			t.Errorf("skipped %v", s)
		}
	})
}

// TestEmbeddedShareUnzipBudget: documents embedded in a document spend
// the one MaxUnzippedBytes of the extraction: sixteen embedded copies of
// a presentation holding a 1 MiB part, each well within the budget alone,
// are read until the budget is spent, then skipped as over the limit.
func TestEmbeddedShareUnzipBudget(t *testing.T) {
	inner := zipOf(t,
		entry{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "ppt/presentation.xml"})},
		entry{name: "ppt/presentation.xml", body: `<p:presentation ` + nsP + ` ` + nsR + `><p:sldIdLst><p:sldId id="256" r:id="s1"/></p:sldIdLst></p:presentation>`},
		entry{name: "ppt/_rels/presentation.xml.rels", body: rels([3]string{"s1", "slide", "slides/slide1.xml"})},
		entry{name: "ppt/slides/slide1.xml", body: `<p:sld ` + nsA + ` ` + nsP + `><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>inner</a:t></a:r></a:p></p:txBody></p:sp>` +
			`<!--` + strings.Repeat("x", 1<<20) + `--></p:spTree></p:cSld></p:sld>`},
	)
	var frames strings.Builder
	var r [][3]string
	ents := []entry{}
	for i := 0; i < 16; i++ {
		frames.WriteString(fmt.Sprintf(`<p:graphicFrame><a:graphic><a:graphicData><p:oleObj r:id="e%d"/></a:graphicData></a:graphic></p:graphicFrame>`, i))
		r = append(r, [3]string{fmt.Sprintf("e%d", i), "package", fmt.Sprintf("../embeddings/e%d.pptx", i)})
		ents = append(ents, entry{name: fmt.Sprintf("ppt/embeddings/e%d.pptx", i), body: string(inner), store: true})
	}
	outer := zipOf(t, append([]entry{
		{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "ppt/presentation.xml"})},
		{name: "ppt/presentation.xml", body: `<p:presentation ` + nsP + ` ` + nsR + `><p:sldIdLst><p:sldId id="256" r:id="s1"/></p:sldIdLst></p:presentation>`},
		{name: "ppt/_rels/presentation.xml.rels", body: rels([3]string{"s1", "slide", "slides/slide1.xml"})},
		{name: "ppt/slides/slide1.xml", body: `<p:sld ` + nsA + ` ` + nsP + ` ` + nsR + `><p:cSld><p:spTree>` + frames.String() + `</p:spTree></p:cSld></p:sld>`},
		{name: "ppt/slides/_rels/slide1.xml.rels", body: rels(r...)},
	}, ents...)...)
	idx, objs := mustRun(t, outer, "budget.pptx", "", Limits{MaxUnzippedBytes: 5 << 20})
	n := strings.Count(strings.Join(texts(objs), "\n"), "inner")
	if n == 0 || n >= 5 {
		t.Errorf("%d embedded presentations read within 5 MiB, want 1 to 4", n)
	}
	if !strings.Contains(fmt.Sprint(idx.Structure["skipped"]), "size limit exceeded") {
		t.Errorf("skipped %.400v", idx.Structure["skipped"])
	}
}

// TestDOCXAndODTEmbeddedWorkbook: a text document embedding a workbook
// with a chart (lo-embedded-workbook.odt, LibreOffice's save of the flat
// source beside it, and its DOCX save, where the workbook is an OLE object:
// w:object holding o:OLEObject ProgID="Excel.Sheet.12" whose r:id names
// word/embeddings/oleObject1.xlsx) gives the workbook's cells and its
// chart's series by name between the paragraphs around it.
func TestDOCXAndODTEmbeddedWorkbook(t *testing.T) {
	for _, file := range []string{"lo-embedded-workbook.docx", "lo-embedded-workbook.odt"} {
		t.Run(file, func(t *testing.T) {
			_, objs := mustRun(t, testcorpus.Read(t, "office", "embedded", file), file, "", Limits{})
			all := strings.Join(texts(objs), "\n")
			before := strings.Index(all, "Report with an embedded workbook below.")
			after := strings.Index(all, "Text after the workbook.")
			for _, want := range []string{"Rhône glacier: 1990s = -112; 2000s = -154; 2010s = -198", "Mass balance chart", "| 2010s | -198 | -495 |"} {
				if i := strings.Index(all, want); i < 0 || before < 0 || i < before || after < i {
					t.Errorf("no %q between the paragraphs in\n%s", want, all)
				}
			}
		})
	}
}
