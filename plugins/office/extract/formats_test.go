package extract

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
)

// formatCase is a real document of a format beyond OOXML: the MIME type it
// must be reported as, text it must yield in order, and references of
// objects that hold given text.
type formatCase struct {
	file string // below testdata/corpus/office
	mime string
	text []string
	refs map[string]content.Ref // an object containing the key has these non-zero fields
}

// officeFormatCases are the corpus files of the formats of issue 16 item 7
// (MANIFEST.tsv says where each comes from).
var officeFormatCases = []formatCase{
	{file: "odt/odfpy-twolevellist.odt", mime: mimeODT,
		text: []string{"Line 1", "Item A", "Item B", "Subitem B.1", "Subitem B.2 (bold)", "Item C", "Line 4"},
		refs: map[string]content.Ref{"Subitem B.1": {Part: "document", Paragraph: 4}}},
	{file: "odt/odfpy-simpletable.odt", mime: mimeODT,
		text: []string{"| Cell 1 | Cell 2 |", "| Cell 3 (bold) | Cell 4 (italic) |"},
		refs: map[string]content.Ref{"Cell 4": {Part: "document", Paragraph: 1}}},
	{file: "odt/odfpy-headerfooter.odt", mime: mimeODT,
		text: []string{"Lorem ipsum", "Header\t1\tTest", "Footer\t1\tBottom"},
		refs: map[string]content.Ref{"Lorem ipsum": {Part: "document", Paragraph: 1, SectionID: "1", Label: "Lorem ipsum"},
			"Header": {Part: "header", Paragraph: 1}, "Bottom": {Part: "footer", Paragraph: 1}}},
	{file: "ods/odfpy-countrystatistics.ods", mime: mimeODS,
		text: []string{"| 1 | Country | Population<br>in millions |", "| 2 | Austria | 8.3 | 83,858 | 99 |", "| 2 | Norway | 968 |"},
		refs: map[string]content.Ref{"Austria": {SheetName: "Population", Location: "sheet:Population!A1:D28"}, "Iceland": {SheetName: "HDI"}}},
	{file: "odp/odfpy-ol.odp", mime: mimeODP,
		text: []string{"OL", "Eins", "Tsvey", "Tsvelf", "fertsn"},
		refs: map[string]content.Ref{"Eins": {SlideIndex: 1, Location: "slide:1", Label: "OL"}}},
	{file: "odp/odfpy-cols.odp", mime: mimeODP,
		text: []string{"11 Lorem ipsum dolor sit amet", "21 Sed ut est elit"},
		refs: map[string]content.Ref{"Lorem": {SlideIndex: 1, Location: "slide:1", Part: "page1"}}},
	{file: "rtf/unrtf-accents.rtf", mime: mimeRTF,
		text: []string{"Je crois que j'irai au café où on ne fume pas.", "Credo che andrò a un caffè dove nessuno fuma."},
		refs: map[string]content.Ref{"café": {Part: "document", Paragraph: 1, Location: "paragraph:1"}}},
	{file: "rtf/unrtf-cp1251-russian-alphabet.rtf", mime: mimeRTF,
		text: []string{"абвгдеёжзийклмнопрстуфхцчшщъыьэюя", "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ", "abcdefghigklmnopqrstuvwxyz"}},
	{file: "rtf/unrtf-lists.rtf", mime: mimeRTF,
		text: []string{"The quick brown fox jumps over the lazy dog.", "·\tFirst item", "2.\tSecond item", "ii)\tSecond sub-sub item", "End list text."},
		refs: map[string]content.Ref{"lazy dog": {Part: "document", Paragraph: 1, Location: "paragraph:1-18"}}},
	{file: "doc/antiword-testdoc.doc", mime: mimeDOC,
		text: []string{"This is just a small test document.", "to see if Antiword has been compiled correctly.", "Figure 1",
			"This JPEG image is the Antiword icon.", "the cover of the O’Reilly book about PNG.", "when Antiword is run with the “-i 0” option."},
		refs: map[string]content.Ref{"small test document": {Part: "document", Paragraph: 1}}},
	{file: "doc/lo-stations-table.doc", mime: mimeDOC,
		text: []string{"Station readings before the table.", "| Station | Altitude | Remark |", "| Jungfraujoch | 3571 m | |",
			"| Säntis | | first line second line |", "Text after the table."},
		refs: map[string]content.Ref{"Jungfraujoch": {Part: "document", Paragraph: 2, Location: "paragraph:2-8"},
			"Text after": {Part: "document", Paragraph: 9, Location: "paragraph:9"}}},
	{file: "doc/mscfb-hurley-hcpr.doc", mime: mimeDOC,
		text: []string{"COMMON PRACTICE RULES", "for the DOCUMENTATION of ARCHIVES & OTHER RECORDS",
			"| U 2.002.1 NAMING THE ENTITY This gives a handle by which the entity can be known in everyday dealings | AREA |",
			"| U 2.002.1a Give the entity a name Gives it a handle that people can remember e.g. Offer of employment | Common Practice Rule |"}},
	{file: "ppt/mscfb-test.ppt", mime: mimePPT,
		text: []string{"Test", "Lorem ipsum dolor sit amet, consectetuer adipiscing elit", "fiant sollemnes in futurum.", "Test 2"},
		refs: map[string]content.Ref{"Lorem ipsum": {SlideIndex: 1, Part: "slide1", Location: "slide:1", Label: "Test"},
			"Test 2": {SlideIndex: 2, Part: "slide2", Location: "slide:2", Label: "Test 2"}}},
	{file: "ppt/lo-glacier-deck.ppt", mime: mimePPT,
		text: []string{"Quarterly glacier survey", "Rhône glacier retreated 41 metres", "Aletsch measurements resumed in August",
			"Speaker note: mention the drone flights over the moraine.", "Budget in CHF",
			"Free text box: Ελληνικά και Ζυρίχη — total 12’500 CHF", "Hidden backup slide", "Raw station readings"},
		refs: map[string]content.Ref{"Aletsch": {SlideIndex: 1, Part: "slide1", Location: "slide:1"},
			"drone flights": {SlideIndex: 1, Part: "notes1", Location: "slide:1/notes"},
			"Ζυρίχη":        {SlideIndex: 2, Part: "slide2", Location: "slide:2"},
			"Raw station":   {SlideIndex: 3, Part: "slide3", Location: "slide:3"}}},
	{file: "xls/readxl-clippy.xls", mime: mimeXLS,
		text: []string{"| 2 | Name | Clippy |", "| 4 | Approx date of death | 2007-01-01 |", "| 5 | Weight in grams | 0.9 |", "| 3 | Clippy | paperclip | 2007-01-01 | 0.9 |"},
		refs: map[string]content.Ref{"Species": {SheetName: "list-column", Location: "sheet:list-column!A1:B5"}, "office supply": {SheetName: "two-row-header", Location: "sheet:two-row-header!A1:D3"}}},
	{file: "dates/readxl-clippy.xlsx", mime: mimeXLSX,
		text: []string{"| 4 | Approx date of death | 2007-01-01 |", "| 5 | Weight in grams | 0.9 |"}},
}

// TestOfficeFormatsCorpus: OpenDocument, RTF, Word 97-2003 and Excel
// 97-2003 files are read as what they are (by name, and by content alone),
// with their text in order and their references.
func TestOfficeFormatsCorpus(t *testing.T) {
	for _, c := range officeFormatCases {
		t.Run(c.file, func(t *testing.T) {
			path := testcorpus.Path(t, "office", c.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{filepath.Base(path), "no-extension"} {
				idx, objs, err := run(t, b, name, "", Limits{})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if idx.MIMEType != c.mime {
					t.Errorf("%s: MIME %s, want %s", name, idx.MIMEType, c.mime)
				}
				all := norm(strings.Join(texts(objs), "\n"))
				if miss := inOrder(all, c.text); miss != "" {
					t.Errorf("%s: %q not found in order in:\n%s", name, miss, all)
				}
				for key, want := range c.refs {
					checkRef(t, objs, key, want)
				}
			}
		})
	}
}

// checkRef finds the object holding key and compares the reference fields
// want sets.
func checkRef(t *testing.T, objs []content.Object, key string, want content.Ref) {
	t.Helper()
	for _, o := range objs {
		if !strings.Contains(o.Data, key) {
			continue
		}
		got := o.Ref
		if want.Part != "" && got.Part != want.Part || want.Paragraph != 0 && got.Paragraph != want.Paragraph ||
			want.SectionID != "" && got.SectionID != want.SectionID || want.Label != "" && got.Label != want.Label ||
			want.SheetName != "" && got.SheetName != want.SheetName || want.Location != "" && got.Location != want.Location ||
			want.SlideIndex != 0 && got.SlideIndex != want.SlideIndex {
			t.Errorf("object with %q: ref %+v, want %+v", key, got, want)
		}
		return
	}
	t.Errorf("no object holds %q", key)
}

// TestSniffingNeverTurnsDocumentsIntoGarbage: RTF is never taken for JSON
// or plain text, whatever the type or the name say; brace-led text that is
// not JSON stays text; a compound file that is not Word or Excel is
// refused by a message that names what it is.
func TestSniffingNeverTurnsDocumentsIntoGarbage(t *testing.T) {
	rtf := testcorpus.Read(t, "office", "rtf", "unrtf-accents.rtf")
	for _, c := range []struct{ name, mime string }{
		{"", ""}, {"notes", "application/json"}, {"notes.txt", "text/plain"}, {"letter.doc", ""},
		{"letter.doc", "application/msword"}, {"x.json", ""}, {"x.rtf", "application/rtf"}, {"x", "text/rtf"},
	} {
		idx, objs, err := run(t, rtf, c.name, c.mime, Limits{})
		if err != nil || !strings.Contains(idx.MIMEType, "rtf") || len(objs) != 1 || !strings.HasPrefix(objs[0].Data, "Je crois que j'irai au café") {
			t.Errorf("%q %q: %v %s %q", c.name, c.mime, err, idx.MIMEType, texts(objs))
		}
	}
	for _, c := range []struct {
		data, mime string
	}{
		{`{"a": [1, 2, {"b": "c"}]}`, "application/json"},
		{"{ this is not json }\n", "text/plain"},
		{"[see the notes below]\nand more", "text/plain"},
	} {
		idx, _, err := run(t, []byte(c.data), "", "", Limits{})
		if err != nil || idx.MIMEType != c.mime {
			t.Errorf("%q: %v %s, want %s", c.data, err, idx.MIMEType, c.mime)
		}
	}
	for _, c := range []struct {
		name string
		want error
		says string
	}{
		{"broken.doc", ErrMalformed, "OLE compound file"},
		{"noext", ErrMalformed, "OLE compound file"},
		{"secret.xlsx", ErrEncrypted, "password-protected"},
	} {
		_, _, err := run(t, oleBytes(), c.name, "", Limits{})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.want, c.says)
		}
	}
}

// odfOf builds an OpenDocument package around a content.xml body.
func odfOf(t *testing.T, mime, styles, body string, extra ...entry) []byte {
	t.Helper()
	doc := `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
		`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ` +
		`xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" ` +
		`xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.2">` +
		`<office:automatic-styles>` + styles + `</office:automatic-styles><office:body>` + body + `</office:body></office:document-content>`
	return zipOf(t, append([]entry{{name: "mimetype", body: mime, store: true}, {name: "content.xml", body: doc}}, extra...)...)
}

// TestODFDetails: headings number sections, notes and annotations are
// their own parts, spreadsheet dates are ISO dates, hidden pages are
// marked on their objects (notes included).
func TestODFDetails(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		b := odfOf(t, mimeODT, "", `<office:text><text:h text:outline-level="1">Intro</text:h>`+
			`<text:p>Body<text:s text:c="2"/>text<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>A footnote.</text:p></text:note-body></text:note> ends.</text:p>`+
			`<text:h text:outline-level="2">Detail</text:h><text:p>More<office:annotation><dc:creator>Ann</dc:creator><dc:date>2024-01-01</dc:date><text:p>A remark.</text:p></office:annotation> here.</text:p></office:text>`)
		idx, objs := mustRun(t, b, "d.odt", "", Limits{})
		want := []struct {
			data, part, section string
			para                int
		}{
			{"Intro", "document", "1", 1}, {"Body  text ends.", "document", "1", 2}, {"Detail", "document", "1.1", 3},
			{"More here.", "document", "1.1", 4}, {"A footnote.", "footnotes", "", 1}, {"A remark.", "comments", "", 1},
		}
		if len(objs) != len(want) {
			t.Fatalf("objects %q", texts(objs))
		}
		for i, w := range want {
			o := objs[i]
			if o.Data != w.data || o.Ref.Part != w.part || o.Ref.SectionID != w.section || o.Ref.Paragraph != w.para {
				t.Errorf("object %d: %q %+v, want %+v", i, o.Data, o.Ref, w)
			}
		}
		if idx.Structure["format"] != "odf-text" || idx.Structure["footnotes"] != 1 {
			t.Errorf("structure %v", idx.Structure)
		}
	})
	t.Run("spreadsheet", func(t *testing.T) {
		hide := `<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style>`
		b := odfOf(t, mimeODS, hide, `<office:spreadsheet><table:table table:name="Dates"><table:table-row>`+
			`<table:table-cell office:value-type="string"><text:p>Born</text:p></table:table-cell>`+
			`<table:table-cell office:value-type="date" office:date-value="1917-05-29"><text:p>29.05.17</text:p></table:table-cell>`+
			`<table:table-cell table:number-columns-repeated="1000"/></table:table-row>`+
			`<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>`+
			`<table:table-row><table:table-cell office:value-type="float" office:value="2.5"><text:p>2.5</text:p></table:table-cell></table:table-row></table:table>`+
			`<table:table table:name="Spare" table:style-name="ta2"><table:table-row><table:table-cell office:value-type="string"><text:p>kept aside</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`)
		_, objs := mustRun(t, b, "d.ods", "", Limits{})
		if len(objs) != 2 || objs[1].Data != "|  | A |\n| --- | --- |\n| 1 | kept aside |" || objs[1].Metadata["hidden"] != true || objs[0].Metadata["hidden"] != nil {
			t.Errorf("hidden sheet %+v", objs)
		}
		if len(objs) < 1 || !strings.Contains(objs[0].Data, "| 1 | Born | 1917-05-29 |") || !strings.Contains(objs[0].Data, "| 1048572 | 2.5 |") ||
			objs[0].Ref.Location != "sheet:Dates!A1:B1048572" {
			t.Fatalf("objects %+v", objs)
		}
	})
	t.Run("presentation", func(t *testing.T) {
		styles := `<style:style style:name="dp2" style:family="drawing-page"><style:drawing-page-properties presentation:visibility="hidden"/></style:style>`
		frame := func(class, text string) string {
			return `<draw:frame presentation:class="` + class + `"><draw:text-box><text:p>` + text + `</text:p></draw:text-box></draw:frame>`
		}
		b := odfOf(t, mimeODP, styles, `<office:presentation>`+
			`<draw:page draw:name="Start" draw:style-name="dp1">`+frame("title", "Welcome")+frame("outline", "Shown text")+`</draw:page>`+
			`<draw:page draw:name="Backup" draw:style-name="dp2">`+frame("title", "Spare")+frame("outline", "Hidden text")+
			`<presentation:notes><draw:page-thumbnail/>`+frame("notes", "Hidden note")+`</presentation:notes></draw:page></office:presentation>`)
		idx, objs := mustRun(t, b, "d.odp", "", Limits{})
		if len(objs) != 3 {
			t.Fatalf("objects %q", texts(objs))
		}
		if objs[0].Data != "Welcome\n\nShown text" || objs[0].Metadata["hidden"] != nil || objs[0].Ref.Label != "Welcome" {
			t.Errorf("slide 1 %+v", objs[0])
		}
		if objs[1].Data != "Spare\n\nHidden text" || objs[1].Metadata["hidden"] != true || objs[1].Ref.SlideIndex != 2 {
			t.Errorf("hidden slide %+v", objs[1])
		}
		if objs[2].Data != "Hidden note" || objs[2].Metadata["hidden"] != true || objs[2].Ref.Location != "slide:2/notes" {
			t.Errorf("hidden slide's notes %+v", objs[2])
		}
		if list := idx.Structure["slideList"].([]map[string]any); list[1]["hidden"] != true {
			t.Errorf("slide list %v", list)
		}
	})
	t.Run("encrypted", func(t *testing.T) {
		b := zipOf(t, entry{name: "mimetype", body: mimeODT, store: true}, entry{name: "content.xml", body: "\x01\x02 encrypted bytes"},
			entry{name: "META-INF/manifest.xml", body: `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"><manifest:encryption-data manifest:checksum-type="SHA1"/></manifest:file-entry></manifest:manifest>`})
		if _, _, err := run(t, b, "secret.odt", "", Limits{}); !errors.Is(err, ErrEncrypted) {
			t.Fatalf("err %v, want ErrEncrypted", err)
		}
	})
}

// TestXLSXDatesAreISO: dates print as ISO dates whatever their format,
// built-in (m/d/yy) or custom (d/m/yy, d-mmm-yy), so 1917 and 2017 differ;
// times keep their time; other numbers keep their format.
func TestXLSXDatesAreISO(t *testing.T) {
	custom := "d/m/yy"
	mmm := `d\-mmm\-yy`
	withTime := "m/d/yy h:mm"
	b := xlsxBytes(t, func(f *excelize.File) {
		must(t, f.SetCellValue("Sheet1", "A1", time.Date(1917, 5, 29, 0, 0, 0, 0, time.UTC)))
		must(t, f.SetCellValue("Sheet1", "A2", time.Date(2017, 5, 29, 0, 0, 0, 0, time.UTC)))
		must(t, f.SetCellValue("Sheet1", "A3", time.Date(2017, 5, 29, 0, 0, 0, 0, time.UTC)))
		must(t, f.SetCellValue("Sheet1", "A4", time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)))
		must(t, f.SetCellValue("Sheet1", "A5", time.Date(2024, 2, 29, 13, 45, 0, 0, time.UTC)))
		must(t, f.SetCellValue("Sheet1", "A6", 1234.5))
		builtin, err := f.NewStyle(&excelize.Style{NumFmt: 14})
		must(t, err)
		c1, err := f.NewStyle(&excelize.Style{CustomNumFmt: &custom})
		must(t, err)
		c2, err := f.NewStyle(&excelize.Style{CustomNumFmt: &mmm})
		must(t, err)
		c3, err := f.NewStyle(&excelize.Style{CustomNumFmt: &withTime})
		must(t, err)
		two, err := f.NewStyle(&excelize.Style{NumFmt: 4})
		must(t, err)
		must(t, f.SetCellStyle("Sheet1", "A1", "A2", builtin))
		must(t, f.SetCellStyle("Sheet1", "A3", "A3", c1))
		must(t, f.SetCellStyle("Sheet1", "A4", "A4", c2))
		must(t, f.SetCellStyle("Sheet1", "A5", "A5", c3))
		must(t, f.SetCellStyle("Sheet1", "A6", "A6", two))
	})
	_, objs := mustRun(t, b, "dates.xlsx", "", Limits{})
	want := "|  | A |\n| --- | --- |\n| 1 | 1917-05-29 |\n| 2 | 2017-05-29 |\n| 3 | 2017-05-29 |\n| 4 | 1999-12-31 |\n| 5 | 2024-02-29 13:45:00 |\n| 6 | 1,234.50 |"
	if len(objs) != 1 || objs[0].Data != want {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(texts(objs), "\n"), want)
	}
}

// TestNumbersWithoutFloatNoise: chart and legacy-sheet numbers print as
// Excel shows them.
func TestNumbersWithoutFloatNoise(t *testing.T) {
	for in, want := range map[string]string{
		"2.2999999999999998": "2.3", "0.30000000000000004": "0.3", "10": "10", "-1.5E-3": "-0.0015",
		"1234567.8900000001": "1234567.89", "1e300": "1e+300", "Q1": "Q1", "0": "0", "100000000000000000000": "100000000000000000000",
	} {
		if got := chartNumber(in); got != want {
			t.Errorf("chartNumber(%s) = %s, want %s", in, got, want)
		}
	}
	for _, c := range []struct {
		id   int
		code string
		want string
	}{
		{14, "", "date"}, {22, "", "datetime"}, {21, "", "time"}, {9, "", "percent"}, {0, "", ""}, {2, "", ""},
		{164, "dd/mm/yyyy", "date"}, {165, `[$-409]h:mm AM/PM`, "time"}, {166, `"day" 0`, ""}, {167, "[Red]#,##0", ""},
		{168, "yyyy-mm-dd hh:mm", "datetime"}, {169, "0.0%", "percent"}, {170, `mm\/dd\/yyyy\ hh:mm:ss\ AM/PM`, "datetime"},
	} {
		if got := numFmtKind(c.id, c.code); got != c.want {
			t.Errorf("numFmtKind(%d, %q) = %q, want %q", c.id, c.code, got, c.want)
		}
	}
	for _, c := range []struct {
		serial float64
		want   string
	}{{1, "1900-01-01"}, {59, "1900-02-28"}, {61, "1900-03-01"}, {43000, "2017-09-22"}, {6720, "1918-05-25"}} {
		if got := serialTime(c.serial, false).Format("2006-01-02"); got != c.want {
			t.Errorf("serial %g = %s, want %s", c.serial, got, c.want)
		}
	}
}

// TestNewFormatsSurviveDamage: cut and corrupted copies of the corpus's
// OpenDocument, RTF, Word and Excel files end in a result or an error,
// never in a panic (which Extract would report as an internal error).
func TestNewFormatsSurviveDamage(t *testing.T) {
	for _, c := range officeFormatCases {
		b := testcorpus.Read(t, "office", c.file)
		for i := 1; i <= 16; i++ {
			cut := b[:len(b)*i/17]
			bad := append([]byte(nil), b...)
			for j := i; j < len(bad); j += len(bad)/7 + i {
				bad[j] ^= byte(0x5a + i)
			}
			for _, d := range [][]byte{cut, bad} {
				_, _, err := run(t, d, filepath.Base(c.file), "", Limits{})
				if err != nil && strings.Contains(err.Error(), "internal error") {
					t.Errorf("%s (damaged %d): %v", c.file, i, err)
				}
			}
		}
	}
}

// TestXLSMatchesXLSX: the same workbook saved as Excel 97-2003 and as XLSX
// yields the same objects (text and references): numbers, dates and shared
// strings of BIFF8 are read as excelize reads SpreadsheetML.
func TestXLSMatchesXLSX(t *testing.T) {
	_, xls := mustRun(t, testcorpus.Read(t, "office", "xls", "readxl-clippy.xls"), "clippy.xls", "", Limits{})
	_, xlsx := mustRun(t, testcorpus.Read(t, "office", "dates", "readxl-clippy.xlsx"), "clippy.xlsx", "", Limits{})
	if len(xls) != len(xlsx) {
		t.Fatalf("%d objects from XLS, %d from XLSX", len(xls), len(xlsx))
	}
	for i := range xls {
		if xls[i].Data != xlsx[i].Data || xls[i].Ref != xlsx[i].Ref {
			t.Errorf("object %d:\nXLS  %+v %s\nXLSX %+v %s", i, xls[i].Ref, xls[i].Data, xlsx[i].Ref, xlsx[i].Data)
		}
	}
}

// TestRTFAsides: an RTF document's headers, footers and footnotes are read
// as parts of their own (as a Word document's are), out of the body text,
// where a footnote in the middle of a paragraph leaves the paragraph whole.
func TestRTFAsides(t *testing.T) {
	doc := `{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}` +
		`{\header \pard Quarterly report\par}{\footerl \pard Page footer left\par}` +
		`\pard Revenue grew{\footnote \pard Audited figures.} by eight percent.\par` +
		`\pard Second paragraph.\par}`
	_, objs, err := run(t, []byte(doc), "report.rtf", "application/rtf", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"document":  "Revenue grew by eight percent.\n\nSecond paragraph.",
		"header":    "Quarterly report",
		"footer":    "Page footer left",
		"footnotes": "Audited figures.",
	}
	got := map[string]string{}
	for _, o := range objs {
		got[o.Ref.Part] += o.Data
	}
	for part, text := range want {
		if got[part] != text {
			t.Errorf("part %s: %q, want %q", part, got[part], text)
		}
	}
}
