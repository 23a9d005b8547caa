package extract_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
)

// Extractors as the built-in ones declare them, and hostile or competing
// third-party ones.
var (
	pdfBuiltin    = extract.Candidate{Name: "pdf", Version: "1.0.0", SHA256: "0123456789abcdef0123", Builtin: true, MIMETypes: []string{"application/pdf"}, Extensions: []string{".pdf"}}
	officeBuiltin = extract.Candidate{Name: "office", Version: "1.0.0", SHA256: "fedcba9876543210fedc", Builtin: true, MIMETypes: []string{"text/plain", "text/markdown", "image/png"}, Extensions: []string{".txt", ".md", ".png"}}
	textFamily    = extract.Candidate{Name: "texty", Builtin: true, MIMETypes: []string{"text/*"}}
	hostile       = extract.Candidate{Name: "aaa-pdf", Version: "6.6.6", SHA256: "deadbeefdeadbeefdead", MIMETypes: []string{"application/pdf", "text/plain", "application/x-evil"}, Extensions: []string{".pdf", ".txt"}}
	hostile2      = extract.Candidate{Name: "aab-pdf", MIMETypes: []string{"application/pdf", "application/x-evil"}}
	familyThird   = extract.Candidate{Name: "all-text", MIMETypes: []string{"text/*"}}
	cadThird      = extract.Candidate{Name: "cad", MIMETypes: []string{"application/x-dwg"}, Extensions: []string{".dwg"}}
)

// TestChoose: built-ins win for every type, family and extension they
// serve; the operator's choice wins over them; a third-party plugin serves
// only what no built-in serves and no other third-party plugin claims; the
// order plugins are listed in never matters.
func TestChoose(t *testing.T) {
	for _, c := range []struct {
		name       string
		cands      []extract.Candidate
		operator   extract.OperatorChoice
		file, mime string
		want       string // plugin, "" for none
		by         kindex.ChosenBy
		match      string
		comp       []string
		reason     string // part of the reason, none chosen
	}{
		{"built-in wins over a hostile plugin sorted first", []extract.Candidate{hostile, pdfBuiltin, officeBuiltin}, nil,
			"report.pdf", "application/pdf", "pdf", kindex.ChosenBuiltin, "application/pdf", []string{"aaa-pdf"}, ""},
		{"listing order does not matter", []extract.Candidate{officeBuiltin, pdfBuiltin, hostile}, nil,
			"report.pdf", "application/pdf", "pdf", kindex.ChosenBuiltin, "application/pdf", []string{"aaa-pdf"}, ""},
		{"MIME parameters and case", []extract.Candidate{hostile, pdfBuiltin}, nil,
			"x", "Application/PDF; charset=binary", "pdf", kindex.ChosenBuiltin, "application/pdf", []string{"aaa-pdf"}, ""},
		{"built-in for text too", []extract.Candidate{hostile, pdfBuiltin, officeBuiltin}, nil,
			"notes.txt", "text/plain; charset=utf-8", "office", kindex.ChosenBuiltin, "text/plain", []string{"aaa-pdf"}, ""},
		{"a built-in's extension beats a third-party exact type", []extract.Candidate{hostile, pdfBuiltin}, nil,
			"report.pdf", "application/x-evil", "pdf", kindex.ChosenBuiltin, ".pdf", []string{"aaa-pdf"}, ""},
		{"a built-in's family beats a third-party exact type", []extract.Candidate{hostile, textFamily}, nil,
			"a", "text/plain", "texty", kindex.ChosenBuiltin, "text/*", []string{"aaa-pdf"}, ""},
		{"among built-ins the exact type beats the family", []extract.Candidate{textFamily, officeBuiltin}, nil,
			"a", "text/plain", "office", kindex.ChosenBuiltin, "text/plain", []string{"texty"}, ""},
		{"by extension when the type is unknown", []extract.Candidate{hostile, pdfBuiltin}, nil,
			"REPORT.PDF", "", "pdf", kindex.ChosenBuiltin, ".pdf", []string{"aaa-pdf"}, ""},
		{"operator names the third-party plugin", []extract.Candidate{hostile, pdfBuiltin, officeBuiltin}, extract.OperatorChoice{"application/pdf": "aaa-pdf"},
			"report.pdf", "application/pdf", "aaa-pdf", kindex.ChosenOperator, "application/pdf", []string{"pdf"}, ""},
		{"operator's choice is per type", []extract.Candidate{hostile, pdfBuiltin, officeBuiltin}, extract.OperatorChoice{"application/pdf": "aaa-pdf"},
			"notes.txt", "text/plain", "office", kindex.ChosenBuiltin, "text/plain", []string{"aaa-pdf"}, ""},
		{"operator's family choice", []extract.Candidate{familyThird, officeBuiltin}, extract.OperatorChoice{"text/*": "all-text"},
			"notes.md", "text/markdown", "all-text", kindex.ChosenOperator, "text/*", []string{"office"}, ""},
		{"operator's exact choice beats its family choice", []extract.Candidate{familyThird, officeBuiltin}, extract.OperatorChoice{"text/*": "all-text", "text/plain": "office"},
			"notes.txt", "text/plain", "office", kindex.ChosenOperator, "text/plain", []string{"all-text"}, ""},
		{"operator may name a built-in", []extract.Candidate{textFamily, officeBuiltin}, extract.OperatorChoice{"text/plain": "texty"},
			"a.txt", "text/plain", "texty", kindex.ChosenOperator, "text/plain", []string{"office"}, ""},
		{"operator's plugin must declare the type", []extract.Candidate{cadThird, pdfBuiltin}, extract.OperatorChoice{"application/pdf": "cad"},
			"report.pdf", "application/pdf", "", kindex.ChosenNone, "application/pdf", []string{"pdf"}, `the operator chose "cad" for application/pdf, which it does not declare`},
		{"operator's plugin must be loaded", []extract.Candidate{pdfBuiltin}, extract.OperatorChoice{"application/pdf": "gone"},
			"report.pdf", "application/pdf", "", kindex.ChosenNone, "application/pdf", []string{"pdf"}, "not a loaded extractor"},
		{"a type only one third-party plugin claims", []extract.Candidate{cadThird, pdfBuiltin, officeBuiltin}, nil,
			"plan.dwg", "application/x-dwg", "cad", kindex.ChosenSole, "application/x-dwg", nil, ""},
		{"several third-party plugins: no guess", []extract.Candidate{hostile, hostile2, pdfBuiltin}, nil,
			"x.bin", "application/x-evil", "", kindex.ChosenNone, "", []string{"aaa-pdf", "aab-pdf"}, "third-party plugins aaa-pdf, aab-pdf all claim application/x-evil"},
		{"several third-party plugins at different levels: no guess", []extract.Candidate{hostile, familyThird}, nil,
			"notes.txt", "text/plain", "", kindex.ChosenNone, "", []string{"aaa-pdf", "all-text"}, "all claim text/plain or .txt"},
		{"several third-party plugins, the operator decides", []extract.Candidate{hostile, hostile2}, extract.OperatorChoice{"application/x-evil": "aab-pdf"},
			"x.bin", "application/x-evil", "aab-pdf", kindex.ChosenOperator, "application/x-evil", []string{"aaa-pdf"}, ""},
		{"nobody claims it", []extract.Candidate{pdfBuiltin, hostile}, nil,
			"photo.heic", "image/heic", "", kindex.ChosenNone, "", nil, "no extractor plugin declares image/heic or .heic"},
		{"no type, no extension", []extract.Candidate{pdfBuiltin}, nil,
			"README", "", "", kindex.ChosenNone, "", nil, "no MIME type, no extension"},
		{"no plugins", nil, nil, "a.pdf", "application/pdf", "", kindex.ChosenNone, "", nil, "no extractor plugin declares"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := extract.Choose(c.cands, c.operator, c.file, c.mime)
			if got.Extractor.Name != c.want || got.By != c.by || got.Match != c.match || !slices.Equal(got.Competitors, c.comp) {
				t.Fatalf("got %s by %s (match %q, competitors %v, reason %q), want %s by %s (match %q, competitors %v)",
					got.Extractor.Name, got.By, got.Match, got.Competitors, got.Reason, c.want, c.by, c.match, c.comp)
			}
			if got.OK() != (c.want != "") {
				t.Fatalf("OK() = %v", got.OK())
			}
			if c.reason != "" && !strings.Contains(got.Reason, c.reason) || c.reason == "" && got.Reason != "" {
				t.Fatalf("reason %q, want it to say %q", got.Reason, c.reason)
			}
			rec := got.Record()
			if rec.Name != c.want || rec.ChosenBy != c.by || rec.Reason != got.Reason {
				t.Fatalf("record %+v", rec)
			}
			if c.want != "" && (len(rec.SHA256) > 12 || !strings.HasPrefix(got.Extractor.SHA256, rec.SHA256) || rec.Version != got.Extractor.Version) {
				t.Fatalf("record %+v of %+v", rec, got.Extractor)
			}
		})
	}
}

func TestParseOperatorChoice(t *testing.T) {
	for _, c := range []struct {
		items []string
		want  extract.OperatorChoice
		err   string
	}{
		{nil, extract.OperatorChoice{}, ""},
		{[]string{""}, extract.OperatorChoice{}, ""},
		{[]string{"application/pdf=aaa-pdf"}, extract.OperatorChoice{"application/pdf": "aaa-pdf"}, ""},
		{[]string{" Application/PDF = aaa-pdf , text/*=office,"}, extract.OperatorChoice{"application/pdf": "aaa-pdf", "text/*": "office"}, ""},
		{[]string{"application/pdf=pdf", "application/pdf=pdf"}, extract.OperatorChoice{"application/pdf": "pdf"}, ""},
		{[]string{"application/pdf"}, nil, "want MIME=PLUGIN"},
		{[]string{"pdf=pdf"}, nil, `"pdf" is not a MIME type`},
		{[]string{"*/*=pdf"}, nil, "is not a MIME type"},
		{[]string{"application/pdf; charset=x=pdf"}, nil, "is not a MIME type"},
		{[]string{"application/pdf=PDF"}, nil, `"PDF" is not a plugin name`},
		{[]string{"application/pdf="}, nil, "is not a plugin name"},
		{[]string{"application/pdf=pdf", "application/pdf=aaa-pdf"}, nil, `application/pdf is already given to "pdf"`},
	} {
		got, err := extract.ParseOperatorChoice(c.items...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.items, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v, want %v", c.items, got, err, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: %v, want %v", c.items, got, c.want)
			}
		}
	}
}
