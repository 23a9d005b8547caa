package indexing_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestEncryptedZIP: a ZIP whose entries are all encrypted, with ZipCrypto
// (Info-ZIP's zip -P) or WinZip AES (p7zip), is shown encrypted, each
// entry refused as encrypted, never indexed with its entries empty (issue
// 26; the ZIP reader does not decrypt, so a password does not open it).
func TestEncryptedZIP(t *testing.T) {
	c := newContainerEnv(t)
	for _, file := range []string{"constructed-zipcrypto.zip", "constructed-winzip-aes.zip"} {
		t.Run(file, func(t *testing.T) {
			_, st, entries := c.ingest(t, file, testcorpus.Read(t, "archives", "formats", file), time.Minute, 1<<30)
			if unlock.ShownStatus(st.Status, st.Error) != unlock.StatusEncrypted || !strings.Contains(st.Error, "none of its 2 entries") {
				t.Fatalf("status %+v, want encrypted", st)
			}
			if len(entries) != 2 {
				t.Fatalf("entries %+v", entries)
			}
			for _, e := range entries {
				if e.ErrorKind != "encrypted" {
					t.Errorf("entry %+v", e)
				}
			}
		})
	}
}

// TestZstdWindowRefused: a lone zstd stream whose frame asks for a 256 MiB
// window (zstd --long=28 from a pipe; the bound is 64 MiB) is failed with
// the reason, not indexed as a container of no entries with the reason as
// a note (issue 26).
func TestZstdWindowRefused(t *testing.T) {
	c := newContainerEnv(t)
	_, st, _ := c.ingest(t, "window.zst", testcorpus.Read(t, "archives", "hostile", "window-256MiB.zst"), time.Minute, 1<<30)
	if st.Status != kindex.StatusFailed || !strings.Contains(st.Error, "window larger than the 64 MiB allowed") {
		t.Fatalf("status %+v, want failed with the window's reason", st)
	}
}
