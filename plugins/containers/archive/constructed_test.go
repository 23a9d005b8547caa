package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func randomBytes(n int, seed uint64) []byte {
	var key [32]byte
	key[0] = byte(seed)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// TestDepth nests zips seven deep (z0 ⊃ z1 ⊃ … ⊃ z6 ⊃ deep.txt), stored and
// deflated by turns, so nested zips are read both in place and from memory.
func TestDepth(t *testing.T) {
	inner := buildZip(t, zfile{name: "deep.txt", data: []byte("deepest")})
	for k := 5; k >= 0; k-- {
		method := zip.Store
		if k%2 == 1 {
			method = zip.Deflate
		}
		inner = buildZip(t,
			zfile{name: "note.txt", data: []byte(fmt.Sprintf("note at depth %d", k+1)), method: zip.Deflate},
			zfile{name: fmt.Sprintf("z%d.zip", k+1), data: inner, method: method})
	}
	chain := func(k int) string { // path of z_k
		p := "z0.zip"
		for i := 1; i <= k; i++ {
			p += fmt.Sprintf("/z%d.zip", i)
		}
		return p
	}
	for _, tc := range []struct {
		maxDepth   int
		notesUpTo  int // the deepest note listed
		notOpened  string
		deepListed bool
	}{
		{maxDepth: 5, notesUpTo: 5, notOpened: chain(5)},
		{maxDepth: 6, notesUpTo: 6, notOpened: chain(6)},
		{maxDepth: 7, notesUpTo: 6, deepListed: true},
	} {
		t.Run("MaxDepth="+strconv.Itoa(tc.maxDepth), func(t *testing.T) {
			res := resolveBytes(t, inner, "z0.zip", Limits{MaxDepth: tc.maxDepth})
			for k := 0; k < 6; k++ {
				p := chain(k) + "/note.txt"
				e, ok := entryByPath(res, p)
				if listed := k+1 <= tc.notesUpTo; ok != listed {
					t.Errorf("%s listed %v, want %v", p, ok, listed)
				} else if ok {
					if e.Depth != k+1 {
						t.Errorf("%s: depth %d, want %d", p, e.Depth, k+1)
					}
					wantEntry(t, res, p, []byte(fmt.Sprintf("note at depth %d", k+1)))
				}
			}
			if tc.notOpened != "" {
				wantProblem(t, res, tc.notOpened, ProblemDepth)
				if len(res.Problems) != 1 {
					t.Errorf("problems %v", res.Problems)
				}
			}
			_, ok := entryByPath(res, chain(6)+"/deep.txt")
			if ok != tc.deepListed {
				t.Errorf("deep.txt listed %v, want %v", ok, tc.deepListed)
			}
		})
	}
}

// TestMixedNesting resolves every format inside every other, and reads each
// file back through Open: a zip inside a compressed tar (from memory), a tar
// inside a deflated zip entry (a stream), a gzip file inside that tar.
func TestMixedNesting(t *testing.T) {
	report := bytes.Repeat([]byte("quarterly figures\n"), 500)
	readme := []byte("# read me\n")
	dataTar := buildTar(t,
		tfile{tar.Header{Name: "sub/", Typeflag: tar.TypeDir, Mode: 0o755}, nil},
		reg("sub/report.txt.gz", gzipBytes(t, report)))
	innerZip := buildZip(t, zfile{name: "data.tar", data: dataTar, method: zip.Deflate})
	outer := gzipBytes(t, buildTar(t, reg("docs/readme.md", readme), reg("inner.zip", innerZip)))

	res := resolveBytes(t, outer, "outer.tgz", Limits{})
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	want := []struct {
		path  string
		kind  Kind
		depth int
		data  []byte
	}{
		{"outer.tgz", Gzip, 0, outer},
		{"outer.tgz/docs/readme.md", None, 1, readme},
		{"outer.tgz/inner.zip", Zip, 1, innerZip},
		{"outer.tgz/inner.zip/data.tar", Tar, 2, dataTar},
		{"outer.tgz/inner.zip/data.tar/sub", None, 3, nil},
		{"outer.tgz/inner.zip/data.tar/sub/report.txt.gz", Gzip, 3, gzipBytes(t, report)},
		{"outer.tgz/inner.zip/data.tar/sub/report.txt.gz/report.txt", None, 4, report},
	}
	if len(res.Entries) != len(want) {
		t.Fatalf("entries %v", paths(res))
	}
	for i, w := range want {
		e := res.Entries[i]
		if e.Path != w.path || e.Container != w.kind || e.Depth != w.depth {
			t.Errorf("entry %d = %s %v depth %d, want %s %v depth %d", i, e.Path, e.Container, e.Depth, w.path, w.kind, w.depth)
		}
		if w.data != nil {
			wantEntry(t, res, w.path, w.data)
		}
	}
	if e := res.Entries[6]; e.MIMEType != "text/plain; charset=utf-8" {
		t.Errorf("report.txt MIME %q", e.MIMEType)
	}
}

func TestHostileNames(t *testing.T) {
	good := zfile{name: "good.txt", data: []byte("fine")}
	cases := []struct {
		name, kind string
	}{
		{"/etc/passwd", ProblemTraversal},
		{"//server/share/x", ProblemTraversal},
		{"C:/Windows/x.txt", ProblemTraversal},
		{"c:x.txt", ProblemTraversal},
		{`dir\..\x.txt`, ProblemTraversal},
		{"a/../../b.txt", ProblemTraversal},
		{"a/b/..", ProblemTraversal},
		{"..", ProblemTraversal},
		{"nul\x00.txt", ProblemTraversal},
		{"ctrl\x01.txt", ProblemName},
		{"./", ProblemName},
		{strings.Repeat("x/", 3000) + "y", ProblemName},
	}
	files := []zfile{good}
	for _, c := range cases {
		f := zfile{name: c.name, data: []byte("evil")}
		if strings.HasSuffix(c.name, "/") {
			f.data = nil // zip.Writer writes no data to a directory name
		}
		files = append(files, f)
	}
	files = append(files, zfile{name: "./ok/./fine.txt", data: []byte("also fine")})
	res := resolveBytes(t, buildZip(t, files...), "names.zip", Limits{})
	wantEntry(t, res, "names.zip/good.txt", []byte("fine"))
	wantEntry(t, res, "names.zip/ok/fine.txt", []byte("also fine"))
	if len(res.Problems) != len(cases) {
		t.Errorf("%d problems for %d hostile names: %v", len(res.Problems), len(cases), res.Problems)
	}
	for _, c := range cases {
		wantProblem(t, res, "names.zip/"+display(c.name), c.kind)
	}
	for _, e := range res.Entries {
		for _, seg := range strings.Split(e.Path, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Errorf("entry path %q", e.Path)
			}
		}
	}

	// The same names in a tar (which cannot hold NUL).
	var tfiles []tfile
	for _, f := range files {
		if !strings.Contains(f.name, "\x00") && f.data != nil {
			tfiles = append(tfiles, reg(f.name, f.data))
		}
	}
	tres := resolveBytes(t, buildTar(t, tfiles...), "names.tar", Limits{})
	wantEntry(t, tres, "names.tar/good.txt", []byte("fine"))
	wantEntry(t, tres, "names.tar/ok/fine.txt", []byte("also fine"))
	if len(tres.Problems) != len(cases)-2 {
		t.Errorf("tar: %d problems for %d hostile names: %v", len(tres.Problems), len(cases)-2, tres.Problems)
	}
}

func TestDuplicates(t *testing.T) {
	z := buildZip(t,
		zfile{name: "a.txt", data: []byte("first")},
		zfile{name: "a.txt", data: []byte("second")},
		zfile{name: "d/"},
		zfile{name: "d/"}, // a repeated directory is harmless and not reported
		zfile{name: "d", data: []byte("file over dir")},
		zfile{name: "./a.txt", data: []byte("third")},
		zfile{name: "d/b.txt", data: []byte("b")},
	)
	tr := buildTar(t, reg("a.txt", []byte("first")), reg("a.txt", []byte("second")), reg("./a.txt", []byte("third")), reg("b.txt", []byte("b")))
	for _, tc := range []struct {
		name string
		data []byte
		dups int
		sib  string
	}{
		{"dups.zip", z, 3, "d/b.txt"},
		{"dups.tar", tr, 2, "b.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resolveBytes(t, tc.data, tc.name, Limits{})
			wantEntry(t, res, tc.name+"/a.txt", []byte("first"))
			wantEntry(t, res, tc.name+"/"+tc.sib, []byte("b"))
			n := 0
			for _, p := range res.Problems {
				if p.Kind != ProblemDuplicate {
					t.Errorf("problem %v", p)
				}
				n++
			}
			if n != tc.dups {
				t.Errorf("%d duplicates, want %d: %v", n, tc.dups, res.Problems)
			}
			seen := map[string]bool{}
			for _, e := range res.Entries {
				if seen[e.Path] {
					t.Errorf("%s listed twice", e.Path)
				}
				seen[e.Path] = true
			}
		})
	}
}

// TestFolder resolves folders given as an fs.FS: links are reported and not
// followed, archives inside are resolved, files are read in place.
func TestFolder(t *testing.T) {
	zipped := buildZip(t, zfile{name: "in/zipped.txt", data: []byte("zipped"), method: zip.Deflate})
	t.Run("MapFS", func(t *testing.T) {
		fsys := fstest.MapFS{
			"a.txt":            {Data: []byte("alpha")},
			"sub/b.pdf":        {Data: []byte("%PDF-1.7 tiny")},
			"sub/bundle.zip":   {Data: zipped},
			"sub/passwd":       {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink},
			"sub/linkdir":      {Data: []byte("../.."), Mode: fs.ModeSymlink},
			"sub/fifo":         {Mode: fs.ModeNamedPipe},
			"sub/deeper/c.csv": {Data: []byte("x,y\n1,2\n")},
		}
		res, err := ResolveFS(context.Background(), fsys, "upload", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Entries[0]; e.Path != "upload" || !e.Dir || e.Depth != 0 {
			t.Errorf("first entry %+v", e)
		}
		wantEntry(t, res, "upload/a.txt", []byte("alpha"))
		wantEntry(t, res, "upload/sub/b.pdf", []byte("%PDF-1.7 tiny"))
		wantEntry(t, res, "upload/sub/deeper/c.csv", []byte("x,y\n1,2\n"))
		wantEntry(t, res, "upload/sub/bundle.zip", zipped)
		wantEntry(t, res, "upload/sub/bundle.zip/in/zipped.txt", []byte("zipped"))
		wantProblem(t, res, "upload/sub/passwd", ProblemSymlink)
		wantProblem(t, res, "upload/sub/linkdir", ProblemSymlink)
		wantProblem(t, res, "upload/sub/fifo", ProblemSpecial)
		if p, _ := problemAt(res, "upload/sub/passwd"); !strings.Contains(p.Reason, "/etc/passwd") {
			t.Errorf("reason does not name the target: %q", p.Reason)
		}
		if e, _ := entryByPath(res, "upload/sub/b.pdf"); e.MIMEType != "application/pdf" || e.Depth != 1 {
			t.Errorf("b.pdf: %+v", e)
		}
		if e, _ := entryByPath(res, "upload/sub/bundle.zip/in/zipped.txt"); e.Depth != 2 {
			t.Errorf("zipped.txt depth %d", e.Depth)
		}
	})
	t.Run("DirFS", func(t *testing.T) {
		outside := t.TempDir()
		if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("ok"), 0o600)
		os.WriteFile(filepath.Join(dir, "bundle.zip"), zipped, 0o600)
		if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
			t.Skip("no symlinks here:", err)
		}
		os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "secret.txt"))
		res, err := ResolveFS(context.Background(), os.DirFS(dir), "folder", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		wantEntry(t, res, "folder/ok.txt", []byte("ok"))
		wantEntry(t, res, "folder/bundle.zip/in/zipped.txt", []byte("zipped"))
		wantProblem(t, res, "folder/escape", ProblemSymlink)
		wantProblem(t, res, "folder/secret.txt", ProblemSymlink)
		for _, e := range res.Entries {
			if strings.HasPrefix(e.Path, "folder/escape/") {
				t.Errorf("followed the link: %s", e.Path)
			}
		}
	})
	t.Run("Unreadable", func(t *testing.T) {
		_, err := ResolveFS(context.Background(), os.DirFS(filepath.Join(t.TempDir(), "missing")), "gone", Limits{})
		if err == nil {
			t.Error("no error for a folder that does not exist")
		}
	})
}

func TestEncryptedAndUnsupported(t *testing.T) {
	z := buildZip(t,
		zfile{name: "secret.txt", data: []byte("ciphertext, really"), flags: 0x1},
		zfile{name: "plain.txt", data: []byte("plain")},
	)
	res := resolveBytes(t, z, "enc.zip", Limits{})
	wantProblem(t, res, "enc.zip/secret.txt", ProblemEncrypted)
	wantEntry(t, res, "enc.zip/plain.txt", []byte("plain"))

	// Method 14 (LZMA): patch the method in both headers of a stored entry.
	z = buildZip(t, zfile{name: "lzma.bin", data: []byte("xxxx")}, zfile{name: "plain.txt", data: []byte("plain")})
	z = bytes.Replace(z, []byte("PK\x03\x04\x14\x00\x08\x00\x08\x00"), []byte("PK\x03\x04\x14\x00\x08\x00\x0e\x00"), 1)
	i := bytes.Index(z, []byte("PK\x01\x02"))
	z[i+10] = 14
	res = resolveBytes(t, z, "lzma.zip", Limits{})
	wantProblem(t, res, "lzma.zip/lzma.bin", ProblemUnsupported)
	wantEntry(t, res, "lzma.zip/plain.txt", []byte("plain"))
}

var expandedRE = regexp.MustCompile(`expanded (\d+) bytes`)

// expandedBefore reads how far a stream was expanded before it was stopped.
func expandedBefore(t *testing.T, p Problem) int64 {
	t.Helper()
	m := expandedRE.FindStringSubmatch(p.Reason)
	if m == nil {
		t.Fatalf("reason does not say how far it expanded: %q", p.Reason)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func TestBombs(t *testing.T) {
	small := Limits{RatioFloor: 1 << 20}
	zeros := make([]byte, 16<<20)

	t.Run("gzip stopped at the floor", func(t *testing.T) {
		res := resolveBytes(t, gzipBytes(t, zeros), "zeros.bin.gz", small)
		p, ok := problemAt(res, "zeros.bin.gz/zeros.bin")
		if !ok || p.Kind != ProblemBomb {
			t.Fatalf("problems %v", res.Problems)
		}
		if n := expandedBefore(t, p); n > small.RatioFloor+256<<10 {
			t.Errorf("expanded %d bytes before stopping, floor %d", n, small.RatioFloor)
		}
	})

	t.Run("tgz member stopped while skipping it", func(t *testing.T) {
		// 2 MiB of noise first, so the overall ratio (by declared sizes) lets
		// the zeros through and the stream meter has to catch them.
		noise := randomBytes(2<<20, 1)
		tgz := gzipBytes(t, buildTar(t, reg("noise.bin", noise), reg("zeros.bin", zeros), reg("after.txt", []byte("after"))))
		res := resolveBytes(t, tgz, "b.tgz", small)
		wantEntry(t, res, "b.tgz/noise.bin", noise)
		p, ok := problemAt(res, "b.tgz/zeros.bin")
		if !ok || p.Kind != ProblemBomb {
			t.Fatalf("problems %v", res.Problems)
		}
		if n := expandedBefore(t, p); n > small.RatioFloor+256<<10 {
			t.Errorf("expanded %d bytes of the member before stopping", n)
		}
		if _, ok := entryByPath(res, "b.tgz/after.txt"); ok {
			t.Error("read past the bomb")
		}
	})

	t.Run("tgz member stopped by the overall ratio", func(t *testing.T) {
		tgz := gzipBytes(t, buildTar(t, reg("first.txt", []byte("first")), reg("zeros.bin", zeros)))
		res := resolveBytes(t, tgz, "c.tgz", small)
		wantEntry(t, res, "c.tgz/first.txt", []byte("first"))
		wantProblem(t, res, "c.tgz/zeros.bin", ProblemBomb)
		if !res.Truncated {
			t.Error("not truncated")
		}
	})

	t.Run("zip header understates the size", func(t *testing.T) {
		z := buildZip(t, zfile{name: "liar.bin", data: zeros[:4<<20], declare: 100}, zfile{name: "ok.txt", data: []byte("ok")})
		res := resolveBytes(t, z, "liar.zip", small)
		wantEntry(t, res, "liar.zip/ok.txt", []byte("ok"))
		e, ok := entryByPath(res, "liar.zip/liar.bin")
		if !ok || e.Size != 100 {
			t.Fatalf("liar.bin: %+v %v", e, ok)
		}
		_, err := readEntry(e)
		if !errors.Is(err, ErrBomb) {
			t.Errorf("reading past the declared size: %v, want ErrBomb", err)
		}
	})

	t.Run("nested zip with an understated size", func(t *testing.T) {
		inner := buildZip(t, zfile{name: "x.txt", data: zeros[:1<<20]})
		z := buildZip(t, zfile{name: "inner.zip", data: inner, declare: 1000}, zfile{name: "ok.txt", data: []byte("ok")})
		res := resolveBytes(t, z, "nest.zip", small)
		wantEntry(t, res, "nest.zip/ok.txt", []byte("ok"))
		if p, ok := problemAt(res, "nest.zip/inner.zip"); !ok || p.Kind != ProblemBomb {
			t.Errorf("problems %v", res.Problems)
		}
	})
}

func TestLimits(t *testing.T) {
	mib := func(seed uint64) []byte { return randomBytes(1<<20, seed) }
	t.Run("total bytes end the walk", func(t *testing.T) {
		z := buildZip(t, zfile{name: "1.bin", data: mib(1)}, zfile{name: "2.bin", data: mib(2)}, zfile{name: "3.bin", data: mib(3)})
		res := resolveBytes(t, z, "t.zip", Limits{MaxTotalBytes: 5 << 19})
		wantEntry(t, res, "t.zip/1.bin", mib(1))
		wantEntry(t, res, "t.zip/2.bin", mib(2))
		wantProblem(t, res, "t.zip/3.bin", ProblemLimit)
		if !res.Truncated {
			t.Error("not truncated")
		}
	})
	t.Run("file count ends the walk", func(t *testing.T) {
		var files []zfile
		for i := range 6 {
			files = append(files, zfile{name: fmt.Sprintf("f%d.txt", i), data: []byte("x")})
		}
		res := resolveBytes(t, buildZip(t, files...), "n.zip", Limits{MaxFiles: 4})
		if len(res.Entries) != 5 || !res.Truncated {
			t.Errorf("entries %v, truncated %v", paths(res), res.Truncated)
		}
		wantProblem(t, res, "n.zip/f4.txt", ProblemLimit)
	})
	t.Run("one large file is skipped", func(t *testing.T) {
		z := buildZip(t, zfile{name: "big.bin", data: randomBytes(3<<20, 4)}, zfile{name: "small.txt", data: []byte("s")})
		res := resolveBytes(t, z, "f.zip", Limits{MaxFileBytes: 2 << 20})
		wantProblem(t, res, "f.zip/big.bin", ProblemLimit)
		wantEntry(t, res, "f.zip/small.txt", []byte("s"))
		if res.Truncated {
			t.Error("truncated")
		}
	})
	t.Run("nested zip over the memory budget", func(t *testing.T) {
		inner := buildZip(t, zfile{name: "noise.bin", data: randomBytes(3<<20, 5)})
		z := buildZip(t,
			zfile{name: "big.zip", data: inner, method: zip.Deflate},
			zfile{name: "stored.zip", data: inner}, // stored: read in place, no budget needed
			zfile{name: "s.txt", data: []byte("s")})
		res := resolveBytes(t, z, "m.zip", Limits{MaxTotalBytes: 32 << 20}) // budget 2 MiB
		wantProblem(t, res, "m.zip/big.zip", ProblemLimit)
		wantEntry(t, res, "m.zip/big.zip", inner)
		wantEntry(t, res, "m.zip/stored.zip/noise.bin", randomBytes(3<<20, 5))
		wantEntry(t, res, "m.zip/s.txt", []byte("s"))
	})
}

func TestTarEntries(t *testing.T) {
	hdr := func(name string, typ byte, link string) tfile {
		return tfile{tar.Header{Name: name, Typeflag: typ, Linkname: link, Mode: 0o644}, nil}
	}
	body := randomBytes(100_000, 6)
	tr := buildTar(t,
		reg("good.txt", []byte("good")),
		hdr("etc", tar.TypeSymlink, "/etc"),
		reg("etc/cron.d/evil", []byte("evil")),
		hdr("hard", tar.TypeLink, "good.txt"),
		hdr("pipe", tar.TypeFifo, ""),
		hdr("dev", tar.TypeChar, ""),
		reg("../up.txt", []byte("up")),
		reg("big/body.bin", body),
	)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"t.tar", tr},                  // random access: members read in place
		{"t.tar.gz", gzipBytes(t, tr)}, // a stream: members reached by re-expanding
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resolveBytes(t, tc.data, tc.name, Limits{})
			wantEntry(t, res, tc.name+"/good.txt", []byte("good"))
			wantEntry(t, res, tc.name+"/big/body.bin", body)
			wantProblem(t, res, tc.name+"/etc", ProblemSymlink)
			wantProblem(t, res, tc.name+"/etc/cron.d/evil", ProblemSymlink)
			wantProblem(t, res, tc.name+"/hard", ProblemSymlink)
			wantProblem(t, res, tc.name+"/pipe", ProblemSpecial)
			wantProblem(t, res, tc.name+"/dev", ProblemSpecial)
			wantProblem(t, res, tc.name+"/../up.txt", ProblemTraversal)
			if len(res.Problems) != 6 {
				t.Errorf("problems %v", res.Problems)
			}
		})
	}
}

// TestTruncated cuts archives of each kind and keeps what came before.
func TestTruncated(t *testing.T) {
	a, b, c := randomBytes(40_000, 7), randomBytes(40_000, 8), randomBytes(40_000, 9)

	t.Run("zip with data descriptors, no directory", func(t *testing.T) {
		// zip.Writer streams: sizes come after the data, in descriptors.
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i, d := range [][]byte{a, b, c} {
			w, _ := zw.Create(fmt.Sprintf("%d.bin", i))
			w.Write(d)
		}
		zw.Close()
		z := buf.Bytes()
		for _, cut := range []int{bytes.Index(z, []byte("PK\x01\x02")), len(z) * 3 / 4} {
			res := resolveBytes(t, z[:cut], "cut.zip", Limits{})
			wantProblem(t, res, "cut.zip", ProblemTruncated)
			wantEntry(t, res, "cut.zip/0.bin", a)
			wantEntry(t, res, "cut.zip/1.bin", b)
			if cut < bytes.Index(z, []byte("PK\x01\x02")) {
				wantProblem(t, res, "cut.zip/2.bin", ProblemTruncated)
			} else {
				wantEntry(t, res, "cut.zip/2.bin", c)
			}
		}
	})
	t.Run("tgz", func(t *testing.T) {
		tgz := gzipBytes(t, buildTar(t, reg("a.bin", a), reg("b.bin", b), reg("c.bin", c)))
		res := resolveBytes(t, tgz[:len(tgz)/2], "cut.tgz", Limits{})
		wantEntry(t, res, "cut.tgz/a.bin", a)
		var found bool
		for _, p := range res.Problems {
			found = found || p.Kind == ProblemTruncated
		}
		if !found {
			t.Errorf("problems %v", res.Problems)
		}
	})
	t.Run("gz", func(t *testing.T) {
		gz := gzipBytes(t, a)
		res := resolveBytes(t, gz[:len(gz)-100], "a.bin.gz", Limits{})
		wantProblem(t, res, "a.bin.gz/a.bin", ProblemTruncated)
	})
	t.Run("tar", func(t *testing.T) {
		tr := buildTar(t, reg("a.bin", a), reg("b.bin", b))
		res := resolveBytes(t, tr[:60_000], "cut.tar", Limits{})
		wantEntry(t, res, "cut.tar/a.bin", a)
		if len(res.Problems) == 0 || res.Problems[len(res.Problems)-1].Kind != ProblemTruncated {
			t.Errorf("problems %v", res.Problems)
		}
	})
}

func TestPlainFileAndEmpty(t *testing.T) {
	res := resolveBytes(t, []byte("%PDF-1.4 not a container"), "doc", Limits{})
	if len(res.Entries) != 1 || res.Entries[0].Container != None || res.Entries[0].MIMEType != "application/pdf" {
		t.Errorf("entries %+v", res.Entries)
	}
	res = resolveBytes(t, nil, "empty.zip", Limits{})
	if len(res.Entries) != 1 || len(res.Problems) != 0 {
		t.Errorf("empty input: %+v", res)
	}
	res = resolveBytes(t, buildZip(t), "nothing.zip", Limits{})
	if len(res.Entries) != 1 || res.Entries[0].Container != Zip || len(res.Problems) != 0 {
		t.Errorf("empty zip: %+v", res)
	}
}

// failingReader fails every read beyond off.
type failingReader struct {
	r   io.ReaderAt
	off int64
}

var errDisk = errors.New("range read failed")

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.off {
		return 0, errDisk
	}
	return f.r.ReadAt(p, off)
}

func TestInputErrors(t *testing.T) {
	z := buildZip(t, zfile{name: "a.txt", data: randomBytes(2000, 10)})
	_, err := Resolve(context.Background(), failingReader{bytes.NewReader(z), 0}, int64(len(z)), "x.zip", Limits{})
	if !errors.Is(err, errDisk) {
		t.Errorf("unreadable input: %v", err)
	}
	_, err = Resolve(context.Background(), failingReader{bytes.NewReader(z), 1000}, int64(len(z)), "x.zip", Limits{})
	if !errors.Is(err, errDisk) {
		t.Errorf("input failing later: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Resolve(ctx, bytes.NewReader(z), int64(len(z)), "x.zip", Limits{})
	if !errors.Is(err, context.Canceled) || !res.Truncated {
		t.Errorf("canceled: %v, truncated %v", err, res.Truncated)
	}
}

func TestDetect(t *testing.T) {
	tr := buildTar(t, reg("a.txt", []byte("a")))
	v7 := bytes.Clone(tr[:512])
	copy(v7[257:265], make([]byte, 8)) // no ustar magic: a v7 header
	sum := 0
	for i, b := range v7 {
		if i >= 148 && i < 156 {
			b = ' '
		}
		sum += int(b)
	}
	copy(v7[148:156], fmt.Sprintf("%06o\x00 ", sum))
	docx := buildZip(t, zfile{name: "[Content_Types].xml", data: []byte("<Types/>")})
	for _, tc := range []struct {
		head []byte
		name string
		want Kind
	}{
		{buildZip(t, zfile{name: "a", data: []byte("a")}), "x.zip", Zip},
		{buildZip(t, zfile{name: "a", data: []byte("a")}), "renamed.bin", Zip},
		{buildZip(t, zfile{name: "a", data: []byte("a")}), "report.DOCX", None},
		{docx, "unnamed", None},
		{buildZip(t), "empty.zip", Zip},
		{gzipBytes(t, []byte("x")), "x.gz", Gzip},
		{tr, "x.tar", Tar},
		{v7, "old.tar", Tar},
		{[]byte("%PDF-1.7"), "x.zip", None},
		{make([]byte, 1024), "zeros.tar", None},
		{nil, "x.zip", None},
	} {
		if got := Detect(tc.head[:min(len(tc.head), HeadSize)], tc.name); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCleanName(t *testing.T) {
	for _, tc := range []struct {
		raw, name string
		dir       bool
		kind      string
	}{
		{"a/b.txt", "a/b.txt", false, ""},
		{"./a//b/./c/", "a/b/c", true, ""},
		{"../a", "", false, ProblemTraversal},
		{"a/..", "", false, ProblemTraversal},
		{"/a", "", false, ProblemTraversal},
		{`a\b`, "", false, ProblemTraversal},
		{"Z:a", "", false, ProblemTraversal},
		{"a\x00b", "", false, ProblemTraversal},
		{"a\x7fb", "", false, ProblemName},
		{".", "", false, ProblemName},
		{"1:2", "1:2", false, ""},
		{"Grüße/ü.txt", "Grüße/ü.txt", false, ""},
	} {
		name, dir, kind, _ := cleanName(tc.raw)
		if name != tc.name || dir != tc.dir || kind != tc.kind {
			t.Errorf("cleanName(%q) = %q %v %q, want %q %v %q", tc.raw, name, dir, kind, tc.name, tc.dir, tc.kind)
		}
	}
}

// overlapping builds a zip whose n central directory records all point at
// one local entry: Fifield's non-recursive zip bomb in its simplest form.
// Each record alone is harmless; together they declare n times the data.
func overlapping(t *testing.T, data []byte, n int) []byte {
	z := buildZip(t, zfile{name: "k", data: data, method: zip.Deflate})
	cd := bytes.Index(z, []byte("PK\x01\x02"))
	end := bytes.LastIndex(z, []byte("PK\x05\x06"))
	var out bytes.Buffer
	out.Write(z[:cd])
	for i := range n {
		name := fmt.Sprintf("f%05d.bin", i)
		h := bytes.Clone(z[cd : cd+46])
		binary.LittleEndian.PutUint16(h[28:], uint16(len(name)))
		binary.LittleEndian.PutUint16(h[30:], 0)
		binary.LittleEndian.PutUint16(h[32:], 0)
		out.Write(h)
		out.WriteString(name)
	}
	eocd := bytes.Clone(z[end : end+22])
	binary.LittleEndian.PutUint16(eocd[8:], uint16(n))
	binary.LittleEndian.PutUint16(eocd[10:], uint16(n))
	binary.LittleEndian.PutUint32(eocd[12:], uint32(out.Len()-cd))
	binary.LittleEndian.PutUint32(eocd[16:], uint32(cd))
	out.Write(eocd)
	return out.Bytes()
}

func TestOverlappingEntries(t *testing.T) {
	z := overlapping(t, make([]byte, 4<<20), 1000) // 4 GB declared in 60 KB
	var res Result
	growth, took := measure(func() { res = resolveBytes(t, z, "overlap.zip", Limits{}) })
	t.Logf("%d bytes: %d entries, %d problems in %v, heap growth %.1f MiB", len(z), len(res.Entries), len(res.Problems), took, float64(growth)/(1<<20))
	if !res.Truncated || res.Problems[len(res.Problems)-1].Kind != ProblemBomb {
		t.Errorf("truncated %v, problems %v", res.Truncated, res.Problems)
	}
	if len(res.Entries) > 10 {
		t.Errorf("%d entries listed before the overall ratio stopped the walk", len(res.Entries))
	}
	wantEntry(t, res, "overlap.zip/f00000.bin", make([]byte, 4<<20))
}
