package extract

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestMSGCompressedRTF: the body Outlook keeps as compressed RTF
// (PR_RTF_COMPRESSED of mscfb's real test.msg) decompresses to RTF whose
// text is the message's; a message with no other body is read from it.
func TestMSGCompressedRTF(t *testing.T) {
	if len(rtfPrebuf) != 207 {
		t.Fatalf("the dictionary prefix has %d bytes, [MS-OXRTFCP] says 207", len(rtfPrebuf))
	}
	b := testcorpus.Read(t, "mail", "mscfb-test.msg")
	o, err := openOLE(input{r: bytes.NewReader(b), size: int64(len(b)), lim: DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.readPath("__substg1.0_10090102")
	if err != nil {
		t.Fatal(err)
	}
	rtf, err := decompressRTF(c, 1<<20)
	if err != nil || !bytes.HasPrefix(rtf, []byte(`{\rtf1`)) {
		t.Fatalf("decompressed %q: %v", rtf[:min(len(rtf), 60)], err)
	}
	text, err := rtfText(context.Background(), rtf, DefaultLimits())
	if err != nil || !strings.Contains(text, "State Records Authority of New South Wales") {
		t.Errorf("text %.300q: %v", text, err)
	}
	// Without its plain body, the message's body is the RTF's text.
	delete(o.all, "__substg1.0_1000001F")
	m := readMSG(o, "", 32, 0)
	if m.bodyType != "application/rtf" || !strings.Contains(m.body, "State Records Authority") {
		t.Errorf("body %s %.200q, stops %v", m.bodyType, m.body, m.stops)
	}
}
