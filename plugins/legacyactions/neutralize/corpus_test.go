package neutralize

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
)

// The redaction corpus (testdata/corpus) is business text written for this
// test: e-mails, letters, CVs, invoices, minutes, forms and chats in
// German, Swiss German, English, French and Italian. Every piece of
// personal data is marked in place, [[N:Anna Meier]] (name), [[E:…]]
// (e-mail), [[I:…]] (IBAN), [[A:…]] (AHV number), [[P:…]] (phone); a name's
// title stays outside its mark. truth.tsv lists every marked span with its
// offsets in the unmarked text (regenerate with -update).
//
// The corpus is split: the detector was developed and tuned on dev/ only;
// test/ was written afterwards and is measured, not tuned on. The recall
// asserted and the figures reported are test/'s. It took three rounds:
// each round's held-out set, once measured, joined dev/ (it had been seen)
// and a new one was written. Held-out recall and precision: round 1 0.881
// and 0.978 (names 121/150), round 2 0.898 and 0.949 (names 114/135),
// round 3, the test/ of today, 0.960 and 0.974 (names 119/127).

var update = flag.Bool("update", false, "rewrite testdata/corpus/truth.tsv")

type truth struct {
	start, end int
	kind       Kind
}

type doc struct {
	name  string
	text  string
	truth []truth
}

var markRE = regexp.MustCompile(`\[\[([NEIAP]):(.*?)\]\]`)

var markKinds = map[string]Kind{"N": Name, "E": Email, "I": IBAN, "A": AHV, "P": Phone}

// unmark returns the text without marks and the marked spans in it.
func unmark(marked string) (string, []truth) {
	var b strings.Builder
	var spans []truth
	last := 0
	for _, m := range markRE.FindAllStringSubmatchIndex(marked, -1) {
		b.WriteString(marked[last:m[0]])
		start := b.Len()
		b.WriteString(marked[m[4]:m[5]])
		spans = append(spans, truth{start: start, end: b.Len(), kind: markKinds[marked[m[2]:m[3]]]})
		last = m[1]
	}
	b.WriteString(marked[last:])
	return b.String(), spans
}

func loadCorpus(t testing.TB, split string) []doc {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", split, "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("corpus %s: %v (%d files)", split, err, len(paths))
	}
	sort.Strings(paths)
	var out []doc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text, spans := unmark(string(b))
		out = append(out, doc{name: split + "/" + filepath.Base(p), text: text, truth: spans})
	}
	return out
}

// score is recall and precision over a set of documents. A marked span is
// found when spans of its kind cover every non-space byte of it; a found
// span is right when it overlaps a marked span of its kind.
type score struct {
	truths, found, predicted, right int
	byKind                          map[Kind][2]int // kind → found, truths
	misses, wrong                   []string
}

func (s score) recall() float64    { return float64(s.found) / float64(max(1, s.truths)) }
func (s score) precision() float64 { return float64(s.right) / float64(max(1, s.predicted)) }

func evaluate(docs []doc) score {
	s := score{byKind: map[Kind][2]int{}}
	for _, d := range docs {
		pred := Find(d.text)
		for _, tr := range d.truth {
			covered := true
			for i := tr.start; i < tr.end; i++ {
				if d.text[i] == ' ' {
					continue
				}
				hit := false
				for _, p := range pred {
					if p.Kind == tr.kind && p.Start <= i && i < p.End {
						hit = true
						break
					}
				}
				if !hit {
					covered = false
					break
				}
			}
			k := s.byKind[tr.kind]
			k[1]++
			s.truths++
			if covered {
				k[0]++
				s.found++
			} else {
				s.misses = append(s.misses, fmt.Sprintf("%s: %s %q", d.name, tr.kind, d.text[tr.start:tr.end]))
			}
			s.byKind[tr.kind] = k
		}
		for _, p := range pred {
			s.predicted++
			ok := false
			for _, tr := range d.truth {
				if tr.kind == p.Kind && p.Start < tr.end && tr.start < p.End {
					ok = true
					break
				}
			}
			if ok {
				s.right++
			} else {
				s.wrong = append(s.wrong, fmt.Sprintf("%s: %s %q", d.name, p.Kind, d.text[p.Start:p.End]))
			}
		}
	}
	return s
}

func (s score) log(t testing.TB, split string) {
	t.Logf("%s: recall %.3f (%d/%d), precision %.3f (%d/%d)", split, s.recall(), s.found, s.truths, s.precision(), s.right, s.predicted)
	for _, k := range Kinds {
		v := s.byKind[k]
		t.Logf("  %-5s %d/%d", k, v[0], v[1])
	}
	for _, m := range s.misses {
		t.Logf("  missed %s", m)
	}
	for _, w := range s.wrong {
		t.Logf("  wrong  %s", w)
	}
}

// TestNeutralizeCorpus asserts the recall issue 12 asks for (≥ 0.95) on the
// test half and reports precision; the dev half is logged beside it.
func TestNeutralizeCorpus(t *testing.T) {
	dev, test := evaluate(loadCorpus(t, "dev")), evaluate(loadCorpus(t, "test"))
	dev.log(t, "dev")
	test.log(t, "test")
	if dev.truths+test.truths < 600 || test.truths < 150 {
		t.Errorf("the corpus has %d+%d marked spans; it needs several hundred, and the test half a fair share", dev.truths, test.truths)
	}
	if r := test.recall(); r < 0.95 {
		t.Errorf("recall on the test half is %.3f, want ≥ 0.95", r)
	}
}

// TestCorpusTruthFile keeps truth.tsv, the ground truth in a form other
// tools read, equal to the marks.
func TestCorpusTruthFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("document\tstart\tend\tkind\ttext\n")
	for _, split := range []string{"dev", "test"} {
		for _, d := range loadCorpus(t, split) {
			for _, tr := range d.truth {
				fmt.Fprintf(&b, "%s\t%d\t%d\t%s\t%s\n", d.name, tr.start, tr.end, tr.kind, d.text[tr.start:tr.end])
			}
		}
	}
	path := filepath.Join("testdata", "corpus", "truth.tsv")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Errorf("%s is out of date: go test ./plugins/legacyactions/neutralize -run TestCorpusTruthFile -update", path)
	}
}

// BenchmarkNeutralizeCorpus reports the detector's recall and precision on
// the test half of the corpus, and its speed.
func BenchmarkNeutralizeCorpus(b *testing.B) {
	docs := loadCorpus(b, "test")
	s := evaluate(docs)
	bytes := 0
	for _, d := range docs {
		bytes += len(d.text)
	}
	b.SetBytes(int64(bytes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := New()
		for _, d := range docs {
			n.Neutralize(d.text)
		}
	}
	b.StopTimer()
	figure.Report("actions.neutralize.recall", s.recall(), "ratio")
	figure.Report("actions.neutralize.precision", s.precision(), "ratio")
}
