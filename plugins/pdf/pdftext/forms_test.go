package pdftext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// formCase is a form document with the fields a reader filled in, as
// label and value.
type formCase struct {
	name string
	pdf  func(tb testing.TB) []byte
	want []FormField
}

// formCases: pdfcpu's English demo form (created from its JSON, which
// fills every kind of field), the LaTeX3 text field manual filled in with
// qpdf, an XFA form whose data are partly also AcroForm fields (a hybrid
// form, as Adobe LiveCycle writes them), two real hybrid forms from pdf.js
// (their XFA data repeat the AcroForm values, which must not come out
// twice) and a real dynamic XFA form filled in pdf.js (no widgets: its
// values are all in the XFA data; the expected fields were read from its
// packets with Python, see testdata/corpus/pdf/xfa-expect.py).
func formCases(tb testing.TB) []formCase {
	return []formCase{
		{"pdfcpu demo form", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "forms-pdfcpu-demo-en.pdf")
		}, []FormField{
			{Label: "First Name", Value: "Jackie", Kind: "text", Page: 1},
			{Label: "Last Name", Value: "Doe", Kind: "text", Page: 1},
			{Label: "Date Of Birth", Value: "31.12.1999", Kind: "text", Page: 1},
			{Label: "Google Search", Value: "Yes", Kind: "checkbox", Page: 1},
			{Label: "Gender", Value: "non-binary", Kind: "radio", Page: 1},
			{Label: "Other", Value: "This is a sample text. This is the next line.", Kind: "text", Page: 1},
			{Label: "City", Value: "Sidney", Kind: "combo", Page: 1},
			{Label: "Favorite city", Value: "San Francisco, Vienna", Kind: "list", Page: 1},
		}},
		{"l3pdffield text fields (filled with qpdf)", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "forms-l3pdffield-textfield-filled.pdf")
		}, []FormField{
			{Label: "Enter your name", Value: "Ada Lovelace", Kind: "text", Page: 1},
			{Label: "Input a value", Value: "notes on the Analytical Engine", Kind: "text", Page: 2},
		}},
		{"xfa hybrid form", func(testing.TB) []byte { return xfaForm() }, []FormField{
			{Label: "Name", Value: "Jane Roe", Kind: "text", Page: 1},
			{Label: "City of residence", Value: "Lyon", Kind: "xfa"},
			{Label: "Reason for the request", Value: "renewal of a permit", Kind: "xfa"},
		}},
		{"pdf.js hybrid XFA buttons", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "forms-xfa-hybrid-pdfjs-button-widget.pdf")
		}, []FormField{
			{Label: "Check box, checked", Value: "Yes", Kind: "checkbox", Page: 1},
			{Label: "Radio buton, selected", Value: "Radio button, selected", Kind: "radio", Page: 1},
		}},
		{"pdf.js hybrid XFA choices", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "forms-xfa-hybrid-pdfjs-choice-widget.pdf")
		}, []FormField{
			{Label: "Combo box", Value: "Dolor", Kind: "combo", Page: 1},
			{Label: "List box, single selection", Value: "Sit", Kind: "list", Page: 1},
			{Label: "List box, multiple selection", Value: "Ipsum, Amet, Consectetur, Elit", Kind: "list", Page: 1},
		}},
		{"filled dynamic XFA (IMM 1344, pdf.js)", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "forms-xfa-imm1344e-filled.pdf")
		}, fieldsTSV(tb, "forms-xfa-imm1344e-filled.fields.tsv")},
	}
}

// fieldsTSV reads a corpus file of expected XFA fields, label and value a
// line.
func fieldsTSV(tb testing.TB, name string) []FormField {
	tb.Helper()
	var out []FormField
	for _, line := range strings.Split(strings.TrimRight(string(testcorpus.Read(tb, "pdf", "classes", name)), "\n"), "\n") {
		label, value, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("%s: not label<TAB>value: %q", name, line)
		}
		out = append(out, FormField{Label: label, Value: value, Kind: "xfa"})
	}
	return out
}

// xfaForm is a one-page hybrid form: the AcroForm field Name (printed label
// "Name:" left of its widget) and XFA data for Name, City and Reason,
// captioned by the template.
func xfaForm() []byte {
	template := `<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1">` +
		`<field name="Name"><caption><value><text>Full name</text></value></caption></field>` +
		`<field name="City"><caption><value><text>City of residence:</text></value></caption></field>` +
		`<field name="Reason"><caption reserve="20mm"><value><exData contentType="text/html"><body xmlns="http://www.w3.org/1999/xhtml"><p>Reason for the request</p></body></exData></value></caption></field>` +
		`</subform></template>`
	datasets := `<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data><form1>` +
		`<Name>Jane Roe</Name><City>Lyon</City><Reason>renewal of a
  permit</Reason><Empty></Empty></form1></xfa:data></xfa:datasets>`
	return buildPDF(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R] /XFA [(template) 7 0 R (datasets) 8 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R /Annots [6 0 R] >>",
		"<< >> STREAM(BT /F1 12 Tf 72 700 Td (Name:) Tj ET)",
		helvetica,
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (form1[0].Name[0]) /V (Jane Roe) /Rect [130 695 330 715] /P 3 0 R >>",
		"<< >> STREAM("+template+")",
		"<< >> STREAM("+datasets+")",
	)
}

// formRecall is the share of the expected fields found with their label,
// value and page.
func formRecall(tb testing.TB) (float64, map[string]float64) {
	per := map[string]float64{}
	hits, total := 0, 0
	for _, c := range formCases(tb) {
		d, err := Open(bytes.NewReader(c.pdf(tb)))
		if err != nil {
			tb.Fatalf("%s: %v", c.name, err)
		}
		got, err := d.FormFields()
		if err != nil {
			tb.Fatalf("%s: %v", c.name, err)
		}
		have := map[string]bool{}
		for _, f := range got {
			have[fmt.Sprintf("%s|%s|%d", f.Label, f.Value, f.Page)] = true
		}
		h := 0
		for _, w := range c.want {
			if have[fmt.Sprintf("%s|%s|%d", w.Label, w.Value, w.Page)] {
				h++
			}
		}
		per[c.name] = float64(h) / float64(len(c.want))
		hits, total = hits+h, total+len(c.want)
	}
	return float64(hits) / float64(total), per
}

func TestFormFields(t *testing.T) {
	for _, c := range formCases(t) {
		t.Run(c.name, func(t *testing.T) {
			d, err := Open(bytes.NewReader(c.pdf(t)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.FormFields()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Errorf("%d fields, want %d: %+v", len(got), len(c.want), got)
			}
			for i := range min(len(got), len(c.want)) {
				g, w := got[i], c.want[i]
				if g.Label != w.Label || g.Value != w.Value || g.Kind != w.Kind || g.Page != w.Page {
					t.Errorf("field %d = %q: %q (%s, page %d), want %q: %q (%s, page %d)",
						i, g.Label, g.Value, g.Kind, g.Page, w.Label, w.Value, w.Kind, w.Page)
				}
			}
		})
	}
	// A document without a form has no fields.
	d, err := Open(bytes.NewReader(onePage("BT /F1 12 Tf 72 700 Td (x) Tj ET", "<< /Font << /F1 5 0 R >> >>", helvetica)))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := d.FormFields(); err != nil || len(f) != 0 {
		t.Errorf("no form: %v, %v", f, err)
	}
	if got := FormText([]FormField{{Label: "A", Value: "1"}, {Label: "B", Value: "2"}}); got != "A: 1\nB: 2" {
		t.Errorf("FormText = %q", got)
	}
}

// BenchmarkFormValues: the share of filled fields found with their label,
// value and page.
func BenchmarkFormValues(b *testing.B) {
	for range b.N {
		r, per := formRecall(b)
		figure.Report("pdf.forms.values.recall", r, "ratio")
		b.Logf("per document: %v", per)
	}
}
