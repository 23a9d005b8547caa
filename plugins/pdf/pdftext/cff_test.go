package pdftext

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// TestCFFEncodings reads the built-in encoding of every CFF font program in
// the corpus: the names found must be glyph names we can turn into text,
// and every truncation of a program must fail cleanly.
func TestCFFEncodings(t *testing.T) {
	dir, names := corpusFiles(t)
	programs := 0
	for _, name := range names {
		// pdfcpu's reader, which holds every object, to visit them all.
		data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := openContext(bytes.NewReader(data), "")
		if err != nil {
			continue
		}
		for _, e := range d.xref.(*model.XRefTable).Table {
			if e == nil {
				continue
			}
			sd, ok := e.Object.(types.StreamDict)
			if !ok || d.name(sd.Dict["Subtype"]) != "Type1C" {
				continue
			}
			data, err := d.streamData(sd)
			if err != nil {
				continue
			}
			programs++
			var enc [256]string
			if !cffEncoding(data, &enc) {
				continue
			}
			for c, n := range enc {
				if n != "" && glyphText(n) == "" && n != ".notdef" {
					t.Errorf("%s: code %d is %q, not a known glyph", name, c, n)
				}
			}
			if programs <= 3 {
				for cut := 0; cut < len(data); cut += 1 + len(data)/200 {
					var e2 [256]string
					cffEncoding(data[:cut], &e2)
				}
			}
		}
	}
	if programs == 0 {
		t.Fatal("no CFF programs in the corpus")
	}
	t.Logf("%d CFF programs", programs)
}
