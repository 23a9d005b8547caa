package extract

import (
	"archive/zip"
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// embeddedCorpus are the corpus files of embedded and imported documents,
// Excel 5.0/95 and RTF beyond the BMP.
var embeddedCorpus = [][2]string{
	{"altchunk", "lo-altchunk.docx"}, {"embedded", "lo-ole-objects.pptx"}, {"embedded", "lo-embedded-workbook.docx"},
	{"embedded", "lo-embedded-workbook.odt"}, {"embedded", "lo-sheet-chart.ods"}, {"odp", "lo-survey-master-chart.odp"},
	{"odp", "lo-ole-objects.odp"}, {"xls", "gn-biff5-stations.xls"}, {"rtf", "lo-astral.rtf"},
}

// TestEmbeddedSurviveDamage: these files cut short, with bytes flipped,
// and (for packages) with each embedded or imported part damaged inside
// an otherwise intact package, end in a result or an error, never a
// panic (which Extract reports as an internal error).
func TestEmbeddedSurviveDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 3))
	check := func(name string, b []byte) {
		t.Helper()
		if _, _, err := run(t, b, name, "", Limits{}); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Errorf("%s: %v", name, firstLine(err.Error()))
		}
	}
	for _, f := range embeddedCorpus {
		b := testcorpus.Read(t, "office", f[0], f[1])
		for i := 1; i <= 8; i++ {
			check(f[1], b[:len(b)*i/9])
			bad := bytes.Clone(b)
			for j := i; j < len(bad); j += len(bad)/9 + i {
				bad[j] ^= byte(0x5a + i)
			}
			check(f[1], bad)
		}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			continue // not a package
		}
		for _, target := range zr.File {
			n := target.Name
			if !strings.Contains(n, "embeddings/") && !strings.Contains(n, "afchunk") && !strings.HasPrefix(n, "Object ") {
				continue
			}
			for range 5 {
				check(f[1]+"!"+n, rezip(t, zr, n, func(p []byte) []byte {
					switch r.IntN(3) {
					case 0:
						return p[:r.IntN(len(p)+1)]
					case 1:
						for range 1 + r.IntN(30) {
							if len(p) > 0 {
								p[r.IntN(len(p))] ^= byte(1 + r.IntN(255))
							}
						}
					case 2:
						at := r.IntN(len(p) + 1)
						return append(p[:at:at], bytes.Repeat([]byte("<x>"), r.IntN(400))...)
					}
					return p
				}))
			}
		}
	}
}

// rezip copies a zip with one entry's bytes changed by f.
func rezip(t *testing.T, zr *zip.Reader, name string, f func([]byte) []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range zr.File {
		rc, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if e.Name == name {
			b = f(b)
		}
		w, err := zw.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
