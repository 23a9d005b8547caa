package pdftext

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// xfaOnly is a one-page PDF whose form is XFA alone (no AcroForm fields),
// with the given template and datasets packets.
func xfaOnly(template, datasets string) []byte {
	return buildPDF(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] /XFA [(template) 4 0 R (datasets) 5 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
		"<< >> STREAM("+template+")",
		"<< >> STREAM("+datasets+")",
	)
}

func xfaDatasets(data string) string {
	return `<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>` + data + `</xfa:data></xfa:datasets>`
}

func xfaTemplateOf(body string) string {
	return `<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1">` + body + `</subform></template>`
}

func formFieldsOf(t *testing.T, pdf []byte) ([]FormField, error) {
	t.Helper()
	d, err := Open(bytes.NewReader(pdf))
	if err != nil {
		t.Fatal(err)
	}
	return d.FormFields()
}

// TestXFABinding: the rules by which data find their field, one case each.
func TestXFABinding(t *testing.T) {
	for _, c := range []struct {
		name, template, data string
		want                 []string // label: value
	}{
		{"same name under different subforms",
			`<subform name="a"><field name="Name"><caption><value><text>Your name:</text></value></caption></field></subform>` +
				`<subform name="b"><field name="Name"><caption><value><text>*Spouse's name</text></value></caption></field></subform>`,
			`<form1><a><Name>Ada</Name></a><b><Name>William</Name></b></form1>`,
			[]string{"Your name: Ada", "Spouse's name: William"}},
		{"unnamed subforms and areas are no level of the data",
			`<subform><area><field name="City"><caption><value><text>City</text></value></caption></field></area></subform>`,
			`<form1><City>Lyon</City></form1>`,
			[]string{"City: Lyon"}},
		{"bind dataRef from the record and from the scope",
			`<field name="Surname"><bind match="dataRef" ref="$record.person.last"/><caption><value><text>Surname</text></value></caption></field>` +
				`<subform name="s"><field name="Given"><bind match="dataRef" ref="$.first[0]"/><caption><value><text>Given name</text></value></caption></field></subform>`,
			`<form1><person><last>Roe</last></person><s><first>Jane</first></s></form1>`,
			[]string{"Surname: Roe", "Given name: Jane"}},
		{"a subform bound to nothing passes its fields to its parent",
			`<subform name="wrapper"><bind match="none"/><field name="Age"><caption><value><text>Age</text></value></caption></field></subform>`,
			`<form1><Age>42</Age></form1>`,
			[]string{"Age: 42"}},
		{"exclusion group shows the chosen button's caption",
			`<exclGroup name="Q1"><assist><toolTip>Do you agree?</toolTip></assist>` +
				`<field name="No"><ui><checkButton shape="round"/></ui><caption><value><text>No</text></value></caption><items><text>N</text></items></field>` +
				`<field name="Yes"><ui><checkButton shape="round"/></ui><caption><value><exData contentType="text/html"><body xmlns="http://www.w3.org/1999/xhtml"><p>Ye<span>s</span>, fully</p></body></exData></value></caption><items><text>Y</text></items></field></exclGroup>`,
			`<form1><Q1>Y</Q1></form1>`,
			[]string{"Do you agree?: Yes, fully"}},
		{"check boxes: on is Yes, off and neutral are unfilled",
			`<field name="A"><ui><checkButton/></ui><caption><value><text>Email me</text></value></caption><items><integer>1</integer><integer>0</integer><integer>2</integer></items></field>` +
				`<field name="B"><ui><checkButton/></ui><caption><value><text>Call me</text></value></caption></field>` +
				`<field name="C"><ui><checkButton/></ui><caption><value><text>Write me</text></value></caption><items><text>oui</text><text>non</text></items></field>`,
			`<form1><A>1</A><B>0</B><C>oui</C></form1>`,
			[]string{"Email me: Yes", "Write me: Yes"}},
		{"a choice shows the text of its saved value; a multiple choice all",
			`<field name="Lang"><ui><choiceList/></ui><caption><value><text>Language</text></value></caption>` +
				`<items><text>English</text><text>French</text></items><items save="1" presence="hidden"><text>01</text><text>02</text></items></field>` +
				`<field name="Many"><ui><choiceList open="multiSelect"/></ui><caption><value><text>Colours</text></value></caption><items><text>Red</text><text>Blue</text></items></field>`,
			`<form1><Lang>02</Lang><Many><value>Red</value><value>Blue</value></Many></form1>`,
			[]string{"Language: French", "Colours: Red, Blue"}},
		{"label: caption, else tooltip, else spoken text, else the name",
			`<field name="T"><assist><toolTip>Telephone</toolTip></assist></field>` +
				`<field name="S"><assist><speak>Spoken label</speak></assist></field>`,
			`<form1><T>555</T><S>x</S><Unknown>y</Unknown></form1>`,
			[]string{"Telephone: 555", "Spoken label: x", "Unknown: y"}},
		{"prototypes are not fields; rich text data is its text",
			`<proto><field name="Note"><caption><value><text>Wrong</text></value></caption></field></proto>` +
				`<field name="Note"><caption><value><text>Note</text></value></caption></field>`,
			`<form1><Note xfa:contentType="text/html" xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><body xmlns="http://www.w3.org/1999/xhtml"><p>first <b>bold</b>line</p><p>second</p></body></Note></form1>`,
			[]string{"Note: first boldline second"}},
		{"bare ampersand in the data (Adobe writes it)",
			`<field name="Firm"><caption><value><text>Firm</text></value></caption></field>`,
			`<form1><Firm>Smith & Sons</Firm></form1>`,
			[]string{"Firm: Smith & Sons"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := formFieldsOf(t, xfaOnly(xfaTemplateOf(c.template), xfaDatasets(c.data)))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range got {
				lines = append(lines, f.Label+": "+f.Value)
			}
			if strings.Join(lines, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestXFAHybridMatchesAcroForm: on real hybrid forms the XFA data, read
// alone, give the very values the AcroForm fields give (so the reading of
// groups, check boxes and multiple choices is the reader's), and together
// they give each value once.
func TestXFAHybridMatchesAcroForm(t *testing.T) {
	for _, name := range []string{"forms-xfa-hybrid-pdfjs-button-widget.pdf", "forms-xfa-hybrid-pdfjs-choice-widget.pdf"} {
		t.Run(name, func(t *testing.T) {
			d, err := Open(bytes.NewReader(testcorpus.Read(t, "pdf", "classes", name)))
			if err != nil {
				t.Fatal(err)
			}
			all, err := d.FormFields()
			if err != nil {
				t.Fatal(err)
			}
			var acro []string
			for _, f := range all {
				if f.Kind == "xfa" {
					t.Errorf("a value twice: %+v", f)
				}
				acro = append(acro, f.Value)
			}
			xfa, err := d.xfaFields(d.dict(d.root["AcroForm"])["XFA"], nil)
			if err != nil {
				t.Fatal(err)
			}
			var vals []string
			for _, f := range xfa {
				vals = append(vals, f.Value)
			}
			if len(acro) == 0 || strings.Join(vals, "|") != strings.Join(acro, "|") {
				t.Errorf("XFA alone %q, AcroForm %q", vals, acro)
			}
		})
	}
}

// TestXFAHostile: packets built to exhaust the reader are read within
// bounds, and a packet that is not XML is a clear error that loses the
// AcroForm values.
func TestXFAHostile(t *testing.T) {
	field := `<field name="V"><caption><value><text>V</text></value></caption></field>`
	deep := func(n int, leaf string) string {
		return strings.Repeat("<a>", n) + leaf + strings.Repeat("</a>", n)
	}
	many := strings.Repeat("<V>x</V>", maxFormFields+500)
	for _, c := range []struct {
		name, template, datasets string
		check                    func(t *testing.T, got []FormField, err error)
	}{
		{"entity expansion (billion laughs) is not done",
			xfaTemplateOf(field),
			`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
				`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>` +
				xfaDatasets(`<form1><V>&lol9;</V></form1>`),
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != 1 || len(got[0].Value) > 16 {
					t.Errorf("got %d fields (%v), first value %d bytes", len(got), err, len(firstValue(got)))
				}
			}},
		{"deep nesting of the data stops at the depth bound",
			xfaTemplateOf(field),
			xfaDatasets(`<form1><V>kept</V>` + deep(100_000, "<V>deep</V>") + `</form1>`),
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != 1 || got[0].Value != "kept" {
					t.Errorf("got %+v, %v", got, err)
				}
			}},
		{"deep nesting of the template stops at the depth bound",
			xfaTemplateOf(field + deep(100_000, field)),
			xfaDatasets(`<form1><V>kept</V></form1>`),
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != 1 || got[0].Label != "V" || got[0].Value != "kept" {
					t.Errorf("got %+v, %v", got, err)
				}
			}},
		{"more values than the field bound",
			xfaTemplateOf(field),
			xfaDatasets(`<form1>` + many + `</form1>`),
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != maxFormFields {
					t.Errorf("%d fields, want %d (%v)", len(got), maxFormFields, err)
				}
			}},
		{"a huge value is cut at the value bound",
			xfaTemplateOf(field),
			xfaDatasets(`<form1><V>` + strings.Repeat("word ", 1<<20/5*4) + `</V></form1>`),
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != 1 || len(got[0].Value) > maxXFAValue+10 || len(got[0].Value) < maxXFAValue/2 {
					t.Errorf("got %d fields (%v), value %d bytes", len(got), err, len(firstValue(got)))
				}
			}},
		{"datasets that are not XML",
			xfaTemplateOf(field),
			"<xfa:datasets><xfa:data><form1><V>a</V" + "\x00\x01<<<",
			func(t *testing.T, got []FormField, err error) {
				if err == nil || !strings.Contains(err.Error(), "xfa datasets") {
					t.Errorf("got %+v, %v; want an xfa datasets error", got, err)
				}
			}},
		{"truncated datasets keep what was read",
			xfaTemplateOf(field),
			`<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data><form1><V>first</V><V>sec`,
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != 1 || got[0].Value != "first" {
					t.Errorf("got %+v, %v", got, err)
				}
			}},
		{"a template that is not XML costs the labels, not the values",
			"\x00<<<not xml",
			xfaDatasets(`<form1><V>kept</V></form1>`),
			func(t *testing.T, got []FormField, err error) {
				if err != nil || len(got) != 1 || got[0].Label != "V" || got[0].Value != "kept" {
					t.Errorf("got %+v, %v", got, err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := formFieldsOf(t, xfaOnly(c.template, c.datasets))
			c.check(t, got, err)
		})
	}
}

func firstValue(f []FormField) string {
	if len(f) == 0 {
		return ""
	}
	return f[0].Value
}

// TestXFAOneStream: /XFA may be one stream holding the whole XDP (template
// and datasets among other packets) instead of an array of packets.
func TestXFAOneStream(t *testing.T) {
	xdp := `<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><config><present><pdf><version>1.7</version></pdf></present></config>` +
		xfaTemplateOf(`<subform name="p"><field name="Name"><caption><value><text>Name</text></value></caption></field></subform>`) +
		xfaDatasets(`<form1><p><Name>Jane Roe</Name></p></form1>`) + `</xdp:xdp>`
	pdf := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] /XFA 4 0 R >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
		"<< >> STREAM("+xdp+")",
	)
	got, err := formFieldsOf(t, pdf)
	if err != nil || len(got) != 1 || got[0].Label != "Name" || got[0].Value != "Jane Roe" || got[0].Name != "form1/p/Name" {
		t.Errorf("got %+v, %v", got, err)
	}
}

// TestXFACaptionLabelsHybridFields: in a hybrid form whose AcroForm
// widgets have no printed label and no tooltip (Designer names them
// form1[0].#subform[0].TextField1[0]), the XFA template's caption
// (<caption><value><text>) labels the field, not the numbered parts of
// its name; a multiple-selection list box (/Ff MultiSelect, /V an array,
// PDF 32000-1:2008 12.7.4.4) gives every selected value, shown by /Opt's
// display texts, once.
func TestXFACaptionLabelsHybridFields(t *testing.T) {
	template := xfaTemplateOf(`<subform><field name="TextField1"><ui><textEdit/></ui><caption><value><text>Family name:</text></value></caption></field>` +
		`<field name="ListBox1"><ui><choiceList open="multiSelect"/></ui><caption><value><text>Colours</text></value></caption>` +
		`<items><text>Red</text><text>Blue</text><text>Green</text></items><items save="1" presence="hidden"><text>r</text><text>b</text><text>g</text></items></field></subform>`)
	datasets := xfaDatasets(`<form1><TextField1>Euler</TextField1><ListBox1><value>r</value><value>g</value></ListBox1></form1>`)
	pdf := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R 5 0 R] /XFA [(template) 6 0 R (datasets) 7 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [4 0 R 5 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (form1[0].#subform[0].TextField1[0]) /V (Euler) /Rect [130 695 330 715] /P 3 0 R >>",
		"<< /Type /Annot /Subtype /Widget /FT /Ch /Ff 2097152 /T (form1[0].#subform[0].ListBox1[0]) /Opt [[(r) (Red)] [(b) (Blue)] [(g) (Green)]] "+
			"/V [(r) (g)] /I [0 2] /Rect [130 600 330 680] /P 3 0 R >>",
		"<< >> STREAM("+template+")",
		"<< >> STREAM("+datasets+")",
	)
	got, err := formFieldsOf(t, pdf)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Label+": "+f.Value+" ("+f.Kind+")")
	}
	want := []string{"Family name: Euler (text)", "Colours: Red, Green (list)"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
