package extract

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
)

// corpusFiles lists the corpus's files of one kind; whatever is there.
func corpusFiles(t testing.TB, kind string) []string {
	return testcorpus.Glob(t, "office", kind, "*."+kind)
}

// summary is a parsed NAME.summary.txt: header lines ("sheets: […]",
// "slides: N notes: M") and the text lines of each "=== PART" section.
type summary struct {
	header   map[string]string
	sections []summarySection
}

type summarySection struct {
	title string   // what follows "=== "
	lines []string // non-blank lines, as written
}

func readSummary(t *testing.T, name string) summary {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatalf("summary: %v", err)
	}
	defer f.Close()
	s := summary{header: map[string]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "=== "):
			s.sections = append(s.sections, summarySection{title: strings.TrimPrefix(l, "=== ")})
		case len(s.sections) > 0:
			if strings.TrimSpace(l) != "" {
				sec := &s.sections[len(s.sections)-1]
				sec.lines = append(sec.lines, l)
			}
		default:
			if k, v, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(l, " ") {
				s.header[k] = v
			}
		}
	}
	return s
}

func extractFile(t *testing.T, name string, lim Limits) (content.Index, []content.Object) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	idx, objs, err := Extract(context.Background(), f, st.Size(), filepath.Base(name), "", lim)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if idx.TotalObjects != len(objs) || len(idx.Objects) != len(objs) {
		t.Fatalf("index counts %d/%d objects, got %d", idx.TotalObjects, len(idx.Objects), len(objs))
	}
	for i, o := range objs {
		if o.Sequence != i+1 || o.ID == "" || idx.Objects[i].ID != o.ID {
			t.Fatalf("object %d: sequence %d, ID %q, index ID %q", i, o.Sequence, o.ID, idx.Objects[i].ID)
		}
	}
	return idx, objs
}

// norm makes object text and reference text comparable: Markdown table
// escapes undone, whitespace collapsed.
func norm(s string) string {
	s = strings.ReplaceAll(s, "<br>", " ")
	s = strings.ReplaceAll(s, `\|`, "|")
	return strings.Join(strings.Fields(s), " ")
}

// inOrder reports the first of want that is not found in text after the
// previous one, or "".
func inOrder(text string, want []string) string {
	pos := 0
	for _, w := range want {
		i := strings.Index(text[pos:], norm(w))
		if i < 0 {
			return w
		}
		pos += i + len(norm(w))
	}
	return ""
}

func textOfPart(objs []content.Object, part string) (string, []content.Object) {
	var b []string
	var sel []content.Object
	for _, o := range objs {
		if o.ContentType == content.Text && o.Ref.Part == part {
			b = append(b, norm(o.Data))
			sel = append(sel, o)
		}
	}
	return strings.Join(b, " "), sel
}

// TestCorpusDOCX: every paragraph of each summarised part appears, in
// order, in the objects of that part, and the k-th non-empty paragraph is
// in the object whose Ref.Paragraph (or table paragraph range) holds k.
func TestCorpusDOCX(t *testing.T) {
	for _, file := range corpusFiles(t, "docx") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sum := readSummary(t, file+".summary.txt")
			idx, objs := extractFile(t, file, Limits{})
			if idx.MIMEType != mimeDOCX {
				t.Errorf("MIME type %q", idx.MIMEType)
			}
			for _, sec := range sum.sections {
				part := partBase(sec.title)
				text, sel := textOfPart(objs, part)
				if miss := inOrder(text, sec.lines); miss != "" {
					t.Errorf("%s: %q missing or out of order", part, miss)
					continue
				}
				for k, line := range sec.lines {
					o, ok := paragraphObject(sel, k+1)
					if !ok {
						t.Errorf("%s: no object for paragraph %d (%q)", part, k+1, line)
						continue
					}
					if !strings.Contains(norm(o.Data), norm(line)) {
						t.Errorf("%s: paragraph %d is %q, want it to hold %q", part, k+1, o.Data, line)
					}
				}
			}
			for _, o := range objs {
				if o.ContentType == content.Image {
					if _, ok := o.Metadata["format"]; !ok {
						t.Errorf("image %s without format: %v", o.ID, o.Metadata)
					}
					if p, _ := o.Metadata["part"].(string); !strings.HasPrefix(p, "word/media/") {
						t.Errorf("image %s part %q", o.ID, p)
					}
				}
			}
		})
	}
}

func paragraphObject(objs []content.Object, k int) (content.Object, bool) {
	for _, o := range objs {
		last := o.Ref.Paragraph
		if l, ok := o.Metadata["lastParagraph"].(int); ok {
			last = l
		}
		if o.Ref.Paragraph <= k && k <= last {
			return o, true
		}
	}
	return content.Object{}, false
}

// TestCorpusPPTX: each slide's text is in the objects of its part, in
// order; slide indexes are 1..N, one per slide; notes carry their slide's
// index and a notes location.
func TestCorpusPPTX(t *testing.T) {
	for _, file := range corpusFiles(t, "pptx") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sum := readSummary(t, file+".summary.txt")
			idx, objs := extractFile(t, file, Limits{})
			var slides, notes int
			if v, ok := sum.header["slides"]; ok {
				f := strings.Fields(v) // "3 notes: 0"
				slides, _ = strconv.Atoi(f[0])
				if len(f) == 3 {
					notes, _ = strconv.Atoi(f[2])
				}
				if idx.Structure["slides"] != slides {
					t.Errorf("slides %v, summary says %d", idx.Structure["slides"], slides)
				}
				if n, _ := idx.Structure["notes"].(int); n > notes {
					t.Errorf("notes %d, summary says %d", n, notes)
				}
			}
			indexOf := map[string]int{} // slide part → index
			for _, o := range objs {
				if o.Ref.SlideIndex < 1 || (slides > 0 && o.Ref.SlideIndex > slides) {
					t.Errorf("object %s slide index %d", o.ID, o.Ref.SlideIndex)
				}
				if strings.HasPrefix(o.Ref.Part, "slide") {
					if k, ok := indexOf[o.Ref.Part]; ok && k != o.Ref.SlideIndex {
						t.Errorf("part %s has slide indexes %d and %d", o.Ref.Part, k, o.Ref.SlideIndex)
					}
					indexOf[o.Ref.Part] = o.Ref.SlideIndex
				}
				if strings.HasPrefix(o.Ref.Part, "notesSlide") && o.Ref.Location != "slide:"+strconv.Itoa(o.Ref.SlideIndex)+"/notes" {
					t.Errorf("notes %s location %q", o.ID, o.Ref.Location)
				}
			}
			for _, sec := range sum.sections {
				part := partBase(sec.title)
				text, _ := textOfPart(objs, part)
				want := sec.lines
				if strings.HasPrefix(part, "notesSlide") {
					// The slide-number field of a notes page is left out on
					// purpose: it is page furniture, not notes.
					want = slices.DeleteFunc(slices.Clone(want), func(l string) bool {
						_, err := strconv.Atoi(strings.TrimSpace(l))
						return err == nil
					})
				}
				if miss := inOrder(text, want); miss != "" {
					t.Errorf("%s: %q missing or out of order in %q", part, miss, text)
				}
			}
		})
	}
}

var cellRef = regexp.MustCompile(`^([A-Z]+)([0-9]+)=(.*)$`)

// TestCorpusXLSX: sheets are the summary's, in order, and every non-empty
// cell's value is found at its row and column in the block whose Location
// covers it.
func TestCorpusXLSX(t *testing.T) {
	for _, file := range corpusFiles(t, "xlsx") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sum := readSummary(t, file+".summary.txt")
			idx, objs := extractFile(t, file, Limits{})
			var names []string
			for _, s := range idx.Structure["sheets"].([]map[string]any) {
				names = append(names, s["name"].(string))
			}
			if want, ok := sum.header["sheets"]; ok {
				if got := pyList(names); got != want {
					t.Errorf("sheets %s, summary says %s", got, want)
				}
			}
			grids := map[string]map[string]string{} // sheet → cell → value
			for _, o := range objs {
				if o.ContentType != content.Text || o.Ref.Part == "comments" {
					continue
				}
				if !strings.HasPrefix(o.Ref.Location, "sheet:"+o.Ref.SheetName+"!") {
					t.Errorf("object %s location %q for sheet %q", o.ID, o.Ref.Location, o.Ref.SheetName)
				}
				g := grids[o.Ref.SheetName]
				if g == nil {
					g = map[string]string{}
					grids[o.Ref.SheetName] = g
				}
				for cell, v := range parseBlock(t, o) {
					if !inRange(cell, strings.TrimPrefix(o.Ref.Location, "sheet:"+o.Ref.SheetName+"!")) {
						t.Errorf("cell %s outside its block's range %s", cell, o.Ref.Location)
					}
					g[cell] = v
				}
			}
			for _, sec := range sum.sections {
				m := regexp.MustCompile(`^sheet '(.*)' \(`).FindStringSubmatch(sec.title)
				if m == nil {
					continue
				}
				sheet, cells := m[1], 0
				for _, l := range sec.lines {
					for cell, want := range summaryCells(l) {
						cells++
						got, ok := grids[sheet][cell]
						if !ok {
							t.Errorf("%s!%s (%q) missing", sheet, cell, want)
							continue
						}
						if !sameValue(got, want) {
							t.Errorf("%s!%s = %q, summary says %q", sheet, cell, got, want)
						}
					}
				}
				if cells != len(grids[sheet]) {
					t.Errorf("%s: %d cells, summary has %d", sheet, len(grids[sheet]), cells)
				}
			}
		})
	}
}

// pyList writes names as the summary does: ['a', 'b'].
func pyList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// summaryCells parses "  A1=v<TAB>B1=w"; a piece that is no cell continues
// the previous value (a value holding a tab).
func summaryCells(l string) map[string]string {
	out := map[string]string{}
	last := ""
	for _, p := range strings.Split(strings.TrimPrefix(l, "  "), "\t") {
		if m := cellRef.FindStringSubmatch(p); m != nil {
			last = m[1] + m[2]
			out[last] = m[3]
		} else if last != "" {
			out[last] += "\t" + p
		}
	}
	return out
}

// parseBlock reads a sheet block back into cells: the Markdown form (a
// header of column letters, row numbers first) or the CELL=value form.
func parseBlock(t *testing.T, o content.Object) map[string]string {
	out := map[string]string{}
	ls := strings.Split(o.Data, "\n")
	if o.Metadata["format"] == "cells" {
		for _, l := range ls {
			for c, v := range summaryCells(l) {
				out[c] = v
			}
		}
		return out
	}
	split := func(l string) []string {
		l = strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |")
		l = strings.ReplaceAll(l, `\|`, "\x00")
		parts := strings.Split(l, " | ")
		for i := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(parts[i], "\x00", "|"), "<br>", "\n")
		}
		return parts
	}
	head := split(ls[0])
	for _, l := range ls[2:] {
		row := split(l)
		if len(row) != len(head) {
			t.Errorf("object %s: row %q has %d cells, header %d", o.ID, l, len(row), len(head))
			continue
		}
		for i := 1; i < len(row); i++ {
			if strings.TrimSpace(row[i]) != "" {
				out[strings.TrimSpace(head[i])+strings.TrimSpace(row[0])] = row[i]
			}
		}
	}
	return out
}

// inRange reports whether a cell lies in "A1:F20" (or is the one cell).
func inRange(cell, rng string) bool {
	a, b, ok := strings.Cut(rng, ":")
	if !ok {
		return cell == rng
	}
	c, r := splitCell(cell)
	c1, r1 := splitCell(a)
	c2, r2 := splitCell(b)
	return colNum(c) >= colNum(c1) && colNum(c) <= colNum(c2) && r >= r1 && r <= r2
}

func splitCell(s string) (string, int) {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return s, 0
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}

func colNum(c string) int {
	n := 0
	for _, r := range c {
		n = n*26 + int(r-'A'+1)
	}
	return n
}

// sameValue compares a displayed value with the summary's raw one: equal
// text, booleans (1/0 shown as TRUE/FALSE), or equal numbers.
func sameValue(got, want string) bool {
	if norm(got) == norm(want) {
		return true
	}
	switch {
	case (want == "1" || want == "True") && got == "TRUE", (want == "0" || want == "False") && got == "FALSE":
		return true
	}
	g, err1 := strconv.ParseFloat(strings.ReplaceAll(got, ",", ""), 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && g == w
}
