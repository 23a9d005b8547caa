package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/plugins/containers/archive"
)

// TestEncryptedOnly: an archive nothing of which can be read without its
// password is told apart from one with readable files (libarchive's test
// archives, testdata/corpus).
func TestEncryptedOnly(t *testing.T) {
	for _, c := range []struct {
		file string
		want bool
	}{
		{"libarchive-rar4-encrypted-data.rar", true},
		{"libarchive-7zip-encrypted.7z", true},
		{"libarchive-rar4.rar", false},
		{"libarchive-rar5-symlink.rar", false},
	} {
		b := testcorpus.Read(t, "archives", "formats", c.file)
		files := 0
		res, err := archive.Walk(context.Background(), bytes.NewReader(b), int64(len(b)), c.file, archive.DefaultLimits(), func(e archive.Entry, _ io.Reader) error {
			if e.Depth > 0 && !e.Dir && e.Container == archive.None {
				files++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := encryptedOnly(res, files); got != c.want {
			t.Errorf("%s: encryptedOnly %v, want %v (problems %+v)", c.file, got, c.want, res.Problems)
		}
	}
}
