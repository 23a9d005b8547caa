package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/plugins/containers/archive"
)

// TestMailFormats: mails are read with their headers as structure, their
// body as text and their attachments listed (testdata/corpus/mail: mails
// written by Python's email package, a real Outlook message from mscfb's
// tests). Before, .eml and .mbox had no extractor and .msg was refused.
func TestMailFormats(t *testing.T) {
	cases := []struct {
		file, mime string
		want       map[string]string // structure field: substring
		body       []string          // in the objects' text
		atts       []string          // attachment names
	}{
		{
			file: "report-iso-8859-2-attachments.eml", mime: "message/rfc822",
			want: map[string]string{
				"from":    "Zoë Müller <zoe.mueller@example.org>", // ISO-8859-1 encoded-word
				"to":      "Jiří Dvořák <jiri.dvorak@example.cz>, Team <team@example.org>",
				"cc":      "Олег Петров <oleg@example.ru>", // KOI8-R encoded-word
				"subject": "Čtvrtletní zpráva – výsledky a přílohy",
				"date":    "2024-03-14T08:26:53Z",
				"body":    "text/plain",
			},
			body: []string{"Příliš žluťoučký kůň úpěl ďábelské ódy."}, // ISO-8859-2 quoted-printable
			atts: []string{"Rozpočet 2024.docx", "annotations.pdf", "otchet.txt"},
		},
		{
			file: "minutes-iso-2022-jp-html-only.eml",
			want: map[string]string{"from": "山田 太郎 <taro.yamada@example.jp>", "subject": "会議の議事録について", "body": "text/html"},
			body: []string{"本日の会議の議事録を送付いたします。"},
		},
		{
			file: "forwarded-report.eml",
			want: map[string]string{"subject": "Fwd: Čtvrtletní zpráva"},
			body: []string{"Forwarding the quarterly report"},
			atts: []string{"Čtvrtletní zpráva – výsledky a přílohy.eml"},
		},
		{
			file: "mscfb-test.msg",
			want: map[string]string{
				"from": `"Lehane, Richard" <Richard.Lehane@records.nsw.gov.au>`, "to": "Richard.Lehane@records.nsw.gov.au",
				"subject": "test", "date": "2013-11-17T21:26:09Z", "body": "text/plain",
			},
			body: []string{"State Records Authority of New South Wales"},
			atts: []string{"test.doc", "image001.gif"},
		},
		{
			file: "list-archive.mbox",
			body: []string{"Subject: Planning meeting", "From: carol@example.org"},
			atts: []string{"00001 Planning meeting.eml", "00002 Re: Planning meeting.eml", "00003 Budget spreadsheet.eml"},
		},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			idx, objs := mustRun(t, testcorpus.Read(t, "mail", c.file), c.file, c.mime, Limits{})
			for k, v := range c.want {
				if got, _ := idx.Structure[k].(string); !strings.Contains(got, v) {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			all := strings.Join(texts(objs), "\n")
			for _, b := range c.body {
				if !strings.Contains(all, b) {
					t.Errorf("%q not in the text: %.300q", b, all)
				}
			}
			var names []string
			atts, _ := idx.Structure["attachments"].([]map[string]any)
			for _, a := range atts {
				names = append(names, a["name"].(string))
			}
			if fmt.Sprint(names) != fmt.Sprint(c.atts) {
				t.Errorf("attachments %q, want %q", names, c.atts)
			}
		})
	}
}

// recorder is an AttachmentSink that keeps what it is given.
type recorder struct {
	files map[string][]byte
	types map[string]string
	fails map[string]string // path: kind
	order []string
}

func newRecorder() *recorder {
	return &recorder{files: map[string][]byte{}, types: map[string]string{}, fails: map[string]string{}}
}

func (r *recorder) File(p, mt string, data []byte) error {
	if _, dup := r.files[p]; dup {
		return fmt.Errorf("%s emitted twice", p)
	}
	r.files[p], r.types[p] = bytes.Clone(data), mt
	r.order = append(r.order, p)
	return nil
}

func (r *recorder) Fail(p, kind, reason string) error {
	r.fails[p] = kind
	return nil
}

// TestMailAttachments: attachments come back as entries named by their
// container path, typed as an archive's members are, so the host extracts
// each with its own extractor; an attached message's attachments follow
// below its path; an Outlook message's embedded files and a mailbox's
// messages alike.
func TestMailAttachments(t *testing.T) {
	cases := []struct {
		file  string
		paths map[string]string // path: MIME type prefix
	}{
		{"report-iso-8859-2-attachments.eml", map[string]string{
			"report-iso-8859-2-attachments.eml/Rozpočet 2024.docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			"report-iso-8859-2-attachments.eml/annotations.pdf":    "application/pdf",
			"report-iso-8859-2-attachments.eml/otchet.txt":         "text/plain; charset=koi8-r",
		}},
		{"forwarded-report.eml", map[string]string{
			"forwarded-report.eml/Čtvrtletní zpráva – výsledky a přílohy.eml":                    "message/rfc822",
			"forwarded-report.eml/Čtvrtletní zpráva – výsledky a přílohy.eml/Rozpočet 2024.docx": "application/vnd.openxmlformats",
			"forwarded-report.eml/Čtvrtletní zpráva – výsledky a přílohy.eml/annotations.pdf":    "application/pdf",
			"forwarded-report.eml/Čtvrtletní zpráva – výsledky a přílohy.eml/otchet.txt":         "text/plain",
		}},
		{"mscfb-test.msg", map[string]string{
			"mscfb-test.msg/test.doc":     "application/msword",
			"mscfb-test.msg/image001.gif": "image/gif",
		}},
		{"list-archive.mbox", map[string]string{
			"list-archive.mbox/00001 Planning meeting.eml":               "message/rfc822",
			"list-archive.mbox/00002 Re: Planning meeting.eml":           "message/rfc822",
			"list-archive.mbox/00003 Budget spreadsheet.eml":             "message/rfc822",
			"list-archive.mbox/00003 Budget spreadsheet.eml/budget.docx": "application/vnd.openxmlformats",
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b := testcorpus.Read(t, "mail", c.file)
			r := newRecorder()
			res, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "some/dir/"+c.file, "", "", Limits{}, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.files) != len(c.paths) || res.Files != len(c.paths) || len(r.fails) > 0 {
				t.Errorf("emitted %q (failed %v), want %d files", r.order, r.fails, len(c.paths))
			}
			for p, mt := range c.paths {
				if _, ok := r.files[p]; !ok {
					t.Errorf("%s not emitted (got %q)", p, r.order)
				} else if !strings.HasPrefix(r.types[p], mt) {
					t.Errorf("%s typed %s, want %s", p, r.types[p], mt)
				}
			}
		})
	}
	// The attached files are the bytes that were attached.
	b := testcorpus.Read(t, "mail", "report-iso-8859-2-attachments.eml")
	r := newRecorder()
	if _, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "r.eml", "", "", Limits{}, r); err != nil {
		t.Fatal(err)
	}
	if want := testcorpus.Read(t, "office", "docx", "textract-paragraphs_and_tables.docx"); !bytes.Equal(r.files["r.eml/Rozpočet 2024.docx"], want) {
		t.Errorf("the DOCX came back with %d bytes, not the %d attached", len(r.files["r.eml/Rozpočet 2024.docx"]), len(want))
	}
	koi8, _ := charmap.KOI8R.NewEncoder().String("Отчёт о продажах за первый квартал: рост на двенадцать процентов.\n")
	if got := string(r.files["r.eml/otchet.txt"]); got != koi8 {
		t.Errorf("the KOI8-R text came back as %q", got)
	}
	// The mbox's ">From " quoting is undone in the message it emits.
	b = testcorpus.Read(t, "mail", "list-archive.mbox")
	r = newRecorder()
	if _, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "l.mbox", "application/mbox", "l.mbox/00001 Planning meeting.eml", Limits{}, r); err != nil {
		t.Fatal(err)
	}
	if m := string(r.files["l.mbox/00001 Planning meeting.eml"]); !strings.Contains(m, "\nFrom the notes:") || len(r.files) != 1 {
		t.Errorf("only= emitted %q; message %q", r.order, m)
	}
}

// nestedBomb is a mail bomb: a message attached to a message, depth
// times, a PDF at the bottom.
func nestedBomb(depth int) []byte {
	msg := "From: a@example.org\r\nSubject: level 0\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n" +
		"--b0\r\nContent-Type: text/plain\r\n\r\nbottom\r\n--b0\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=scan.pdf\r\n\r\n%PDF-1.4 not really\r\n--b0--\r\n"
	for i := 1; i <= depth; i++ {
		b := fmt.Sprintf("b%d", i)
		msg = fmt.Sprintf("From: a@example.org\r\nSubject: level %d\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n--%s\r\nContent-Type: text/plain\r\n\r\nfwd\r\n--%s\r\nContent-Type: message/rfc822\r\nContent-Disposition: attachment; filename=level%d.eml\r\n\r\n%s\r\n--%s--\r\n",
			i, b, b, b, i-1, msg, b)
	}
	return []byte(msg)
}

// manyParts is a message of n MIME parts, each a small attachment.
func manyParts(n int) []byte {
	var b strings.Builder
	b.WriteString("From: a@example.org\r\nSubject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nthe body\r\n")
	for i := range n {
		fmt.Fprintf(&b, "--x\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=p%d.txt\r\n\r\npart %d\r\n", i, i)
	}
	b.WriteString("--x--\r\n")
	return []byte(b.String())
}

// deepMultipart nests multiparts depth times without a message between.
func deepMultipart(depth int) []byte {
	var open, close strings.Builder
	for i := range depth {
		fmt.Fprintf(&open, "--d%d\r\nContent-Type: multipart/mixed; boundary=d%d\r\n\r\n", i, i+1)
		close.WriteString(fmt.Sprintf("--d%d--\r\n", depth-i))
	}
	return []byte("From: a@example.org\r\nSubject: deep\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=d0\r\n\r\n" +
		open.String() + fmt.Sprintf("--d%d\r\nContent-Type: text/plain\r\n\r\ninnermost\r\n", depth) + close.String() + "--d0--\r\n")
}

// TestMailHostile: a mail bomb of nested attachments stops at the
// archives' depth (5) with a depth failure, a 10,000-part message at the
// part bound, multiparts nested 5,000 deep at the nesting bound; each
// quickly, with the stop said in the index (truncated, stops).
func TestMailHostile(t *testing.T) {
	t.Run("nested attachments", func(t *testing.T) {
		b := nestedBomb(60)
		start := time.Now()
		idx, _ := mustRun(t, b, "bomb.eml", "", Limits{})
		if atts, _ := idx.Structure["attachments"].([]map[string]any); len(atts) != 1 {
			t.Errorf("attachments %v, want the one message", atts)
		}
		r := newRecorder()
		res, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "bomb.eml", "", "", Limits{}, r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Files != archive.DefaultLimits().MaxDepth {
			t.Errorf("%d files emitted (%q), want %d", res.Files, r.order, archive.DefaultLimits().MaxDepth)
		}
		p := "bomb.eml"
		for i := 59; i >= 54; i-- {
			p += fmt.Sprintf("/level%d.eml", i)
		}
		if r.fails[p] != archive.ProblemDepth {
			t.Errorf("no depth failure at %s: %v", p, r.fails)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("10,000 parts", func(t *testing.T) {
		b := manyParts(10_000)
		start := time.Now()
		idx, objs := mustRun(t, b, "parts.eml", "", Limits{})
		if tr, _ := idx.Structure["truncated"].(string); !strings.Contains(tr, "more than 1000 MIME parts") {
			t.Errorf("truncated = %q", tr)
		}
		if atts, _ := idx.Structure["attachments"].([]map[string]any); len(atts) != maxMailParts-2 {
			t.Errorf("%d attachments listed, want %d (the parts within the bound)", len(atts), maxMailParts-2)
		}
		if !strings.Contains(strings.Join(texts(objs), "\n"), "the body") {
			t.Error("the body is lost")
		}
		r := newRecorder()
		res, err := Attachments(context.Background(), bytes.NewReader(b), int64(len(b)), "parts.eml", "", "", Limits{}, r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Files != maxMailParts-2 || len(res.Stops) == 0 {
			t.Errorf("%d files, stops %q", res.Files, res.Stops)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("nested without names", func(t *testing.T) {
		// Attached messages without file names are named by their
		// subjects: reading those must not walk the whole nesting.
		var msg strings.Builder
		for i := 4999; i >= 0; i-- {
			fmt.Fprintf(&msg, "Subject: level %d\r\nMIME-Version: 1.0\r\nContent-Type: message/rfc822\r\n\r\n", i)
		}
		msg.WriteString("Subject: bottom\r\n\r\nbottom\r\n")
		start := time.Now()
		idx, _ := mustRun(t, []byte(msg.String()), "nested.eml", "", Limits{})
		if atts, _ := idx.Structure["attachments"].([]map[string]any); len(atts) != 1 || atts[0]["name"] != "level 4998.eml" {
			t.Errorf("attachments %v", atts)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("deep multiparts", func(t *testing.T) {
		idx, _ := mustRun(t, deepMultipart(5000), "deep.eml", "", Limits{})
		if tr, _ := idx.Structure["truncated"].(string); !strings.Contains(tr, "nested deeper than 20") {
			t.Errorf("truncated = %q", tr)
		}
	})
}
