//go:build !wasip1

// The plugin host and the store run natively; this test drives the built
// plugin through them.

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image"
	"image/png"
	"os/exec"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/plugins/office/extract"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

var sample = GenerateArgs{
	Title: "Quarterly Report 2026",
	Blocks: []Block{
		{Type: "heading", Text: "Summary", Level: 1},
		{Type: "paragraph", Text: "Revenue in Zürich grew by twelve percent while costs stayed flat; the board approved the expansion into Geneva and Basel after a long discussion of risks, staffing and the timeline for the second half of the year."},
		{Type: "heading", Text: "Next steps", Level: 2},
		{Type: "list", Items: []string{"Hire two engineers", "Open the Geneva office"}},
		{Type: "list", Ordered: true, Items: []string{"Budget review", "Board vote"}},
		{Type: "table", Rows: [][]string{{"Region", "Revenue", "Growth"}, {"Zürich", "1200", "12%"}, {"Geneva", "800", "7%"}}},
		{Type: "paragraph", Text: "Prepared by the finance team."},
	},
}

// texts are the outline's texts in order; cells are its table's cells.
func texts(a GenerateArgs) (paras []string, cells [][]string) {
	paras = append(paras, a.Title)
	for _, b := range a.Blocks {
		switch b.Type {
		case "heading", "paragraph":
			paras = append(paras, b.Text)
		case "list":
			paras = append(paras, b.Items...)
		case "table":
			cells = b.Rows
		}
	}
	return paras, cells
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

func generate(t *testing.T, e env, a GenerateArgs) (FileResult, []byte) {
	t.Helper()
	var res FileResult
	if r := e.call(t, "generateDocument", a, &res); !r.OK {
		t.Fatalf("generateDocument %s: %+v", a.Format, r.Error)
	}
	if res.FileID == "" || !strings.HasPrefix(res.DocItem, "docItem:") || !strings.Contains(res.Summary, res.DocItem) || !strings.Contains(res.Summary, "file id: "+res.FileID) {
		t.Fatalf("result does not name both references: %+v", res)
	}
	_, data := e.content(t, res.FileID)
	return res, data
}

func TestGenerateDocument(t *testing.T) {
	e := newEnv(t, "docgen")
	paras, cells := texts(sample)

	t.Run("docx", func(t *testing.T) {
		a := sample
		a.Format = "docx"
		res, data := generate(t, e, a)
		if res.Name != "Quarterly Report 2026.docx" || res.MIMEType != docxMIME {
			t.Fatalf("file %s (%s)", res.Name, res.MIMEType)
		}
		_, objs, err := extract.Extract(context.Background(), bytes.NewReader(data), int64(len(data)), res.Name, res.MIMEType, extract.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var table string
		for _, o := range objs {
			if strings.HasPrefix(o.Data, "|") {
				table = o.Data
				continue
			}
			got = append(got, norm(o.Data))
		}
		if strings.Join(got, "\n") != strings.Join(paras, "\n") {
			t.Fatalf("paragraphs read back:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(paras, "\n"))
		}
		var rows [][]string
		for _, ln := range strings.Split(strings.TrimSpace(table), "\n") {
			if strings.Contains(ln, "---") {
				continue
			}
			var row []string
			for _, c := range strings.Split(strings.Trim(ln, "|"), "|") {
				row = append(row, strings.TrimSpace(c))
			}
			rows = append(rows, row)
		}
		if !equalRows(rows, cells) {
			t.Fatalf("table read back %q, want %q", rows, cells)
		}
	})

	t.Run("pdf", func(t *testing.T) {
		a := sample
		a.Format = "pdf"
		res, data := generate(t, e, a)
		checkWords(t, "pdftext", pdfText(t, data), paras, cells)
		if _, err := exec.LookPath("pdftotext"); err != nil {
			t.Fatal("pdftotext (poppler-utils) is missing: .ci/testdeps installs it")
		}
		cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		checkWords(t, "pdftotext", string(out), paras, cells)
		if res.MIMEType != "application/pdf" {
			t.Fatalf("MIME type %s", res.MIMEType)
		}
	})

	t.Run("pdf pages", func(t *testing.T) {
		long := GenerateArgs{Format: "pdf", Title: "Long", FileName: "long"}
		for i := range 120 {
			long.Blocks = append(long.Blocks, Block{Type: "paragraph", Text: strings.Repeat("Paragraph number "+itoa(i)+" of the long document. ", 3)})
		}
		_, data := generate(t, e, long)
		doc, err := pdftext.Open(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if doc.PageCount() < 4 {
			t.Fatalf("%d pages for 120 paragraphs", doc.PageCount())
		}
		last, err := doc.PageText(doc.PageCount())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(norm(last), "Paragraph number 119 of the long document.") {
			t.Fatalf("the last page does not end the document: %q", last)
		}
	})

	t.Run("csv", func(t *testing.T) {
		a := GenerateArgs{Format: "csv", FileName: "figures", Blocks: []Block{{Type: "table", Rows: [][]string{{"name", "note"}, {"a, b", `say "hi"`}, {"multi\nline", ""}}}}}
		res, data := generate(t, e, a)
		rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if res.Name != "figures.csv" || !equalRows(rows, a.Blocks[0].Rows) {
			t.Fatalf("%s: %q", res.Name, rows)
		}
	})

	t.Run("markdown", func(t *testing.T) {
		a := sample
		a.Format = "markdown"
		_, data := generate(t, e, a)
		md := string(data)
		for _, want := range []string{"# Quarterly Report 2026\n", "## Summary\n", "### Next steps\n", "- Hire two engineers\n", "2. Board vote\n", "| Region | Revenue | Growth |\n| --- | --- | --- |\n| Zürich | 1200 | 12% |"} {
			if !strings.Contains(md, want) {
				t.Fatalf("markdown lacks %q:\n%s", want, md)
			}
		}
	})

	t.Run("bridge", func(t *testing.T) {
		evs, err := e.wf.Events(context.Background(), e.p, e.workflow, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range evs {
			if ev.Type == workflows.EventFileCreated {
				var d workflows.FileCreatedData
				_ = json.Unmarshal(ev.Data, &d)
				if d.Tool != "generateDocument" || d.DocumentID == "" {
					t.Fatalf("fileCreated %+v", d)
				}
				n++
			}
		}
		if n < 5 {
			t.Fatalf("%d fileCreated events for 5 generated files", n)
		}
	})

	bad := []struct {
		name string
		args GenerateArgs
		msg  string
	}{
		{"no content", GenerateArgs{Format: "pdf"}, "no title and no blocks"},
		{"csv without table", GenerateArgs{Format: "csv", Blocks: []Block{{Type: "paragraph", Text: "x"}}}, "needs a table"},
		{"csv with two tables", GenerateArgs{Format: "csv", Blocks: []Block{{Type: "table", Rows: [][]string{{"a"}}}, {Type: "table", Rows: [][]string{{"b"}}}}}, "one table"},
		{"heading without text", GenerateArgs{Format: "docx", Blocks: []Block{{Type: "heading"}}}, "needs text"},
		{"empty list", GenerateArgs{Format: "markdown", Blocks: []Block{{Type: "list"}}}, "needs items"},
	}
	for _, tc := range bad {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			r := e.call(t, "generateDocument", tc.args, nil)
			if r.OK || r.Error == nil || !strings.Contains(r.Error.Message, tc.msg) {
				t.Fatalf("result %+v, want an error saying %q", r, tc.msg)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") {
			return false
		}
	}
	return true
}

// checkWords: every paragraph's words read back in order, every table
// cell's words present.
func checkWords(t *testing.T, reader, text string, paras []string, cells [][]string) {
	t.Helper()
	all := norm(text)
	for _, p := range paras {
		if !strings.Contains(all, norm(p)) {
			t.Errorf("%s: %q not read back in order from:\n%s", reader, p, text)
		}
	}
	for _, row := range cells {
		for _, c := range row {
			if !strings.Contains(all, c) {
				t.Errorf("%s: table cell %q not read back", reader, c)
			}
		}
	}
}

func TestEditDocument(t *testing.T) {
	e := newEnv(t, "docgen")
	md := GenerateArgs{Format: "markdown", Title: "Plan", Blocks: []Block{
		{Type: "heading", Text: "Goals"}, {Type: "paragraph", Text: "Ship version one."},
		{Type: "heading", Text: "Risks"}, {Type: "paragraph", Text: "Staffing is thin."},
	}}
	mdRes, _ := generate(t, e, md)
	docx := sample
	docx.Format = "docx"
	docxRes, _ := generate(t, e, docx)
	csvRes, _ := generate(t, e, GenerateArgs{Format: "csv", FileName: "t", Blocks: []Block{{Type: "table", Rows: [][]string{{"a", "b"}, {"1", "2"}}}}})

	t.Run("markdown section", func(t *testing.T) {
		var res FileResult
		if r := e.call(t, "editDocument", EditArgs{File: mdRes.DocItem, Mode: "replaceSection", Section: "Goals", Content: "Ship version two."}, &res); !r.OK {
			t.Fatalf("%+v", r.Error)
		}
		_, data := e.content(t, res.FileID)
		s := string(data)
		if !strings.Contains(s, "## Goals\n\nShip version two.\n\n## Risks") || strings.Contains(s, "version one") || res.FileID == mdRes.FileID || res.DocItem == "" {
			t.Fatalf("edited %+v:\n%s", res, s)
		}
	})

	t.Run("docx paragraph text", func(t *testing.T) {
		var res FileResult
		if r := e.call(t, "editDocument", EditArgs{File: docxRes.FileID, Mode: "replaceText", Find: "twelve percent", Replace: "fifteen percent"}, &res); !r.OK {
			t.Fatalf("%+v", r.Error)
		}
		item, data := e.content(t, res.FileID)
		_, objs, err := extract.Extract(context.Background(), bytes.NewReader(data), int64(len(data)), item.Name, item.MIMEType, extract.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, o := range objs {
			all = append(all, o.Data)
		}
		joined := strings.Join(all, "\n")
		if !strings.Contains(joined, "grew by fifteen percent while") || strings.Contains(joined, "twelve") || !strings.Contains(joined, "Open the Geneva office") {
			t.Fatalf("edited DOCX reads:\n%s", joined)
		}
		// The heading keeps its style: the extractor still sees it as a heading.
		var r2 FileResult
		if r := e.call(t, "editDocument", EditArgs{File: res.FileID, Mode: "replaceParagraph", Find: "Next steps", Content: "What comes next"}, &r2); !r.OK {
			t.Fatalf("%+v", r.Error)
		}
		item, data = e.content(t, r2.FileID)
		idx, _, err := extract.Extract(context.Background(), bytes.NewReader(data), int64(len(data)), item.Name, item.MIMEType, extract.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(idx.Structure); !strings.Contains(string(b), "What comes next") {
			t.Fatalf("the renamed heading is not in the structure: %s", b)
		}
	})

	bad := []struct {
		name string
		args EditArgs
		code string
	}{
		{"text not found", EditArgs{File: mdRes.FileID, Mode: "replaceText", Find: "nowhere", Replace: "x"}, "invalid_edit"},
		{"unknown section", EditArgs{File: mdRes.FileID, Mode: "replaceSection", Section: "Budget", Content: "x"}, "invalid_edit"},
		{"ambiguous paragraph", EditArgs{File: docxRes.FileID, Mode: "replaceParagraph", Find: "Geneva", Content: "x"}, "invalid_edit"},
		{"paragraph out of range", EditArgs{File: docxRes.FileID, Mode: "replaceParagraph", Paragraph: 999, Content: "x"}, "invalid_edit"},
		{"a CSV edit that changes the columns", EditArgs{File: csvRes.FileID, Mode: "replaceText", Find: "1,2", Replace: "1,2,3"}, "invalid_edit"},
		{"a PDF", EditArgs{File: mustPDF(t, e), Mode: "append", Content: "x"}, "unsupported"},
		{"an unknown file", EditArgs{File: "nope", Mode: "append", Content: "x"}, "not_found"},
	}
	for _, tc := range bad {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			r := e.call(t, "editDocument", tc.args, nil)
			if r.OK || r.Error == nil || r.Error.Code != tc.code {
				t.Fatalf("result %+v, want error code %s", r, tc.code)
			}
		})
	}
}

func mustPDF(t *testing.T, e env) string {
	res, _ := generate(t, e, GenerateArgs{Format: "pdf", Title: "x", FileName: "x"})
	return res.FileID
}

func TestCreateChart(t *testing.T) {
	e := newEnv(t, "docgen")
	labels := []string{"Q1", "Q2", "Q3", "Q4"}
	tests := []struct {
		name string
		args ChartArgs
	}{
		{"bar", ChartArgs{Type: "bar", Title: "Revenue", Labels: labels, Series: []Series{{Values: []float64{3, 5, 4, 7}}}, Width: 640, Height: 400}},
		{"line with two series", ChartArgs{Type: "line", Title: "Trend", Labels: labels, Series: []Series{{Name: "2025", Values: []float64{1, 2, 3, 4}}, {Name: "2026", Values: []float64{2, 3, 5, 8}}}, Width: 800, Height: 300}},
		{"pie", ChartArgs{Type: "pie", Title: "Share", Labels: []string{"A", "B", "C"}, Series: []Series{{Values: []float64{50, 30, 20}}}, Width: 500, Height: 500}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res FileResult
			if r := e.call(t, "createChart", tc.args, &res); !r.OK {
				t.Fatalf("%+v", r.Error)
			}
			item, data := e.content(t, res.FileID)
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != tc.args.Width || b.Dy() != tc.args.Height || item.MIMEType != "image/png" {
				t.Fatalf("%s %v, want %dx%d PNG", item.MIMEType, b, tc.args.Width, tc.args.Height)
			}
			if n := colours(img); n < 8 {
				t.Fatalf("only %d colours: the chart is blank", n)
			}
		})
	}
	bad := []ChartArgs{
		{Type: "bar", Labels: labels, Series: []Series{{Values: []float64{1, 2}}}},
		{Type: "pie", Labels: []string{"a"}, Series: []Series{{Values: []float64{-1}}}},
		{Type: "bar", Labels: labels, Series: []Series{{Values: []float64{0, 0, 0, 0}}}},
		{Type: "bar", Labels: labels, Series: []Series{{Values: []float64{1, 2, 3, 4}}, {Values: []float64{1, 2, 3, 4}}}},
	}
	for i, a := range bad {
		if r := e.call(t, "createChart", a, nil); r.OK || r.Error.Code != "invalid_arguments" {
			t.Fatalf("bad chart %d: %+v", i, r)
		}
	}
}

func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

func TestGenerateImage(t *testing.T) {
	e := newEnv(t, "docgen")
	var res FileResult
	if r := e.call(t, "generateImage", ImageArgs{Prompt: "a lighthouse at dawn", Size: "256x256"}, &res); !r.OK {
		t.Fatalf("%+v", r.Error)
	}
	item, data := e.content(t, res.FileID)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 256 || item.Name != "a lighthouse at dawn.png" || res.DocItem == "" {
		t.Fatalf("%s %v %+v", item.Name, b, res)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || reqs[0].Image == nil || reqs[0].Image.Prompt != "a lighthouse at dawn" {
		t.Fatalf("provider requests %+v", reqs)
	}
	tot, err := e.db.UsageTotals(context.Background(), e.p, e.workflow)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Calls != 1 || tot.Cost != 4*money.Rappen {
		t.Fatalf("usage %+v", tot)
	}
}

// pdfText is the text of every page of a generated PDF as our own
// extractor reads it, a line break after each page.
func pdfText(t *testing.T, data []byte) string {
	t.Helper()
	doc, err := pdftext.Open(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for n := 1; n <= doc.PageCount(); n++ {
		txt, err := doc.PageText(n)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(txt + "\n")
	}
	return out.String()
}
