package extract

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/agenthost/agenthost/pdk/content"
)

func xlsxBytes(t *testing.T, build func(f *excelize.File)) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	build(f)
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestXLSXValues(t *testing.T) {
	b := xlsxBytes(t, func(f *excelize.File) {
		must(t, f.SetSheetName("Sheet1", "Q4 Sales"))
		for c, v := range map[string]any{"A1": "Name", "B1": "Amount", "C1": "Share", "D1": "Done",
			"A2": "Widgets", "B2": 1234.5678, "C2": 0.25, "D2": true, "A3": "Gad|gets", "B3": 7} {
			must(t, f.SetCellValue("Q4 Sales", c, v))
		}
		two, err := f.NewStyle(&excelize.Style{NumFmt: 4}) // #,##0.00
		must(t, err)
		pct, err := f.NewStyle(&excelize.Style{NumFmt: 9}) // 0%
		must(t, err)
		must(t, f.SetCellStyle("Q4 Sales", "B2", "B3", two))
		must(t, f.SetCellStyle("Q4 Sales", "C2", "C2", pct))
		must(t, f.AddComment("Q4 Sales", excelize.Comment{Cell: "B2", Author: "Bob", Text: "Check this"}))
		must(t, f.AddPictureFromBytes("Q4 Sales", "F4", &excelize.Picture{Extension: ".png", File: []byte(pngOf(t, 12, 8)),
			Format: &excelize.GraphicOptions{AltText: "Trend"}}))
		_, err = f.NewSheet("Sparse")
		must(t, err)
		must(t, f.SetCellValue("Sparse", "A1", "corner"))
		must(t, f.SetCellValue("Sparse", "Z100", "far"))
		must(t, f.SetCellValue("Sparse", "M50", "middle"))
		must(t, f.SetCellValue("Sparse", "F20", "f"))
		must(t, f.SetCellValue("Sparse", "Q70", "q"))
		must(t, f.SetSheetVisible("Sparse", false))
	})
	idx, objs := mustRun(t, b, "sales.xlsx", "", Limits{})
	if len(objs) != 4 {
		t.Fatalf("%d objects: %q", len(objs), texts(objs))
	}
	pic := objs[2]
	objs = slices.Delete(objs, 2, 3)
	if pic.ContentType != content.Image || pic.Ref.Location != "sheet:Q4 Sales!F4" || pic.Ref.Label != "Trend" || pic.Metadata["dimensions"] != "12x8" {
		t.Errorf("picture %+v", pic)
	}
	sales := objs[0]
	wantTable := "|  | A | B | C | D |\n| --- | --- | --- | --- | --- |\n" +
		"| 1 | Name | Amount | Share | Done |\n| 2 | Widgets | 1,234.57 | 25% | TRUE |\n| 3 | Gad\\|gets | 7.00 |  |  |"
	if sales.Data != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", sales.Data, wantTable)
	}
	if sales.Ref.SheetName != "Q4 Sales" || sales.Ref.Location != "sheet:Q4 Sales!A1:D3" {
		t.Errorf("ref %+v", sales.Ref)
	}
	comment := objs[1]
	if comment.Data != "B2 (Bob): Check this" || comment.Ref.Part != "comments" || comment.Ref.Location != "sheet:Q4 Sales!B2" {
		t.Errorf("comment %+v", comment)
	}
	sparse := objs[2]
	if sparse.Data != "A1=corner\nF20=f\nM50=middle\nQ70=q\nZ100=far" || sparse.Ref.Location != "sheet:Sparse!A1:Z100" || sparse.Metadata["hidden"] != true {
		t.Errorf("sparse %+v", sparse)
	}
	sheets := idx.Structure["sheets"].([]map[string]any)
	if len(sheets) != 2 || sheets[1]["hidden"] != true || sheets[0]["range"] != "A1:D3" || sheets[0]["cells"] != 10 || sheets[0]["images"] != 1 {
		t.Errorf("sheets %v", sheets)
	}
}

// TestXLSXBlocks: a large sheet comes in blocks whose ranges follow each
// other and together hold every row once.
func TestXLSXBlocks(t *testing.T) {
	const rows = 3000
	b := xlsxBytes(t, func(f *excelize.File) {
		sw, err := f.NewStreamWriter("Sheet1")
		must(t, err)
		must(t, sw.SetRow("A1", []any{"id", "name", "value"}))
		for r := 2; r <= rows; r++ {
			must(t, sw.SetRow(fmt.Sprintf("A%d", r), []any{r, fmt.Sprintf("row %d", r), r * 3}))
		}
		must(t, sw.Flush())
	})
	_, objs := mustRun(t, b, "big.xlsx", "", Limits{BlockBytes: 4096})
	if len(objs) < 10 {
		t.Fatalf("%d blocks for %d rows", len(objs), rows)
	}
	next := 1
	for i, o := range objs {
		var first, last int
		if _, err := fmt.Sscanf(o.Ref.Location, "sheet:Sheet1!A%d:C%d", &first, &last); err != nil {
			t.Fatalf("block %d location %q: %v", i, o.Ref.Location, err)
		}
		if first != next {
			t.Errorf("block %d starts at row %d, want %d", i, first, next)
		}
		if !strings.Contains(o.Data, fmt.Sprintf("| %d | %d | row %d | %d |", last, last, last, last*3)) && last != 1 {
			t.Errorf("block %d lacks its last row %d", i, last)
		}
		if i > 0 && o.Metadata["header"] != "A=id; B=name; C=value" {
			t.Errorf("block %d header %v", i, o.Metadata["header"])
		}
		next = last + 1
	}
	if next != rows+1 {
		t.Errorf("blocks end at row %d", next-1)
	}
}

// TestXLSXStrings: inline strings, rich shared strings and a shared
// strings part with a non-standard name (found through the workbook's
// relationships) all resolve.
func TestXLSXStrings(t *testing.T) {
	ns := `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` + nsR
	b := zipOf(t,
		entry{name: "[Content_Types].xml", body: `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/SharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`},
		entry{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "xl/workbook.xml"})},
		entry{name: "xl/workbook.xml", body: `<workbook ` + ns + `><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		entry{name: "xl/_rels/workbook.xml.rels", body: rels([3]string{"rId1", "worksheet", "worksheets/sheet1.xml"}, [3]string{"rId2", "sharedStrings", "SharedStrings.xml"})},
		entry{name: "xl/SharedStrings.xml", body: `<sst ` + ns + ` count="2" uniqueCount="2"><si><t>plain</t></si><si><r><t>Rich </t></r><r><rPr><b/></rPr><t>text</t></r></si></sst>`},
		entry{name: "xl/worksheets/sheet1.xml", body: `<worksheet ` + ns + `><sheetData>` +
			`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>inline</t></is></c></row>` +
			`<row r="2"><c r="A2"><v>42</v></c><c r="B2" t="b"><v>0</v></c><c r="C2" t="str"><f>A2&amp;"!"</f><v>42!</v></c></row>` +
			`</sheetData></worksheet>`},
	)
	_, objs := mustRun(t, b, "strings.xlsx", "", Limits{})
	want := "|  | A | B | C |\n| --- | --- | --- | --- |\n| 1 | plain | Rich text | inline |\n| 2 | 42 | FALSE | 42! |"
	if len(objs) != 1 || objs[0].Data != want {
		t.Fatalf("objects %q, want %q", texts(objs), want)
	}
	if objs[0].ContentType != content.Text || objs[0].Ref.SheetName != "Data" {
		t.Errorf("object %+v", objs[0])
	}
}
