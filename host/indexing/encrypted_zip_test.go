package indexing_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/knowledge"
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
			if knowledge.ShownStatus(st.Status, st.Error) != knowledge.StatusEncrypted || !strings.Contains(st.Error, "none of its 2 entries") {
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
