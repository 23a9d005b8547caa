package pdftext

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestFragDebug(t *testing.T) {
	spec := os.Getenv("PDFTEXT_FRAGS")
	if spec == "" {
		t.Skip()
	}
	parts := strings.Split(spec, ":")
	n, _ := strconv.Atoi(parts[1])
	d, err := openCorpus(t, corpusDir(t), parts[0])
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := d.pageGlyphs(n, nil)
	for _, l := range groupLines(buildFrags(g, 0)) {
		var sb strings.Builder
		hit := false
		for _, f := range l.frags {
			if strings.Contains(string(f.text), parts[2]) {
				hit = true
			}
			fmt.Fprintf(&sb, " [%q x%.1f-%.1f y%.2f s%.1f sp%v]", f.text, f.x0, f.x1, f.y, f.size, f.spaceAfter)
		}
		if hit {
			fmt.Println(sb.String())
		}
	}
}
