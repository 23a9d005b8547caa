package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestEPUB: an EPUB's chapters are read in spine order (not the
// manifest's), each object naming its chapter, the table of contents
// giving the sections (testdata/corpus/office/epub, built by
// make-epub.py from Candide). Before, EPUB had no extractor.
func TestEPUB(t *testing.T) {
	for _, name := range []string{"candide-3-chapters.epub", "book"} {
		t.Run(name, func(t *testing.T) {
			b := testcorpus.Read(t, "office", "epub", "candide-3-chapters.epub")
			idx, objs := mustRun(t, b, name, "", Limits{})
			if idx.MIMEType != mimeEPUB || idx.Structure["title"] != "Candide, ou l'Optimisme" || idx.Structure["creator"] != "Voltaire" || idx.Structure["chapters"] != 3 {
				t.Errorf("index %s %v", idx.MIMEType, idx.Structure)
			}
			all := strings.Join(texts(objs), "\n")
			i1 := strings.Index(all, "Il y avait en Vestphalie")
			i2 := strings.Index(all, "CHAPITRE II")
			i3 := strings.Index(all, "CHAPITRE III.")
			if i1 < 0 || i2 < i1 || i3 < i2 {
				t.Errorf("chapters not in spine order: %d %d %d", i1, i2, i3)
			}
			secs, _ := idx.Structure["sections"].([]map[string]any)
			if len(secs) != 3 || !strings.HasPrefix(secs[1]["title"].(string), "CHAPITRE II") || secs[1]["part"] != "OEBPS/text/chapter2.xhtml" {
				t.Errorf("sections %v", secs)
			}
			last := objs[len(objs)-1]
			if last.Ref.Part != "OEBPS/text/chapter3.xhtml" || last.Ref.Location != "chapter:3" || !strings.HasPrefix(last.Ref.Label, "CHAPITRE III.") {
				t.Errorf("last object's ref %+v", last.Ref)
			}
		})
	}
}
