package archive

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// row is one line of a NAME.listing.txt: kind, size, sha256 prefix, path
// with "!/" between layers.
type row struct{ kind, size, hash, path string }

var listingLine = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+) (.+)$`)

func readListing(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := listingLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("%s: unreadable line %q", path, sc.Text())
		}
		r := row{m[1], m[2], m[3], m[4]}
		if r.kind == "dir" {
			r.path = strings.TrimSuffix(r.path, "/")
		}
		rows = append(rows, r)
	}
	return rows
}

// listingRows renders a Result the way the corpus listings are written:
// containers are layers ("!/"), a gzip stream of one file is "<gunzip>",
// zip-based documents are "ooxml", and every hash comes from Entry.Open.
func listingRows(t *testing.T, res Result) []row {
	t.Helper()
	containers := map[string]Entry{}
	children := map[string][]Entry{}
	for _, e := range res.Entries {
		if e.Container != None {
			containers[e.Path] = e
		}
		if i := strings.LastIndexByte(e.Path, '/'); i >= 0 {
			children[e.Path[:i]] = append(children[e.Path[:i]], e)
		}
	}
	singleFile := func(gz Entry) bool {
		c := children[gz.Path]
		return len(c) == 1 && c[0].Name == streamName(Gzip, gz.Name, "")
	}
	var rows []row
	for _, e := range res.Entries {
		segs := strings.Split(e.Path, "/")
		p, prefix := segs[0], segs[0]
		for _, s := range segs[1:] {
			c, isContainer := containers[prefix]
			switch {
			case isContainer && c.Container == Gzip && singleFile(c):
				p += "!/<gunzip>"
			case isContainer:
				p += "!/" + s
			default:
				p += "/" + s
			}
			prefix += "/" + s
		}
		r := row{path: p, size: "-", hash: "------------", kind: "dir"}
		if !e.Dir {
			b, err := readEntry(e)
			if err != nil {
				t.Errorf("Open %s: %v", e.Path, err)
			}
			r.size, r.hash = fmt.Sprint(e.Size), sha12(b)
			if int64(len(b)) != e.Size {
				t.Errorf("%s: Open gave %d bytes, Size says %d", e.Path, len(b), e.Size)
			}
			switch {
			case e.Container == Gzip:
				r.kind = "gz"
			case e.Container != None:
				r.kind = e.Container.String()
			case strings.Contains(e.MIMEType, "openxmlformats"):
				r.kind = "ooxml"
			default:
				r.kind = "file"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// TestBenignCorpus: every benign archive resolves to exactly its listing,
// in order, with the bytes Open streams hashing as listed.
func TestBenignCorpus(t *testing.T) {
	dir := filepath.Join(testcorpus.Path(t, "archives"), "benign")
	listings, _ := filepath.Glob(filepath.Join(dir, "*.listing.txt"))
	if len(listings) == 0 {
		t.Fatal("no benign listings")
	}
	for _, l := range listings {
		archive := strings.TrimSuffix(l, ".listing.txt")
		t.Run(filepath.Base(archive), func(t *testing.T) {
			want := readListing(t, l)
			res := resolveFile(t, archive, DefaultLimits())
			if len(res.Problems) > 0 || res.Truncated {
				t.Errorf("problems %v, truncated %v", res.Problems, res.Truncated)
			}
			got := listingRows(t, res)
			for i := range max(len(got), len(want)) {
				var g, w row
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("row %d:\n got  %v\n want %v", i, g, w)
				}
			}
		})
	}
}

// hostileCase checks one hostile archive's result beyond the common checks
// (no error, bounded time and memory, every listed file readable).
type hostileCase func(t *testing.T, name string, res Result)

var hostileCases = map[string]hostileCase{
	"bomb-1GiB-zeros.gz": func(t *testing.T, name string, res Result) {
		wantProblem(t, res, name+"/bomb-1GiB-zeros", ProblemBomb)
		if len(res.Entries) != 1 {
			t.Errorf("entries %v, want only the input", paths(res))
		}
	},
	"bomb-1GiB-zeros.zst": func(t *testing.T, name string, res Result) {
		wantProblem(t, res, name+"/bomb-1GiB-zeros", ProblemBomb)
		if len(res.Entries) != 1 {
			t.Errorf("entries %v, want only the input", paths(res))
		}
	},
	"bomb-single-entry-1GiB.zip": func(t *testing.T, name string, res Result) {
		wantProblem(t, res, name+"/zeros.bin", ProblemBomb)
	},
	"bomb-nested-42style.zip": func(t *testing.T, name string, res Result) {
		if !res.Truncated {
			t.Error("not truncated")
		}
		last := res.Problems[len(res.Problems)-1]
		if last.Kind != ProblemBomb || !strings.Contains(last.Reason, "overall") {
			t.Errorf("walk not ended by the overall ratio: %v", last)
		}
		// The leaves (256 MiB of zeros each) are refused by their headers.
		wantProblem(t, res, name+"/lib0.zip/lib0.zip/lib0.zip/lib0.zip/0.bin", ProblemBomb)
		var total int64
		for _, e := range res.Entries[1:] {
			total += e.Size
		}
		if total > 32<<20 {
			t.Errorf("listed %d bytes", total)
		}
	},
	"many-entries-12000.zip": func(t *testing.T, name string, res Result) {
		if !res.Truncated {
			t.Error("not truncated")
		}
		if n := len(res.Entries) - 1; n != DefaultLimits().MaxFiles {
			t.Errorf("%d entries listed, want the first %d", n, DefaultLimits().MaxFiles)
		}
		if len(res.Problems) != 1 || res.Problems[0].Kind != ProblemLimit {
			t.Errorf("problems %v, want one limit", res.Problems)
		}
		wantEntry(t, res, name+"/d00/f00000.txt", nil)
	},
	"path-traversal-constructed.zip": func(t *testing.T, name string, res Result) {
		wantOnly(t, res, name, "good.txt", ProblemTraversal)
	},
	"snyk-zip-slip.zip": func(t *testing.T, name string, res Result) {
		wantOnly(t, res, name, "good.txt", ProblemTraversal)
	},
	"symlink-entries.zip": func(t *testing.T, name string, res Result) {
		wantOnly(t, res, name, "readme.txt", ProblemSymlink)
		for _, link := range []string{"passwd_link", "escape_dir", "escape_dir/evil.txt", "loop_a", "loop_b", "doc.pdf"} {
			wantProblem(t, res, name+"/"+link, ProblemSymlink)
		}
	},
	"truncated-project-docs.zip": func(t *testing.T, name string, res Result) {
		wantProblem(t, res, name, ProblemTruncated)
		// What survives the cut is recovered, byte-exact: compare with the
		// listing of the archive it was cut from.
		whole := readListing(t, filepath.Join(testcorpus.Path(t, "archives"), "benign", "project-docs.zip.listing.txt"))
		hashes := map[string]string{}
		for _, r := range whole {
			hashes[strings.TrimPrefix(r.path, "project-docs.zip!/")] = r.hash
		}
		files := 0
		for _, e := range res.Entries[1:] {
			rel := strings.TrimPrefix(e.Path, name+"/")
			if e.Dir {
				continue
			}
			b, err := readEntry(e)
			if err != nil || sha12(b) != hashes[rel] {
				t.Errorf("recovered %s: err %v, hash %s, want %s", rel, err, sha12(b), hashes[rel])
			}
			files++
		}
		if files < 2 {
			t.Errorf("recovered %d files, want those before the cut", files)
		}
		var cut bool
		for _, p := range res.Problems {
			cut = cut || p.Kind == ProblemTruncated && p.Path != name
		}
		if !cut {
			t.Errorf("the entry cut in the middle is not reported: %v", res.Problems)
		}
	},
}

// wantOnly: the archive lists exactly one file, and every other entry of
// its header listing is a problem of kind.
func wantOnly(t *testing.T, res Result, name, good, kind string) {
	t.Helper()
	wantEntry(t, res, name+"/"+good, nil)
	if len(res.Entries) != 2 {
		t.Errorf("entries %v, want only %s", paths(res), good)
	}
	if len(res.Problems) == 0 {
		t.Error("no problems")
	}
	for _, p := range res.Problems {
		if p.Kind != kind {
			t.Errorf("problem %v, want kind %s", p, kind)
		}
	}
	rows := 0
	for _, l := range readLines(t, filepath.Join(testcorpus.Path(t, "archives"), "hostile", name+".listing.txt")) {
		if strings.Contains(l, " offset=") {
			rows++
		}
	}
	if got := len(res.Problems) + 1; got != rows {
		t.Errorf("%d entries and problems, the archive has %d entries", got, rows)
	}
}

func readLines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// Bounds for every hostile archive, with a wide margin over what they take
// (see the log: all finish in well under 100 ms and a few MiB).
const (
	hostileTime   = 5 * time.Second
	hostileMemory = 64 << 20
)

// TestHostileCorpus: each hostile archive yields its problems quickly and
// within bounded memory, keeps its benign siblings, and every entry it does
// list can be read through Open within the same bounds.
func TestHostileCorpus(t *testing.T) {
	dir := filepath.Join(testcorpus.Path(t, "archives"), "hostile")
	all, _ := filepath.Glob(filepath.Join(dir, "*"))
	var archives []string
	for _, a := range all {
		if !strings.HasSuffix(a, ".txt") {
			archives = append(archives, a)
		}
	}
	if len(archives) == 0 {
		t.Fatal("no hostile archives")
	}
	for _, a := range archives {
		name := filepath.Base(a)
		t.Run(name, func(t *testing.T) {
			var res Result
			var read int64
			growth, took := measure(func() {
				res = resolveFile(t, a, DefaultLimits())
				for _, e := range res.Entries[1:] {
					if e.Dir {
						continue
					}
					b, err := readEntry(e)
					if err != nil {
						t.Errorf("Open %s: %v", e.Path, err)
					}
					read += int64(len(b))
				}
			})
			t.Logf("%d entries, %d problems, truncated %v; %d bytes read back; %v, heap growth %.1f MiB",
				len(res.Entries), len(res.Problems), res.Truncated, read, took.Round(time.Millisecond), float64(growth)/(1<<20))
			if took > hostileTime {
				t.Errorf("took %v, want < %v", took, hostileTime)
			}
			if growth > hostileMemory {
				t.Errorf("heap grew %d MiB, want < %d", growth>>20, hostileMemory>>20)
			}
			if len(res.Problems) == 0 {
				t.Error("a hostile archive with no problems")
			}
			for _, p := range res.Problems {
				if p.Path == "" || p.Reason == "" || p.Kind == "" {
					t.Errorf("incomplete problem %+v", p)
				}
			}
			if check, ok := hostileCases[name]; ok {
				check(t, name, res)
			}
		})
	}
}
