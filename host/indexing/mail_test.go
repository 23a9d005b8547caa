package indexing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestMailIngestion: a mail is indexed with its headers and body, and its
// attachments are entries of it, each extracted by its own extractor and
// found by its container path (a DOCX attached to an .eml, a text file in
// KOI8-R, the attachments of a forwarded message below it, a mailbox's
// messages and their attachments, an Outlook message's files). Before,
// .eml, .msg and .mbox had no extractor.
func TestMailIngestion(t *testing.T) {
	ctx := context.Background()
	c := newMailEnv(t)
	cases := []struct {
		file    string
		body    string // found in the mail itself
		entries map[string]string
	}{
		{"report-iso-8859-2-attachments.eml", "žluťoučký kůň", map[string]string{
			"report-iso-8859-2-attachments.eml/Rozpočet 2024.docx": "",
			"report-iso-8859-2-attachments.eml/otchet.txt":         "Отчёт о продажах",
		}},
		{"forwarded-report.eml", "Forwarding the quarterly report", map[string]string{
			"forwarded-report.eml/Čtvrtletní zpráva – výsledky a přílohy.eml":            "žluťoučký kůň",
			"forwarded-report.eml/Čtvrtletní zpráva – výsledky a přílohy.eml/otchet.txt": "Отчёт о продажах",
		}},
		{"list-archive.mbox", "Budget spreadsheet", map[string]string{
			"list-archive.mbox/00001 Planning meeting.eml":               "planning meeting moves to Thursday",
			"list-archive.mbox/00003 Budget spreadsheet.eml/budget.docx": "",
		}},
		{"mscfb-test.msg", "State Records Authority", map[string]string{
			"mscfb-test.msg/test.doc": "",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			f, st, entries := c.ingest(t, tc.file, testcorpus.Read(t, "mail", tc.file), 2*time.Minute, 1<<30)
			if st.Status != kindex.StatusIndexed {
				t.Fatalf("status %+v", st)
			}
			hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: tc.body, FileIDs: []string{f.ID}, Limit: 5})
			if err != nil || len(hits) == 0 {
				t.Errorf("the mail's own text %q not found: %+v %v", tc.body, hits, err)
			}
			for p, text := range tc.entries {
				e, ok := entryAt(entries, p)
				if !ok || e.Status != string(kindex.StatusIndexed) {
					var got []string
					for _, e := range entries {
						got = append(got, e.Path+" ("+e.Status+" "+e.Error+")")
					}
					t.Errorf("entry %s: %+v; entries %q", p, e, got)
					continue
				}
				if text == "" {
					continue
				}
				hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: text, FileIDs: []string{f.ID}, Limit: 10})
				found := false
				for _, h := range hits {
					found = found || h.Ref.ContainerPath == p
				}
				if err != nil || !found {
					t.Errorf("%q not found in %s: %+v %v", text, p, hits, err)
				}
			}
		})
	}
}

// newMailEnv is a containerEnv whose resolver is the plugins' own, which
// resolves documents' attachments too.
func newMailEnv(t *testing.T) containerEnv {
	t.Helper()
	e := newEnv(t)
	h := wasmtest.Host(t, "containers", "pdf", "office")
	ing := ingest.New(e.db, e.blobs, extract.New(h), nil).WithContainers(extract.NewContainers(h), e.db, e.blobs)
	return containerEnv{env: e, ingester: ing, svc: files.NewService(e.db, e.blobs, 0), entries: indexing.NewContainers(e.db, ing)}
}

// TestEncryptedRAR: a RAR whose files all need the password is reported as
// encrypted (failed, with the reason), not as an indexed archive of
// nothing readable.
func TestEncryptedRAR(t *testing.T) {
	c := newContainerEnv(t)
	_, st, entries := c.ingest(t, "secret.rar", testcorpus.Read(t, "archives", "formats", "libarchive-rar4-encrypted-data.rar"), time.Minute, 1<<30)
	if st.Status != kindex.StatusFailed || !strings.HasPrefix(st.Error, "encrypted:") {
		t.Fatalf("status %+v, want failed as encrypted", st)
	}
	for _, e := range entries {
		if e.ErrorKind != "encrypted" {
			t.Errorf("entry %+v", e)
		}
	}
}
