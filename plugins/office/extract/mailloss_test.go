package extract

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestMboxUnquotedFrom: an mboxo mailbox whose body has "From " lines its
// writer did not quote (testdata/corpus/mail/mboxo-unquoted-from.mbox) is
// two messages, each whole. Before, every "From " line after a line break
// began a message: four, two of them body fragments without headers.
func TestMboxUnquotedFrom(t *testing.T) {
	b := testcorpus.Read(t, "mail", "mboxo-unquoted-from.mbox")
	r := newRecorder()
	res, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "box.mbox", "", "", Limits{}, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"box.mbox/00001 Travel plans.eml", "box.mbox/00002 Re: Travel plans.eml"}
	if strings.Join(r.order, "|") != strings.Join(want, "|") || res.Files != 2 {
		t.Fatalf("messages %q, want %q", r.order, want)
	}
	first := string(r.files[want[0]])
	for _, s := range []string{"From Monday to Wednesday I am in Lyon", "From Thursday on I am back in the office.\nAlice"} {
		if !strings.Contains(first, s) {
			t.Errorf("the first message lost %q: %q", s, first)
		}
	}
	_, objs := mustRun(t, r.files[want[0]], "00001 Travel plans.eml", "", Limits{})
	if all := strings.Join(texts(objs), "\n"); !strings.Contains(all, "From Thursday on I am back") {
		t.Errorf("the first message's body lost its last paragraph: %q", all)
	}
}
