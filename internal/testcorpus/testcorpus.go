// Package testcorpus locates the documents the tests read: testdata/corpus
// at the repository's root (real PDFs, Office files, benign and hostile
// archives; its README.md and MANIFEST.tsv say where each comes from and
// under which licence). Tests read nothing outside the repository, so a
// fresh clone runs them all; a missing corpus is a broken checkout and fails
// the test rather than skipping it.
package testcorpus

import (
	"os"
	"path/filepath"
	"testing"
)

// manifest marks the corpus folder; it is looked for under each parent of
// the working directory, which `go test` sets to the package's folder.
const manifest = "testdata/corpus/MANIFEST.tsv"

// Dir returns the absolute path of the corpus folder.
func Dir(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatalf("testcorpus: %v", err)
	}
	for dir := wd; ; {
		_, merr := os.Stat(filepath.Join(dir, manifest))
		_, gerr := os.Stat(filepath.Join(dir, "go.mod"))
		if merr == nil && gerr == nil {
			return filepath.Join(dir, filepath.Dir(manifest))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("testcorpus: no %s in %s or any parent folder (the repository's checkout is incomplete)", manifest, wd)
		}
		dir = parent
	}
}

// Path joins parts (slash-free names, or slash-separated paths) under the
// corpus folder. The file need not exist.
func Path(tb testing.TB, parts ...string) string {
	tb.Helper()
	return filepath.Join(append([]string{Dir(tb)}, parts...)...)
}

// Read returns the bytes of one corpus file.
func Read(tb testing.TB, parts ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, parts...))
	if err != nil {
		tb.Fatalf("testcorpus: %v", err)
	}
	return b
}

// Glob returns the corpus files that match the pattern joined from parts,
// sorted; it fails the test when none does, since every pattern the tests
// use names files the corpus holds.
func Glob(tb testing.TB, parts ...string) []string {
	tb.Helper()
	pattern := Path(tb, parts...)
	m, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatalf("testcorpus: %v", err)
	}
	if len(m) == 0 {
		tb.Fatalf("testcorpus: no file matches %s", pattern)
	}
	return m
}
