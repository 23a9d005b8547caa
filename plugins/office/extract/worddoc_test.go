package extract

import (
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
