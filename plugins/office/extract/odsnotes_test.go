package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestODSCellComments: a spreadsheet cell's comments (office:annotation,
// as LibreOffice Calc saves them inside the cell) are kept as the sheet's
// comments object, each by its cell and author, as an XLSX sheet's are;
// the cells' values stay their own. Before, the annotations were skipped
// with every element a cell's walk did not know.
func TestODSCellComments(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "ods", "annotations.ods"), "annotations.ods", "", Limits{})
	var comments, cells string
	for _, o := range objs {
		if o.Ref.Part == "comments" {
			comments += o.Data
			if o.Ref.Location != "sheet:Budget!B2,C3" {
				t.Errorf("comments at %q", o.Ref.Location)
			}
		} else {
			cells += o.Data + "\n"
		}
	}
	for _, s := range []string{"B2 (Marta Keller): Quote from Harbour Works, valid until June.", "C3: Board approval pending;\nsecond offer requested."} {
		if !strings.Contains(comments, s) {
			t.Errorf("%q not in the comments %q", s, comments)
		}
	}
	if strings.Contains(cells, "Harbour Works") || strings.Contains(cells, "2024-03-04") || !strings.Contains(cells, "120000") {
		t.Errorf("the cells: %q", cells)
	}
	sheets, _ := idx.Structure["sheets"].([]map[string]any)
	if len(sheets) != 1 || sheets[0]["comments"] != 2 {
		t.Errorf("sheets %v", idx.Structure["sheets"])
	}
}
