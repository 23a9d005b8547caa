package pdftext

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// The benchmarks measure with their own loops (make bench runs them with
// -benchtime 1x) and print FIGURE lines. Poppler's tools, where installed,
// run on the same files in the same run, so the ratios compare like with
// like on whatever machine runs them.

// benchRuns is how often each timed loop repeats; figures are medians.
const benchRuns = 3

// BenchmarkTextSimilarity: the corpus mean of the per-page similarity to
// pdftotext -layout (see similarity).
func BenchmarkTextSimilarity(b *testing.B) {
	for range b.N {
		r := corpusSimilarity(b)
		figure.Report("pdf.text.similarity", r.mean, "ratio")
		b.Logf("physical order (columns side by side, as pdftotext -layout): %.4f", r.meanPhysical)
	}
}

type corpusPDF struct {
	path  string
	data  []byte
	pages int
}

// extractable lists the corpus PDFs that open, with their bytes.
func extractable(b *testing.B) []corpusPDF {
	dir, names := corpusFiles(b)
	var out []corpusPDF
	for _, name := range names {
		path := filepath.Join(dir, name+".pdf")
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		d, err := Open(bytes.NewReader(data))
		if err != nil {
			continue
		}
		out = append(out, corpusPDF{path: path, data: data, pages: d.PageCount()})
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkExtract: every page of every corpus PDF that opens, from bytes in
// memory to page text (Open included), natively; and pdftotext -layout on
// the same files, each one process writing to a pipe we discard.
func BenchmarkExtract(b *testing.B) {
	files := extractable(b)
	total := 0
	for _, f := range files {
		total += f.pages
	}
	for range b.N {
		var ours []time.Duration
		for range benchRuns {
			start := time.Now()
			for _, f := range files {
				d, err := Open(bytes.NewReader(f.data))
				if err != nil {
					b.Fatal(err)
				}
				for p := 1; p <= d.PageCount(); p++ {
					if _, err := d.PageText(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			ours = append(ours, time.Since(start))
		}
		t := median(ours)
		figure.Report("pdf.extract", float64(total)/t.Seconds(), "pages/s")
		pdftotext, err := exec.LookPath("pdftotext")
		if err != nil {
			b.Logf("no pdftotext: %v", err)
			continue
		}
		var theirs []time.Duration
		for range benchRuns {
			start := time.Now()
			for _, f := range files {
				cmd := exec.Command(pdftotext, "-layout", f.path, "-")
				cmd.Stdout = io.Discard
				_ = cmd.Run() // poppler complains about some files and still writes text
			}
			theirs = append(theirs, time.Since(start))
		}
		figure.Report("pdf.extract.vs_pdftotext", t.Seconds()/median(theirs).Seconds(), "ratio")
		b.Logf("%d pages in %d files: ours %v, pdftotext %v", total, len(files), t, median(theirs))
	}
}

// fiveHundredPages builds a 500-page PDF from the corpus: the largest
// documents merged by pdfcpu until there are enough pages, then trimmed to
// 500 (with the present corpus: the Gri manual, the Debian maintainers'
// guide and the Gutenprint manual, 501 pages, less the last).
func fiveHundredPages(b *testing.B) []byte {
	files := extractable(b)
	slices.SortFunc(files, func(x, y corpusPDF) int { return y.pages - x.pages })
	var in []io.ReadSeeker
	pages := 0
	for pages < 500 {
		for _, f := range files {
			if pages >= 500 {
				break
			}
			in = append(in, bytes.NewReader(f.data))
			pages += f.pages
		}
		if len(files) == 0 {
			b.Fatal("no corpus PDFs")
		}
	}
	api.DisableConfigDir()
	var merged, trimmed bytes.Buffer
	if err := api.MergeRaw(in, &merged, false, model.NewDefaultConfiguration()); err != nil {
		b.Fatalf("merge: %v", err)
	}
	if err := api.Trim(bytes.NewReader(merged.Bytes()), &trimmed, []string{"1-500"}, model.NewDefaultConfiguration()); err != nil {
		b.Fatalf("trim: %v", err)
	}
	return trimmed.Bytes()
}

// BenchmarkPrescan500: Open plus Prescan of a 500-page PDF from memory;
// against poppler's pdfinfo plus pdftotext (all pages, to a discarded
// pipe) of the same file.
func BenchmarkPrescan500(b *testing.B) {
	data := fiveHundredPages(b)
	path := filepath.Join(b.TempDir(), "500p.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		var ours []time.Duration
		for range benchRuns {
			start := time.Now()
			d, err := Open(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			ps, err := d.Prescan()
			if err != nil {
				b.Fatal(err)
			}
			ours = append(ours, time.Since(start))
			if len(ps.Pages) != 500 {
				b.Fatalf("%d pages", len(ps.Pages))
			}
		}
		t := median(ours)
		figure.Report("pdf.prescan.500p", float64(t.Microseconds())/1000, "ms")
		// The whole text of the same document, side by side: the pre-scan
		// exists so that long documents need not be read whole.
		var whole []time.Duration
		for range benchRuns {
			start := time.Now()
			d, err := Open(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := d.ExtractAll(); err != nil {
				b.Fatal(err)
			}
			whole = append(whole, time.Since(start))
		}
		figure.Report("pdf.prescan.500p.vs_extract", t.Seconds()/median(whole).Seconds(), "ratio")
		b.Logf("500 pages: pre-scan %v, extract %v", t, median(whole))
		pdfinfo, err1 := exec.LookPath("pdfinfo")
		pdftotext, err2 := exec.LookPath("pdftotext")
		if err1 != nil || err2 != nil {
			b.Log("no poppler tools")
			continue
		}
		var theirs []time.Duration
		for range benchRuns {
			start := time.Now()
			info := exec.Command(pdfinfo, path)
			info.Stdout = io.Discard
			_ = info.Run()
			text := exec.Command(pdftotext, "-layout", path, "-")
			text.Stdout = io.Discard
			_ = text.Run()
			theirs = append(theirs, time.Since(start))
		}
		figure.Report("pdf.prescan.500p.vs_poppler", t.Seconds()/median(theirs).Seconds(), "ratio")
		b.Logf("500 pages: ours %v, pdfinfo+pdftotext %v", t, median(theirs))
	}
}
