package pdftext

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// refItem is one outline line of a reference: mutool's NAME.outline.txt or
// qpdf's NAME.outline.qpdf.tsv. Page 0 means the reference did not resolve it.
type refItem struct {
	title string
	level int
	page  int
}

// mutoolOutline parses `mutool show NAME.pdf outline`: a marker, one TAB per
// level, the quoted title (backslash escapes), TAB, "#page=N&zoom=...".
func mutoolOutline(path string) ([]refItem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var items []refItem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := sc.Text()
		if s == "" {
			continue
		}
		s = s[1:] // the marker: | + -
		level := 0
		for strings.HasPrefix(s, "\t") {
			s = s[1:]
			level++
		}
		title, rest := s, ""
		if strings.HasPrefix(s, "\"") {
			var sb strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				sb.WriteByte(s[i])
			}
			title, rest = sb.String(), s[min(i+1, len(s)):]
		}
		it := refItem{title: title, level: level - 1}
		if _, p, ok := strings.Cut(rest, "#page="); ok {
			p, _, _ = strings.Cut(p, "&")
			it.page, _ = strconv.Atoi(p)
		}
		items = append(items, it)
	}
	return items, sc.Err()
}

// qpdfOutline parses depth TAB page TAB title; page "None" is unresolved.
func qpdfOutline(path string) ([]refItem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var items []refItem
	for l := range strings.SplitSeq(strings.TrimRight(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 {
			continue
		}
		lv, _ := strconv.Atoi(f[0])
		pg, _ := strconv.Atoi(f[1]) // "None" gives 0
		items = append(items, refItem{title: f[2], level: lv, page: pg})
	}
	return items, nil
}

func flatten(items []OutlineItem, out []refItem) []refItem {
	for _, it := range items {
		out = append(out, refItem{title: it.Title, level: it.Level, page: it.Page})
		out = flatten(it.Children, out)
	}
	return out
}

func TestCorpusOutline(t *testing.T) {
	dir, names := corpusFiles(t)
	checked := 0
	for _, name := range names {
		refs := map[string][]refItem{}
		if r, err := mutoolOutline(filepath.Join(dir, name+".outline.txt")); err == nil {
			refs["mutool"] = r
		}
		if r, err := qpdfOutline(filepath.Join(dir, name+".outline.qpdf.tsv")); err == nil {
			refs["qpdf"] = r
		}
		if len(refs) == 0 {
			continue
		}
		d, err := openCorpus(t, dir, name)
		if err != nil {
			continue // malformed files are TestMalformed's
		}
		got := flatten(d.Outline(), nil)
		for tool, want := range refs {
			checked++
			if len(got) != len(want) {
				t.Errorf("%s: %d outline items, %s has %d", name, len(got), tool, len(want))
				continue
			}
			bad := 0
			for i := range want {
				w, g := want[i], got[i]
				if g.title != w.title || g.level != w.level || (w.page != 0 && g.page != w.page) {
					if bad < 5 {
						t.Errorf("%s item %d: got %+v, %s has %+v", name, i, g, tool, w)
					}
					bad++
				}
			}
			if bad == 0 {
				t.Logf("%s: %d items match %s", name, len(want), tool)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no outline references")
	}
}
