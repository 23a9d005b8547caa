package extract

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestDOCTables: a Word 97-2003 table comes out as DOCX tables do, one
// Markdown object whose rows keep their cells together (empty cells and
// multi-paragraph cells included), told apart from the paragraphs around
// it by the paragraph properties; a real Word document's 40 tables alike.
func TestDOCTables(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "doc", "lo-stations-table.doc"), "t.doc", "", Limits{})
	want := "| Station | Altitude | Remark |\n| --- | --- | --- |\n| Jungfraujoch | 3571 m |  |\n| Säntis |  | first line<br>second line |"
	if len(objs) != 3 || objs[1].Data != want {
		t.Fatalf("objects %q, want the table as %q", texts(objs), want)
	}
	md := objs[1].Metadata
	if md["table"] != 1 || md["rows"] != 3 || md["cols"] != 3 || md["lastParagraph"] != 8 || idx.Structure["tables"] != 1 {
		t.Errorf("table metadata %v, structure %v", md, idx.Structure)
	}
	idx, objs = mustRun(t, testcorpus.Read(t, "office", "doc", "mscfb-hurley-hcpr.doc"), "h.doc", "", Limits{})
	tables := 0
	for _, o := range objs {
		if o.Metadata["table"] != nil {
			tables++
			if !strings.HasPrefix(o.Data, "| ") || !strings.Contains(o.Data, "\n| --- |") {
				t.Errorf("table object %d is not a Markdown table: %q", tables, o.Data)
			}
		}
	}
	if tables != 40 || idx.Structure["tables"] != 40 {
		t.Errorf("%d table objects, structure %v; want 40", tables, idx.Structure["tables"])
	}
}

// TestDOCTablesWithoutProperties: when the paragraph property table is
// out of reach (damaged), a Word table's cells come out as paragraphs:
// no text is lost and nothing fails.
func TestDOCTablesWithoutProperties(t *testing.T) {
	b := bytes.Clone(testcorpus.Read(t, "office", "doc", "lo-stations-table.doc"))
	fib := bytes.Index(b, []byte{0xEC, 0xA5}) // wIdent opens the WordDocument stream
	if fib < 0 {
		t.Fatal("no FIB")
	}
	binary.LittleEndian.PutUint32(b[fib+fibFcPlcfBtePapx:], 0x7FFFFFF0)
	idx, objs := mustRun(t, b, "t.doc", "", Limits{})
	all := strings.Join(texts(objs), "\n\n")
	for _, w := range []string{"Station readings before the table.", "Jungfraujoch", "3571 m", "Säntis", "first line", "second line", "Text after the table."} {
		if !strings.Contains(all, w) {
			t.Errorf("lost %q: %q", w, all)
		}
	}
	if strings.Contains(all, "|") || idx.Structure["tables"] != 0 {
		t.Errorf("a table without paragraph properties: %q %v", all, idx.Structure)
	}
}
