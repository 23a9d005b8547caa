package testcorpus_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestManifest: every file the manifest names is in the corpus, every
// document in the corpus is named by the manifest with a source and a
// licence, and the whole stays small enough for a repository.
func TestManifest(t *testing.T) {
	dir := testcorpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "\t")
		if line == 0 {
			if len(fields) < 5 || fields[0] != "path" || fields[3] != "source" || fields[4] != "license" {
				t.Fatalf("manifest header: %q", sc.Text())
			}
			continue
		}
		if len(fields) < 5 || fields[3] == "" || fields[4] == "" {
			t.Errorf("manifest line %d lacks a source or a licence: %q", line+1, sc.Text())
			continue
		}
		listed[fields[0]] = true
		if _, err := os.Stat(filepath.Join(dir, fields[0])); err != nil {
			t.Errorf("manifest names a missing file: %v", err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var total int64
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch filepath.Ext(rel) {
		case ".pdf", ".docx", ".xlsx", ".pptx", ".zip", ".tar", ".gz",
			".odt", ".ods", ".odp", ".rtf", ".doc", ".xls", ".bz2", ".xz", ".7z", ".rar":
			if !strings.Contains(rel, ".pages/") && !listed[rel] {
				t.Errorf("%s is not in MANIFEST.tsv (source and licence)", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > 40<<20 {
		t.Errorf("the corpus is %d MB: keep it small (tens of MB at most)", total>>20)
	}
}

// TestLookups: the helpers find files from a package folder, and a pattern
// that matches nothing fails the test instead of skipping it.
func TestLookups(t *testing.T) {
	if b := testcorpus.Read(t, "pdf", "ocrmypdf-invalid-header-eof.pdf"); len(b) != 44 {
		t.Fatalf("read %d bytes, want 44", len(b))
	}
	if m := testcorpus.Glob(t, "office", "docx", "*.docx"); len(m) == 0 {
		t.Fatal("no docx")
	}
	ft := &fakeTB{TB: t}
	func() {
		defer func() { recover() }()
		testcorpus.Glob(ft, "nosuch", "*.none")
	}()
	if !ft.failed || ft.skipped {
		t.Fatalf("an empty glob: failed %v, skipped %v", ft.failed, ft.skipped)
	}
}

// fakeTB records a failure or a skip instead of ending the test.
type fakeTB struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
func (f *fakeTB) Skipf(string, ...any) {
	f.skipped = true
	panic("skip")
}
