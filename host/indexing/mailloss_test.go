package indexing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestMailLosses: the mails that came back indexed with their content
// missing (issue 26), through the built-in plugins into the index: an
// encrypted mail fails saying what is encrypted and that no password
// opens it (the UI offers no password field for it), not indexed empty; uuencoded files in a body are entries found by their text; an
// mbox's unquoted "From " body line splits no message; a format=flowed
// phrase across a soft break and a UTF-7 body are found; an MHTML page's
// text is found.
func TestMailLosses(t *testing.T) {
	ctx := context.Background()
	c := newMailEnv(t)
	for _, file := range []string{"smime-enveloped.eml", "pgp-mime-encrypted.eml", "pgp-inline-encrypted.eml"} {
		t.Run(file, func(t *testing.T) {
			_, st, _ := c.ingest(t, file, testcorpus.Read(t, "mail", file), time.Minute, 1<<30)
			if got := unlock.ShownStatus(st.Status, st.Error); got != kindex.StatusFailed || !strings.Contains(st.Error, "encrypted to its recipients") ||
				!strings.Contains(st.Error, "a password does not open it") {
				t.Errorf("status %s (%s), error %q; want failed, saying no password opens it", got, st.Status, st.Error)
			}
		})
	}
	cases := []struct {
		file    string
		find    string // in the file itself ("" for none)
		entries map[string]string
	}{
		{"uuencoded-attachments.eml", "minutes and the budget attached", map[string]string{
			"uuencoded-attachments.eml/minutes.txt": "dredging contract goes to tender",
			"uuencoded-attachments.eml/budget.csv":  "pilot boat",
		}},
		{"mboxo-unquoted-from.mbox", "", map[string]string{
			"mboxo-unquoted-from.mbox/00001 Travel plans.eml":     "back in the office",
			"mboxo-unquoted-from.mbox/00002 Re: Travel plans.eml": "warehouse inventory",
		}},
		{"format-flowed.eml", "procurement guidelines", nil},
		{"utf-7-body.eml", "Grüße aus Zürich", nil},
		{"library-hours.mht", "reading room opens", nil},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			f, st, entries := c.ingest(t, tc.file, testcorpus.Read(t, "mail", tc.file), time.Minute, 1<<30)
			if st.Status != kindex.StatusIndexed {
				t.Fatalf("status %+v", st)
			}
			if tc.find != "" {
				hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: tc.find, FileIDs: []string{f.ID}, Limit: 5})
				if err != nil || len(hits) == 0 {
					t.Errorf("%q not found: %v", tc.find, err)
				}
			}
			if tc.entries != nil && len(entries) != len(tc.entries) {
				t.Errorf("%d entries, want %d: %+v", len(entries), len(tc.entries), entries)
			}
			for p, text := range tc.entries {
				if e, ok := entryAt(entries, p); !ok || e.Status != string(kindex.StatusIndexed) {
					t.Errorf("entry %s: %+v", p, e)
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
