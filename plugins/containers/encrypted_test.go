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
		{"constructed-zipcrypto.zip", true},  // Info-ZIP zip -P
		{"constructed-winzip-aes.zip", true}, // p7zip, WinZip AE-2
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
		if got := encryptedOnly(res, files, false); got != c.want {
			t.Errorf("%s: encryptedOnly %v, want %v (problems %+v)", c.file, got, c.want, res.Problems)
		}
	}
}

// TestWalkWithPassword: libarchive's encrypted test archives (their
// password is "12345678", as libarchive's test_archive_read_validate_passphrase.c
// and test_read_format_7zip_encryption_data.c give it) are read with the right password, and a wrong one leaves them
// encrypted with nothing read.
func TestWalkWithPassword(t *testing.T) {
	for _, c := range []struct {
		file, password string
		wantFiles      bool
	}{
		{"libarchive-rar4-encrypted-data.rar", "12345678", true},
		{"libarchive-7zip-encrypted.7z", "12345678", true},
		{"libarchive-rar4-encrypted-data.rar", "wrong", false},
		{"libarchive-7zip-encrypted.7z", "wrong", false},
	} {
		t.Run(c.file+"/"+c.password, func(t *testing.T) {
			b := testcorpus.Read(t, "archives", "formats", c.file)
			files := 0
			var read []byte
			res, err := archive.WalkWithPassword(context.Background(), bytes.NewReader(b), int64(len(b)), c.file, c.password, archive.DefaultLimits(), func(e archive.Entry, r io.Reader) error {
				if e.Depth > 0 && !e.Dir && e.Container == archive.None {
					data, err := io.ReadAll(r)
					if err != nil {
						return nil // reported as the entry's problem
					}
					files++
					read = append(read, data...)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.wantFiles {
				if files == 0 || len(read) == 0 || encryptedOnly(res, files, true) {
					t.Fatalf("with the right password: %d files, %d bytes read, problems %+v", files, len(read), res.Problems)
				}
				return
			}
			if !encryptedOnly(res, files, true) {
				t.Errorf("with a wrong password: %d files read, problems %+v; want encrypted only", files, res.Problems)
			}
		})
	}
}
