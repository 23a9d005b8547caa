package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// nestedWant is the table of lo-nested-table in every format.
const nestedWant = "| Pass | Canton | Stations |\n| --- | --- | --- |\n" +
	"| Gotthard | Uri | Two stations:<br>Station · Altitude<br>Hospental · 1452 m<br>Gütsch · 2283 m<br>Readings every ten minutes. |\n" +
	"| Grimsel | Bern | Grimsel Hospiz · 1980 m<br>Oberaar · (Wind · since 1994; Snow · since 2003) |"

// TestNestedTables: a table in a table's cell (LibreOffice's DOCX, ODT
// and Word 97-2003 saves of one document) is written into its cell a row per
// line, its cells joined by " · ", after and before the cell's own
// paragraphs; a table nested a level deeper stays inside its cell, in
// parentheses. The three formats give the same table, which says how many
// tables it holds.
func TestNestedTables(t *testing.T) {
	for _, file := range []string{"lo-nested-table.docx", "lo-nested-table.doc", "lo-nested-table.odt"} {
		t.Run(file, func(t *testing.T) {
			idx, objs := mustRun(t, testcorpus.Read(t, "office", "nested", file), file, "", Limits{})
			got := texts(objs)
			if len(got) != 3 || got[0] != "Passes and their weather stations." || got[1] != nestedWant || got[2] != "Text after the table." {
				t.Fatalf("objects %q, want the table as\n%s", got, nestedWant)
			}
			if md := objs[1].Metadata; md["table"] != 1 || md["rows"] != 3 || md["cols"] != 3 || md["nestedTables"] != 3 || idx.Structure["tables"] != 1 {
				t.Errorf("table metadata %v, structure %v", md, idx.Structure)
			}
		})
	}
}

// TestNestedTableWord: a nested table of a document from elsewhere
// (textract's test DOCX) reads the same way.
func TestNestedTableWord(t *testing.T) {
	_, objs := mustRun(t, testcorpus.Read(t, "office", "docx", "textract-paragraphs_and_tables.docx"), "t.docx", "", Limits{})
	for _, o := range objs {
		if o.Metadata["table"] == 1 {
			if !strings.Contains(o.Data, "|  | INNER TABLE!<br>Inner 1,1 · Inner 1,2<br>Inner 2,1 · Inner 1,2 |  |") || o.Metadata["nestedTables"] != 1 {
				t.Errorf("table %q, metadata %v", o.Data, o.Metadata)
			}
			return
		}
	}
	t.Fatalf("no table in %q", texts(objs))
}

func TestNestedTableText(t *testing.T) {
	for _, c := range []struct {
		name string
		rows [][]string
		want string
	}{
		{"rows", [][]string{{"a", "b"}, {"c", "d"}}, "a · b\nc · d"},
		{"empty cells and rows left out", [][]string{{"", "b", " "}, {"", ""}, {"c"}}, "b\nc"},
		{"a cell of several lines in parentheses", [][]string{{"x", "first\n\nsecond"}}, "x · (first; second)"},
		{"nothing", [][]string{{""}, nil}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := nestedTableText(c.rows); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// docMark is a paragraph of a synthetic Word story: its text, the mark
// that ends it and the mark's table properties.
type docMark struct {
	text string
	mark rune
	p    wordPara
}

// docStory lays out marks as a story with the paragraph properties Word's
// FKPs would give (one uncompressed-free, single-byte piece).
func docStory(marks []docMark) ([]rune, *wordMarks) {
	var story []rune
	m := &wordMarks{}
	for _, d := range marks {
		story = append(story, []rune(d.text)...)
		cp := len(story)
		story = append(story, d.mark)
		if d.p.inTable {
			m.runs = append(m.runs, wordRun{start: cp, end: cp + 1, wordPara: d.p})
		}
	}
	m.pieces = []wordPiece{{cp0: 0, cp1: len(story), compressed: true}}
	return story, m
}

// TestDOCNestedMarksHostile: table depths and inner-cell marks that do not
// fit (a depth of two billion, inner rows with no table open, a cell mark
// inside a nested table, a story ending inside nested tables) lose no text
// and open no more tables than Word allows.
func TestDOCNestedMarksHostile(t *testing.T) {
	in := func(depth int, cell, row bool) wordPara {
		return wordPara{inTable: true, depth: depth, innerCell: cell, innerTtp: row}
	}
	cases := []struct {
		name  string
		marks []docMark
	}{
		{"inner row with nothing open", []docMark{{"alpha", '\r', in(2, true, true)}, {"beta", '\r', wordPara{}}}},
		{"deepest first", []docMark{{"alpha", '\r', in(maxTableDepth, true, false)}, {"beta", 0x07, in(1, false, false)}, {"", 0x07, wordPara{inTable: true, rowTp: true, depth: 1}}}},
		{"ends inside nested tables", []docMark{{"alpha", 0x07, in(1, false, false)}, {"beta", '\r', in(2, false, false)}, {"gamma", '\r', in(3, true, false)}}},
		{"page break inside a nested table", []docMark{{"alpha", '\r', in(2, true, false)}, {"beta", 0x0c, in(2, false, false)}, {"gamma", '\r', in(2, true, true)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			story, marks := docStory(c.marks)
			blocks := wordBlocks(story, 0, marks)
			var all strings.Builder
			for _, b := range blocks {
				all.WriteString(b.text + " ")
				for _, r := range b.rows {
					all.WriteString(strings.Join(r, " ") + " ")
				}
			}
			for _, m := range c.marks {
				if m.text != "" && !strings.Contains(all.String(), m.text) {
					t.Errorf("lost %q: %q", m.text, all.String())
				}
			}
		})
	}
	// A depth past Word's 63 is cut to maxTableDepth, a negative change
	// stops at 0.
	page := make([]byte, wordFkpSize)
	grpprl := []byte{0, 0, 0x49, 0x66, 0xFF, 0xFF, 0xFF, 0x7F, 0x16, 0x24, 0x01}
	page[10] = byte((len(grpprl) + 1) / 2)
	copy(page[11:], grpprl)
	if p := papxFlags(page, 10); !p.inTable || p.depth != maxTableDepth {
		t.Errorf("huge depth: %+v", p)
	}
	grpprl = []byte{0, 0, 0x4A, 0x66, 0x00, 0x00, 0x00, 0x80, 0x16, 0x24, 0x01}
	copy(page[11:], grpprl)
	if p := papxFlags(page, 10); !p.inTable || p.depth != 0 {
		t.Errorf("negative depth change: %+v", p)
	}
}

// TestNestedTableHTML: LibreOffice's HTML save of the same document gives
// the same table in the page's Markdown.
func TestNestedTableHTML(t *testing.T) {
	_, objs := mustRun(t, testcorpus.Read(t, "office", "nested", "lo-nested-table.html"), "lo-nested-table.html", "text/html", Limits{})
	got := strings.Join(texts(objs), "\n\n")
	if !strings.Contains(got, nestedWant) || !strings.Contains(got, "Passes and their weather stations.") || !strings.Contains(got, "Text after the table.") {
		t.Fatalf("got\n%s\nwant the table as\n%s", got, nestedWant)
	}
}
