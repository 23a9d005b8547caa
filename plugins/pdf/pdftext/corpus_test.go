package pdftext

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// The corpus tests run over every PDF in the shared corpus
// (testdata/corpus/pdf at the repository's root), whatever the set is, against
// the references made with poppler and mutool that sit beside each file.

// corpusMinMean is the corpus mean similarity this package reaches (see
// similarity); the test fails if a change drops below it.
const corpusMinMean = 0.975

// corpusFiles lists the corpus PDFs by their base name (without .pdf).
func corpusFiles(tb testing.TB) (string, []string) {
	dir := testcorpus.Path(tb, "pdf")
	paths := testcorpus.Glob(tb, "pdf", "*.pdf")
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".pdf"))
	}
	return dir, names
}

// referencePages reads NAME.pages/NNNN.txt; nil when there is no reference.
func referencePages(dir, name string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, name+".pages", "[0-9][0-9][0-9][0-9].txt"))
	slices.Sort(files)
	var pages []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil
		}
		pages = append(pages, string(b))
	}
	return pages
}

// similarity is the measure the corpus test reports: 1 − the Levenshtein
// distance between the two texts' word sequences (words are maximal runs of
// non-space characters, so any difference in spacing, line breaks or
// indentation is ignored), divided by the longer sequence's length. Word
// order counts, a missing, extra or misspelt word costs one edit. Two empty
// texts are identical (1).
func similarity(got, want string) float64 {
	a, b := strings.Fields(got), strings.Fields(want)
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	return 1 - float64(wordDistance(a, b))/float64(max(len(a), len(b)))
}

func wordDistance(a, b []string) int {
	ids := map[string]int32{}
	intern := func(ws []string) []int32 {
		out := make([]int32, len(ws))
		for i, w := range ws {
			id, ok := ids[w]
			if !ok {
				id = int32(len(ids))
				ids[w] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

func TestSimilarity(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"a b c", "a  b\n c", 1},
		{"a b c d", "a x c d", 0.75},
		{"a b", "", 0},
		{"a b c d", "a b c", 0.75},
	} {
		if got := similarity(c.a, c.b); got != c.want {
			t.Errorf("similarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func openCorpus(tb testing.TB, dir, name string) (*Document, error) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
	if err != nil {
		tb.Fatal(err)
	}
	return Open(bytes.NewReader(data))
}

// corpusResult is the similarity of each document with a text layer and
// the corpus mean: for PageText (columns read one after the other) and for
// the physical order pdftotext -layout uses (columns side by side), which
// tells recognition errors from reading-order differences.
type corpusResult struct {
	perDoc, perDocPhysical map[string]float64
	mean, meanPhysical     float64
}

// corpusSimilarity extracts every page of every corpus PDF that has
// reference pages.
func corpusSimilarity(tb testing.TB) corpusResult {
	dir, names := corpusFiles(tb)
	r := corpusResult{perDoc: map[string]float64{}, perDocPhysical: map[string]float64{}}
	n := 0
	for _, name := range names {
		ref := referencePages(dir, name)
		if ref == nil {
			continue
		}
		d, err := openCorpus(tb, dir, name)
		if err != nil {
			tb.Errorf("%s: %v", name, err)
			continue
		}
		if d.PageCount() != len(ref) {
			tb.Errorf("%s: %d pages, reference has %d", name, d.PageCount(), len(ref))
		}
		hasText := false
		var sum, sumPhysical float64
		for i, want := range ref {
			if strings.TrimSpace(want) != "" {
				hasText = true
			}
			got, err := d.PageText(i + 1)
			if err != nil {
				tb.Errorf("%s page %d: %v", name, i+1, err)
			}
			sum += similarity(got, want)
			glyphs, _, _ := d.pageGlyphs(i+1, nil)
			sumPhysical += similarity(layoutText(glyphs, false), want)
		}
		if !hasText {
			continue // no text layer (a scan): nothing to compare
		}
		r.perDoc[name] = sum / float64(len(ref))
		r.perDocPhysical[name] = sumPhysical / float64(len(ref))
		r.mean += r.perDoc[name]
		r.meanPhysical += r.perDocPhysical[name]
		n++
	}
	if n == 0 {
		tb.Fatal("no corpus PDF with reference text")
	}
	r.mean /= float64(n)
	r.meanPhysical /= float64(n)
	return r
}

func TestCorpusText(t *testing.T) {
	r := corpusSimilarity(t)
	names := make([]string, 0, len(r.perDoc))
	for n := range r.perDoc {
		names = append(names, n)
	}
	slices.Sort(names)
	t.Logf("%-45s %8s %8s", "document", "text", "physical")
	for _, n := range names {
		t.Logf("%-45s %8.4f %8.4f", n, r.perDoc[n], r.perDocPhysical[n])
	}
	t.Logf("corpus mean similarity %.4f (physical order %.4f) over %d documents", r.mean, r.meanPhysical, len(r.perDoc))
	if r.mean < corpusMinMean {
		t.Errorf("corpus mean similarity %.4f < %.4f", r.mean, corpusMinMean)
	}
}

// TestDumpPage prints one page for inspection: PDFTEXT_DUMP=name:page.
func TestDumpPage(t *testing.T) {
	spec := os.Getenv("PDFTEXT_DUMP")
	if spec == "" {
		t.Skip("set PDFTEXT_DUMP=name:page")
	}
	name, ps, _ := strings.Cut(spec, ":")
	n, _ := strconv.Atoi(ps)
	dir := testcorpus.Path(t, "pdf")
	d, err := openCorpus(t, dir, name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.PageText(n)
	if err != nil {
		t.Fatal(err)
	}
	ref := referencePages(dir, name)
	fmt.Printf("=== ours\n%s\n=== similarity %.4f\n", got, similarity(got, ref[n-1]))
	if os.Getenv("PDFTEXT_WORDS") != "" {
		a, b := strings.Fields(got), strings.Fields(ref[n-1])
		fmt.Println(diffWords(a, b))
	}
}

// TestFragDebug prints the fragments of the lines containing a string:
// PDFTEXT_FRAGS=name:page:string.
func TestFragDebug(t *testing.T) {
	spec := os.Getenv("PDFTEXT_FRAGS")
	if spec == "" {
		t.Skip()
	}
	parts := strings.Split(spec, ":")
	n, _ := strconv.Atoi(parts[1])
	d, err := openCorpus(t, testcorpus.Path(t, "pdf"), parts[0])
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

// diffWords shows the words that differ, for debugging.
func diffWords(a, b []string) string {
	var sb strings.Builder
	ma := map[string]int{}
	for _, w := range a {
		ma[w]++
	}
	for _, w := range b {
		if ma[w] > 0 {
			ma[w]--
			continue
		}
		fmt.Fprintf(&sb, "-%s ", w)
	}
	for w, c := range ma {
		for range c {
			fmt.Fprintf(&sb, "+%s ", w)
		}
	}
	return sb.String()
}
