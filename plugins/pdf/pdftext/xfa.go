package pdftext

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// XFA forms. An XFA form is XML inside the PDF: its template packet
// describes the fields (caption, kind, the items of a choice, the value of
// each button of a group), its datasets packet holds what was typed in, as
// elements named like the template's subforms and fields. A dynamic XFA
// form has no AcroForm widgets at all (its one page says "Please wait..."),
// so the data, named by the template, is all there is to read.

// maxXFA bounds the XFA packets decoded.
const maxXFA = 16 << 20

// maxXFADepth bounds the nesting of the XFA elements read: a real form
// nests subforms a dozen deep, a hostile packet could nest millions.
const maxXFADepth = 256

// maxXFAValue bounds the text kept of one data value.
const maxXFAValue = 64 << 10

// xfaFields reads the XFA form's data: each element of the datasets packet
// that holds text is a field, named by the template's field that binds it
// (by its path of subform and field names, or its bind reference): its
// caption is the label, and a coded value is shown as the reader saw it
// (the caption of the chosen button of a group, the shown text of a
// choice's saved value, a check box as Yes; an unchecked box is left out).
// Values that an AcroForm field of the same name already gave (a hybrid
// form keeps both) are left out; the others take that field's page.
func (d *Document) xfaFields(o types.Object, acro []FormField) ([]FormField, error) {
	packets, err := d.xfaPackets(o)
	if err != nil || packets == nil {
		return nil, err
	}
	data := packets["datasets"]
	template := packets["template"]
	if whole, ok := packets["xdp"]; ok {
		data, template = whole, whole
	}
	var values []xfaValue
	if len(data) > 0 {
		values, err = xfaData(data)
	}
	record := ""
	if len(values) > 0 {
		record, _, _ = strings.Cut(values[0].path, "/")
	}
	tmpl := readXFATemplate(template, record)
	// An AcroForm field of a hybrid form that nothing on its page labels
	// (and no tooltip) is labelled by the caption of the template field
	// that binds its data, not by the numbered last part of its name
	// (Designer's TextField1[0]); so is its XFA value, if it differs.
	for i := range acro {
		if f := &acro[i]; f.Label == nameLabel(f.Name) {
			if l := tmpl.find(xfaPath(f.Name)).label(); l != "" {
				f.Label = l
			}
		}
	}
	if err != nil || len(values) == 0 {
		return nil, err
	}

	byPath := map[string]FormField{}
	byKey := map[string][]FormField{}
	for _, f := range acro {
		byPath[xfaPath(f.Name)] = f
		byKey[xfaKey(f.Name)] = append(byKey[xfaKey(f.Name)], f)
	}
	var out []FormField
	for _, v := range values {
		n := tmpl.find(v.path)
		value, shown := n.display(v.values)
		if !shown || value == "" {
			continue
		}
		f := FormField{Name: v.path, Value: value, Kind: "xfa"}
		a, ok := byPath[v.path]
		if same := byKey[xfaKey(v.path)]; !ok && len(same) == 1 {
			a, ok = same[0], true
		}
		if ok {
			if a.Value == value {
				continue
			}
			f.Page, f.Label = a.Page, a.Label
		}
		if f.Label == "" {
			f.Label = n.label()
		}
		if f.Label == "" {
			f.Label = xfaKey(v.path)
		}
		out = append(out, f)
	}
	return out, nil
}

// xfaPackets is the XFA entry's XML by packet name: one stream (the whole
// XDP, as "xdp") or an array of name and stream pairs, whose parts of one
// name are joined.
func (d *Document) xfaPackets(o types.Object) (map[string][]byte, error) {
	packets := map[string][]byte{}
	switch v := d.deref(o).(type) {
	case types.StreamDict:
		b, err := d.streamData(v)
		if err != nil {
			return nil, fmt.Errorf("pdftext: xfa: %w", err)
		}
		if len(b) > maxXFA {
			b = b[:maxXFA]
		}
		packets["xdp"] = b
	case types.Array:
		total := 0
		for i := 0; i+1 < len(v); i += 2 {
			name := rawString(d.deref(v[i]))
			sd, ok := d.deref(v[i+1]).(types.StreamDict)
			if !ok || total > maxXFA {
				continue
			}
			b, err := d.streamData(sd)
			if err != nil {
				continue // a packet that cannot be read costs that packet
			}
			total += len(b)
			packets[name] = append(packets[name], b...)
		}
	default:
		return nil, nil
	}
	return packets, nil
}

// xfaKey is the last part of a field or data path without its index:
// form1[0].page1[0].FirstName[0] and data/FirstName are both FirstName.
func xfaKey(name string) string {
	if i := strings.LastIndexAny(name, "./"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	return name
}

// xfaPath is an AcroForm field name of a hybrid form as a data path:
// form1[0].#subform[0].Name[0] is form1/Name (an unnamed subform binds no
// data of its own).
func xfaPath(name string) string {
	var parts []string
	for _, p := range strings.Split(name, ".") {
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i]
		}
		if p != "" && !strings.HasPrefix(p, "#") {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// newXFADecoder reads XFA packets as Adobe writes them: not always well
// formed (a bare & in data), so leniently. encoding/xml expands no entity
// a document declares, so a packet cannot grow by expansion.
func newXFADecoder(b []byte) *xml.Decoder {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = false
	return dec
}

// xfaValue is one filled data element: its path from xfa:data and its
// values (several for a choice list's multiple selection).
type xfaValue struct {
	path   string
	values []string
	multi  bool
}

// xfaData lists the elements with text under the datasets' xfa:data, as
// paths from it. The value elements of a multiple choice are one value of
// their parent; a rich text value (xfa:contentType text/html) is its text.
func xfaData(b []byte) ([]xfaValue, error) {
	dec := newXFADecoder(b)
	var out []xfaValue
	var path []string
	var text strings.Builder
	inData, dataDepth := false, 0
	leaf := false
	rich := 0 // depth of the rich text element being read, 0 for none
	for len(out) < maxFormFields {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(out) > 0 {
				break // what was read before the error
			}
			return nil, fmt.Errorf("pdftext: xfa datasets: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(path) >= maxXFADepth {
				return out, nil
			}
			path = append(path, t.Name.Local)
			if rich > 0 {
				if !isInlineHTML(t.Name.Local) {
					text.WriteByte(' ') // a paragraph of the rich text
				}
				continue
			}
			if !inData && t.Name.Local == "data" && (t.Name.Space == "" || strings.Contains(t.Name.Space, "xfa-data")) {
				inData, dataDepth = true, len(path)
			}
			text.Reset()
			leaf = true
			if inData && len(path) > dataDepth && slices.ContainsFunc(t.Attr, func(a xml.Attr) bool {
				return a.Name.Local == "contentType" && strings.Contains(a.Value, "html")
			}) {
				rich = len(path)
			}
		case xml.CharData:
			if inData && (leaf || rich > 0) {
				writeBounded(&text, t)
			}
		case xml.EndElement:
			if rich > 0 && len(path) > rich {
				path = path[:len(path)-1]
				continue
			}
			if inData && (leaf || rich > 0) && len(path) > dataDepth {
				if v := strings.Join(strings.Fields(strings.ToValidUTF8(text.String(), "")), " "); v != "" {
					out = appendXFAValue(out, path[dataDepth:], v)
				}
			}
			leaf, rich = false, 0
			if inData && len(path) == dataDepth {
				inData = false
			}
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		}
	}
	return out, nil
}

// appendXFAValue adds a data value at path; the value elements of one
// field (a multiple choice) join as that field's values.
func appendXFAValue(out []xfaValue, path []string, v string) []xfaValue {
	if len(path) > 1 && path[len(path)-1] == "value" {
		parent := strings.Join(path[:len(path)-1], "/")
		if n := len(out); n > 0 && out[n-1].multi && out[n-1].path == parent {
			out[n-1].values = append(out[n-1].values, v)
			return out
		}
		return append(out, xfaValue{path: parent, values: []string{v}, multi: true})
	}
	return append(out, xfaValue{path: strings.Join(path, "/"), values: []string{v}})
}

// writeBounded appends p to b up to maxXFAValue bytes in all.
func writeBounded(b *strings.Builder, p []byte) {
	if room := maxXFAValue - b.Len(); room > 0 {
		b.Write(p[:min(len(p), room)])
	}
}
