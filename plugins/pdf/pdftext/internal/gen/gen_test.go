package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRegenerateSameBytes: the committed aglist.go and stdmetrics.go are
// exactly what the generator makes from the committed source data, so an
// edit of either by hand (or of the data without `go generate`) fails here.
func TestRegenerateSameBytes(t *testing.T) {
	out := t.TempDir()
	if err := run(".", out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"aglist.go", "stdmetrics.go", "uninames.go"} {
		want, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the generator makes: run `go generate ./plugins/pdf/pdftext`", name)
		}
	}
}
