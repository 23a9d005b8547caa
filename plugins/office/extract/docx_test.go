package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/pdk/content"
)

// docxOf builds a DOCX around a body, with the parts a test names.
func docxOf(t testing.TB, body string, extra ...entry) []byte {
	t.Helper()
	es := []entry{
		{name: "[Content_Types].xml", body: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "word/document.xml"})},
		{name: "word/document.xml", body: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ` + nsW + ` ` + nsR + ` ` + nsA + ` ` + nsMC + `><w:body>` + body + `</w:body></w:document>`},
	}
	return zipOf(t, append(es, extra...)...)
}

func wp(style, text string) string {
	ppr := ""
	if style != "" {
		ppr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return `<w:p>` + ppr + `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r></w:p>`
}

func TestDOCXStructure(t *testing.T) {
	styles := `<w:styles ` + nsW + `>
<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
<w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style>
<w:style w:type="paragraph" w:styleId="MyHead"><w:name w:val="My Head"/><w:basedOn w:val="berschrift2"/></w:style>
<w:style w:type="paragraph" w:styleId="Custom"><w:name w:val="Custom"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
</w:styles>`
	textbox := `<w:txbxContent>` + wp("", "Box text") + `</w:txbxContent>`
	body := wp("berschrift1", "Intro") +
		`<w:p><w:r><w:t>Alpha </w:t></w:r><w:del><w:r><w:delText>GONE</w:delText></w:r></w:del>` +
		`<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>HYPERLINK "x"</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>` +
		`<w:hyperlink r:id="rId9"><w:r><w:t>link</w:t></w:r></w:hyperlink><w:r><w:fldChar w:fldCharType="end"/></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p>` +
		wp("MyHead", "Sub") +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>` + textbox + `</w:drawing></mc:Choice><mc:Fallback><w:pict>` + textbox + `</w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>` +
		`<w:tbl><w:tblPr/><w:tr><w:tc>` + wp("", "c11") + `</w:tc><w:tc>` + wp("", "c|12") + `</w:tc></w:tr>` +
		`<w:tr><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr>` + wp("", "wide") + wp("", "second line") + `</w:tc></w:tr></w:tbl>` +
		`<w:sdt><w:sdtContent>` + wp("Heading1", "Chapter") + `</w:sdtContent></w:sdt>` +
		`<w:p/>` +
		wp("Custom", "Custom level") +
		`<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r></w:p>` +
		`<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:docPr id="1" name="Picture 1" descr="A chart"/>` +
		`<a:graphic><a:graphicData><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:blipFill><a:blip r:embed="rId5"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>` +
		`<w:sectPr><w:headerReference w:type="default" r:id="rId6"/></w:sectPr>`
	b := docxOf(t, body,
		entry{name: "word/_rels/document.xml.rels", body: rels(
			[3]string{"rId1", "styles", "styles.xml"},
			[3]string{"rId5", "image", "media/image1.png"},
			[3]string{"rId6", "header", "header1.xml"},
			[3]string{"rId7", "footnotes", "footnotes.xml"},
			[3]string{"rId8", "comments", "comments.xml"},
			[3]string{"rId9", "hyperlink", "https://example.com/"},
			[3]string{"rId10", "footer", "footer1.xml"},
		)},
		entry{name: "word/styles.xml", body: styles},
		entry{name: "word/header1.xml", body: `<w:hdr ` + nsW + `>` + wp("", "Header text") + `</w:hdr>`},
		entry{name: "word/footnotes.xml", body: `<w:footnotes ` + nsW + `><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1">` + wp("", "A footnote") + `</w:footnote></w:footnotes>`},
		entry{name: "word/comments.xml", body: `<w:comments ` + nsW + `><w:comment w:id="0" w:author="Ann">` + wp("", "A comment") + `</w:comment></w:comments>`},
		entry{name: "word/media/image1.png", body: pngOf(t, 30, 20), store: true},
		entry{name: "word/media/unused.png", body: pngOf(t, 5, 6)},
	)
	idx, objs := mustRun(t, b, "report.docx", "", Limits{})

	type want struct {
		data      string
		part      string
		paragraph int
		section   string
		label     string
	}
	wants := []want{
		{"Intro", "document", 1, "1", "Intro"},
		{"Alpha link", "document", 2, "1", ""},
		{"Sub", "document", 3, "1.1", "Sub"},
		{"Box text", "document", 4, "1.1", ""},
		{"| c11 | c\\|12 |\n| --- | --- |\n| wide<br>second line |  |", "document", 5, "1.1", ""},
		{"Chapter", "document", 9, "2", "Chapter"},
		{"Custom level", "document", 10, "2.1", "Custom level"},
		{"a\tb\nc", "document", 11, "2.1", ""},
		{"", "document", 0, "2.1", "A chart"}, // the image
		{"Header text", "header1", 1, "", ""},
		{"A footnote", "footnotes", 1, "", ""},
		{"A comment", "comments", 1, "", ""},
		{"", "media", 0, "", "unused"},
	}
	if len(objs) != len(wants) {
		t.Fatalf("%d objects, want %d: %q", len(objs), len(wants), texts(objs))
	}
	for i, w := range wants {
		o := objs[i]
		got := want{o.Data, o.Ref.Part, o.Ref.Paragraph, o.Ref.SectionID, o.Ref.Label}
		if got != w {
			t.Errorf("object %d = %+v, want %+v", i+1, got, w)
		}
	}
	if tbl := objs[4]; tbl.Metadata["lastParagraph"] != 8 || tbl.Metadata["rows"] != 2 || tbl.Metadata["cols"] != 2 {
		t.Errorf("table metadata %v", tbl.Metadata)
	}
	img := objs[8]
	if img.ContentType != content.Image || img.Metadata["dimensions"] != "30x20" || img.Metadata["format"] != "png" ||
		img.Metadata["part"] != "word/media/image1.png" || img.Metadata["afterParagraph"] != 11 {
		t.Errorf("image %v", img)
	}
	if s := idx.Objects[8]; s.Dimensions != "30x20" || s.ContentType != content.Image {
		t.Errorf("summary %+v", s)
	}
	if objs[11].Metadata["author"] != "Ann" || objs[10].Metadata["note"] != "1" {
		t.Errorf("comment %v, note %v", objs[11].Metadata, objs[10].Metadata)
	}
	secs := idx.Structure["sections"].([]map[string]any)
	var ids []string
	for _, s := range secs {
		ids = append(ids, s["id"].(string)+"="+s["title"].(string))
	}
	if got := strings.Join(ids, ","); got != "1=Intro,1.1=Sub,2=Chapter,2.1=Custom level" {
		t.Errorf("sections %s", got)
	}
	if idx.Structure["paragraphs"] != 11 || idx.Structure["tables"] != 1 || idx.Structure["images"] != 2 {
		t.Errorf("structure %v", idx.Structure)
	}
	// The footer the rels name is missing: skipped, not fatal.
	if parts := idx.Structure["parts"].([]string); strings.Join(parts, ",") != "document,header1,footnotes,comments" {
		t.Errorf("parts %v", parts)
	}
}
