package extract

import (
	"bytes"
	"context"
	"errors"
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

// TestEncryptedMail: a mail whose body is encrypted to its recipients
// (S/MIME by OpenSSL, PGP/MIME and inline PGP by GnuPG) is refused as an
// encrypted mail naming what is encrypted, not indexed as its headers and
// an empty body (before: indexed, the smime.p7m or the PGP parts as
// attachments, or the armored block as the body's text). A signed mail is
// no encrypted one.
func TestEncryptedMail(t *testing.T) {
	for _, c := range []struct{ file, what string }{
		{"smime-enveloped.eml", "S/MIME enveloped-data"},
		{"pgp-mime-encrypted.eml", "multipart/encrypted (application/pgp-encrypted)"},
		{"pgp-inline-encrypted.eml", "PGP message (text/plain)"},
	} {
		t.Run(c.file, func(t *testing.T) {
			b := testcorpus.Read(t, "mail", c.file)
			_, objs, err := run(t, b, c.file, "", Limits{})
			if !errors.Is(err, ErrEncryptedMail) || !errors.Is(err, ErrEncrypted) {
				t.Fatalf("err = %v (%d objects), want ErrEncryptedMail", err, len(objs))
			}
			for _, s := range []string{c.what, "Subject: Confidential: merger date"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the error does not say %q: %v", s, err)
				}
			}
			r := newRecorder()
			if _, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), c.file, "", "", Limits{}, r); err != nil {
				t.Fatal(err)
			}
			if len(r.order) > 0 {
				t.Errorf("the encrypted data came out as attachments: %q", r.order)
			}
		})
	}
	t.Run("signed, not encrypted", func(t *testing.T) {
		msg := "From: a@example.org\r\nSubject: signed\r\nMIME-Version: 1.0\r\n" +
			"Content-Type: multipart/signed; protocol=\"application/pkcs7-signature\"; boundary=b\r\n\r\n" +
			"--b\r\nContent-Type: text/plain\r\n\r\nThe signed text stays readable.\r\n" +
			"--b\r\nContent-Type: application/pkcs7-signature; name=smime.p7s\r\nContent-Transfer-Encoding: base64\r\n\r\nMIIB\r\n--b--\r\n"
		_, objs := mustRun(t, []byte(msg), "signed.eml", "", Limits{})
		if all := strings.Join(texts(objs), "\n"); !strings.Contains(all, "The signed text stays readable.") {
			t.Errorf("a signed mail's text: %q", all)
		}
	})
}

// TestUTF7Mail: a body labelled charset=utf-7 and a subject in a utf-7
// encoded-word are decoded (before: the body stayed "Gr+APwA3w-e", the
// subject its encoded-word).
func TestUTF7Mail(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "mail", "utf-7-body.eml"), "utf-7-body.eml", "", Limits{})
	if got, _ := idx.Structure["subject"].(string); got != "Präsentation für Montag" {
		t.Errorf("subject %q", got)
	}
	if all := strings.Join(texts(objs), "\n"); !strings.Contains(all, "Grüße aus Zürich: die Präsentation für Montag liegt bei. Preis 25 € – ¡olé!") {
		t.Errorf("body %q", all)
	}
	_, objs = mustRun(t, []byte("Gr+APwA3w-e aus Z+APw-rich\n"), "note.txt", "text/plain; charset=utf-7", Limits{})
	if all := strings.Join(texts(objs), "\n"); !strings.Contains(all, "Grüße aus Zürich") {
		t.Errorf("a text file labelled utf-7: %q", all)
	}
}

// TestFormatFlowed: a format=flowed body (RFC 3676) is read as its
// paragraphs: soft line breaks joined (so a phrase across them is found),
// space-stuffing undone, quoted paragraphs joined at their depth, the
// signature separator kept. Before, every soft break stayed a line break
// and "  From now on" kept its stuffing space.
func TestFormatFlowed(t *testing.T) {
	_, objs := mustRun(t, testcorpus.Read(t, "mail", "format-flowed.eml"), "format-flowed.eml", "", Limits{})
	all := strings.Join(texts(objs), "\n")
	for _, s := range []string{
		"Dear team, the quarterly review of the procurement guidelines is scheduled for Thursday afternoon in the large conference room.\n",
		"\n> We asked whether the supplier onboarding checklist covers export controls.\n",
		"\n From now on every order above the threshold needs two signatures.\n",
		"\n-- \nMarta",
	} {
		if !strings.Contains(all, s) {
			t.Errorf("%q not in the body: %q", s, all)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"one \r\ntwo\r\n", "one two\n"},
		{"one \r\ntwo", "one two"},
		{"delsp \r\nyes", "delspyes"},
		{">> deep \r\n>> quote\r\n> shallow\r\n", "> > deep quote\n> shallow\n"},
		{"> flowed into \r\nunquoted\r\n", "> flowed into \nunquoted\n"},
	} {
		if got := unflow(c.in, c.in[:5] == "delsp"); got != c.want {
			t.Errorf("unflow(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestUUencodedAttachments: files uuencoded in a plain-text body (a
// "begin 644 NAME" block, as mailers before MIME attached them) are the
// mail's attachments, byte for byte, and the body keeps its own text
// without the encoded lines. Before, the blocks were body text and the
// files were lost.
func TestUUencodedAttachments(t *testing.T) {
	b := testcorpus.Read(t, "mail", "uuencoded-attachments.eml")
	idx, objs := mustRun(t, b, "uuencoded-attachments.eml", "", Limits{})
	all := strings.Join(texts(objs), "\n")
	if !strings.Contains(all, "Please find the minutes and the budget attached.") || !strings.Contains(all, "The harbour office") {
		t.Errorf("the body lost its text: %q", all)
	}
	if strings.Contains(all, "begin 644") || strings.Contains(all, "M36EN") {
		t.Errorf("the encoded lines stayed in the body: %q", all)
	}
	if atts, _ := idx.Structure["attachments"].([]map[string]any); len(atts) != 2 {
		t.Errorf("attachments %v", idx.Structure["attachments"])
	}
	r := newRecorder()
	if _, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "m.eml", "", "", Limits{}, r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"m.eml/minutes.txt": "Minutes of the harbour commission, 4 March 2024.\nThe dredging contract goes to tender in April; the pilot boat is replaced.\n",
		"m.eml/budget.csv":  "item,amount\ndredging,120000\npilot boat,450000\n",
	}
	for p, data := range want {
		if got := string(r.files[p]); got != data {
			t.Errorf("%s = %q, want %q (files %q)", p, got, data, r.order)
		}
	}
	if mt := r.types["m.eml/budget.csv"]; !strings.HasPrefix(mt, "text/csv") {
		t.Errorf("budget.csv typed %q", mt)
	}
	// A "begin" without its "end", or with damaged lines, stays text.
	for _, body := range []string{"begin 644 a.txt\n#86)C\n", "begin 644 a.txt\nnot uuencoded at all\nend\n", "begin the meeting at 10\nend\n"} {
		if got, files := splitUU(body, 1<<20); got != body || len(files) != 0 {
			t.Errorf("splitUU(%q) = %q, %d files", body, got, len(files))
		}
	}
}

// TestMHTML: a web page saved as MHTML (RFC 2557, as Chromium writes it)
// is read as its page: the HTML part's text and headings, quoted-printable
// undone, the title and the saved location as structure. Before, .mht was
// read as plain text: MIME headers, boundaries and quoted-printable HTML.
func TestMHTML(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "mail", "library-hours.mht"), "library-hours.mht", "", Limits{})
	all := strings.Join(texts(objs), "\n")
	if !strings.Contains(all, "The reading room opens at 08:30 and closes at 19:00; on Saturdays the archive is closed.") {
		t.Errorf("the page's text: %q", all)
	}
	for _, s := range []string{"MultipartBoundary", "Content-Type", "<p>", "=3D"} {
		if strings.Contains(all, s) {
			t.Errorf("%q in the text: %q", s, all)
		}
	}
	if idx.MIMEType != "multipart/related" || idx.Structure["title"] != "Opening hours" || idx.Structure["location"] != "https://library.example/hours" {
		t.Errorf("index %s %v", idx.MIMEType, idx.Structure)
	}
	if _, ok := idx.Structure["sections"]; !ok {
		t.Errorf("no sections: %v", idx.Structure)
	}
}

// TestTNEF: the files Outlook wraps in a winmail.dat (TNEF) are the
// mail's attachments by their long names, byte for byte, and the TNEF
// body (compressed RTF in its MAPI properties) is read; before, the mail
// had one attachment, winmail.dat, which no extractor reads.
func TestTNEF(t *testing.T) {
	b := testcorpus.Read(t, "mail", "tnef-winmail.eml")
	r := newRecorder()
	if _, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "m.eml", "", "", Limits{}, r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"m.eml/Quarterly report 2024.txt": "Quarterly report: dredging finished, pilot boat ordered.\r\n",
		"m.eml/Tender schedule.csv":       "lot,opens\r\ndredging,2024-04-02\r\npilot boat,2024-04-16\r\n",
	}
	if len(r.order) != len(want) {
		t.Errorf("attachments %q", r.order)
	}
	for p, data := range want {
		if got := string(r.files[p]); got != data {
			t.Errorf("%s = %q, want %q (files %q)", p, got, data, r.order)
		}
	}
	files, body, err := readTNEF(testcorpus.Read(t, "mail", "winmail.dat"), DefaultLimits())
	if err != nil || len(files) != 2 || !strings.Contains(body, "The harbour budget for 2024 is approved; tenders open in April.") {
		t.Errorf("readTNEF: %d files, body %q, %v", len(files), body, err)
	}
	// Cut short: the files before the damage are kept, and it says so.
	dat := testcorpus.Read(t, "mail", "winmail.dat")
	files, _, err = readTNEF(dat[:len(dat)-100], DefaultLimits())
	if err == nil || len(files) != 1 {
		t.Errorf("a cut stream: %d files, %v", len(files), err)
	}
}
