package pdftext

import (
	"slices"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Filled forms. The values a reader typed into a form are not in the
// pages' content: an AcroForm keeps them in its fields' /V (drawn, if at
// all, by widget appearance streams that the page text does not run), an
// XFA form in the XML of its datasets packet. FormFields reads both, and
// names each value by the label printed beside its widget, as a reader
// sees it.

// FormField is one filled field of a document's form.
type FormField struct {
	// Name is the field's fully qualified name (partial names joined by
	// periods), or the XFA data's element path.
	Name string
	// Label is the text printed beside the field's widget (left of a text
	// or choice field, right of a check box), else the field's tooltip
	// (/TU) or XFA caption, else the last part of its name.
	Label string
	Value string
	// Kind is "text", "checkbox", "radio", "combo", "list" or "xfa".
	Kind string
	// Page is the page of the field's (first) widget, from 1; 0 when the
	// document does not say (XFA data without a matching AcroForm field).
	Page int
}

// maxFormFields bounds the fields read (and XFA data values): a form has
// hundreds, a hostile file could have millions.
const maxFormFields = 20_000

// FormFields returns the values of the document's form fields that are
// filled in: text, a chosen option, a checked box or radio button; empty
// fields and push buttons are left out. The order is the form's field
// order, then the XFA data's. A document without a form gives nothing.
func (d *Document) FormFields() (fields []FormField, err error) {
	defer recoverTo(&err, "form fields")
	root := d.root
	if root == nil {
		return nil, nil
	}
	af := d.dict(root["AcroForm"])
	if af == nil {
		return nil, nil
	}
	fr := &formReader{d: d, seen: map[int]bool{}, widgetPage: d.widgetPages(), labels: map[int]*pageLabels{}}
	for _, k := range d.array(af["Fields"]) {
		fr.field(k, "", inheritedField{}, 0)
	}
	fields = fr.out
	xfa, err := d.xfaFields(af["XFA"], fields)
	if err != nil {
		return fields, err
	}
	return append(fields, xfa...), nil
}

// widgetPages maps each annotation object listed by a page to that page.
func (d *Document) widgetPages() map[int]int {
	m := map[int]int{}
	for i := range d.pages {
		for _, a := range d.array(d.pages[i].dict["Annots"]) {
			if ir, ok := a.(types.IndirectRef); ok {
				if _, dup := m[ir.ObjectNumber.Value()]; !dup {
					m[ir.ObjectNumber.Value()] = i + 1
				}
			}
		}
	}
	return m
}

// inheritedField holds the attributes a field passes to its kids.
type inheritedField struct {
	ft    string
	flags int
	v     types.Object
	opt   types.Array
	tu    string
}

type formReader struct {
	d          *Document
	seen       map[int]bool
	widgetPage map[int]int
	labels     map[int]*pageLabels
	out        []FormField
	count      int
}

// field reads a field node: a terminal field (no kids that are fields)
// gives a value, its widgets the page and label.
func (fr *formReader) field(ref types.Object, parent string, inh inheritedField, depth int) {
	if depth > maxTreeDepth || fr.count >= maxFormFields {
		return
	}
	if ir, ok := ref.(types.IndirectRef); ok {
		if fr.seen[ir.ObjectNumber.Value()] {
			return
		}
		fr.seen[ir.ObjectNumber.Value()] = true
	}
	f := fr.d.dict(ref)
	if f == nil {
		return
	}
	fr.count++
	name := parent
	if t, err := model.Text(fr.d.deref(f["T"])); err == nil && t != "" {
		if name != "" {
			name += "."
		}
		name += t
	}
	if ft := fr.d.name(f["FT"]); ft != "" {
		inh.ft = ft
	}
	if v, ok := fr.d.number(f["Ff"]); ok {
		inh.flags = int(v)
	}
	if v := fr.d.deref(f["V"]); v != nil {
		inh.v = v
	}
	if o := fr.d.array(f["Opt"]); o != nil {
		inh.opt = o
	}
	if tu, err := model.Text(fr.d.deref(f["TU"])); err == nil && tu != "" {
		inh.tu = cleanTitle(tu)
	}
	// Kids with a /T are fields; kids without one are this field's
	// widgets.
	var widgets []types.Object
	hasFieldKids := false
	for _, k := range fr.d.array(f["Kids"]) {
		kd := fr.d.dict(k)
		if kd == nil {
			continue
		}
		if kd["T"] != nil {
			hasFieldKids = true
			fr.field(k, name, inh, depth+1)
			continue
		}
		widgets = append(widgets, k)
	}
	if hasFieldKids {
		return
	}
	if len(widgets) == 0 {
		widgets = []types.Object{ref} // field and widget in one dictionary
	}
	kind, value, on := fr.value(inh, widgets)
	if value == "" {
		return
	}
	// The widget to label: the one that is on (a radio button group's
	// chosen button), else the first.
	w := widgets[0]
	if on >= 0 {
		w = widgets[on]
	}
	page, label := fr.widgetLabel(w, kind == "checkbox")
	if kind == "radio" && on >= 0 {
		// The group's label stands left of its first button; the chosen
		// button's own label right of it.
		if _, l := fr.widgetLabel(widgets[0], false); l != "" {
			if _, choice := fr.widgetLabel(w, true); choice != "" {
				value = choice
			}
			label = l
		}
	}
	if page == 0 {
		for _, x := range widgets {
			if page = fr.page(x); page > 0 {
				break
			}
		}
	}
	if label == "" {
		label = inh.tu
	}
	if label == "" {
		label = nameLabel(name)
	}
	fr.out = append(fr.out, FormField{Name: name, Label: label, Value: value, Kind: kind, Page: page})
}

// nameLabel is the label of a field that nothing else labels: the last
// part of its fully qualified name.
func nameLabel(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// value is a terminal field's kind and value as text ("" for none), and
// for buttons the index of the widget that is on (-1 for none).
func (fr *formReader) value(inh inheritedField, widgets []types.Object) (kind, value string, on int) {
	d := fr.d
	on = -1
	switch inh.ft {
	case "Tx":
		return "text", fr.text(inh.v), -1
	case "Ch":
		kind = "list"
		if inh.flags&(1<<17) != 0 {
			kind = "combo"
		}
		var vals []string
		switch v := inh.v.(type) {
		case types.Array:
			for _, o := range v {
				vals = append(vals, fr.option(fr.text(d.deref(o)), inh.opt))
			}
		default:
			if t := fr.text(v); t != "" {
				vals = append(vals, fr.option(t, inh.opt))
			}
		}
		return kind, strings.Join(vals, ", "), -1
	case "Btn":
		if inh.flags&(1<<16) != 0 {
			return "", "", -1 // a push button has no value
		}
		kind = "checkbox"
		if inh.flags&(1<<15) != 0 {
			kind = "radio"
		}
		state := d.name(inh.v)
		if state == "" || state == "Off" {
			return kind, "", -1
		}
		// The widget whose appearance state is the value is the one on.
		for i, w := range widgets {
			wd := d.dict(w)
			if d.name(wd["AS"]) == state {
				on = i
				break
			}
			if ap := d.dict(d.dict(wd["AP"])["N"]); ap != nil {
				if _, ok := ap[state]; ok && on < 0 {
					on = i
				}
			}
		}
		value = state
		// /Opt gives the export values of buttons named by index.
		if inh.opt != nil && on >= 0 && on < len(inh.opt) {
			if t := fr.text(d.deref(inh.opt[on])); t != "" {
				value = t
			}
		}
		if kind == "checkbox" && (value == "On" || value == "1") {
			value = "Yes"
		}
		return kind, value, on
	}
	return "", "", -1
}

// option is the display text of a choice's export value, when /Opt pairs
// them.
func (fr *formReader) option(v string, opt types.Array) string {
	for _, o := range opt {
		if pair := fr.d.array(o); len(pair) == 2 && fr.text(fr.d.deref(pair[0])) == v {
			if t := fr.text(fr.d.deref(pair[1])); t != "" {
				return t
			}
		}
	}
	return v
}

// text is a text string's (or a name's) text, cleaned of control
// characters except line breaks, which become spaces.
func (fr *formReader) text(o types.Object) string {
	var s string
	switch v := o.(type) {
	case types.Name:
		s = string(v)
	case types.StringLiteral, types.HexLiteral:
		t, err := model.Text(v)
		if err != nil {
			return ""
		}
		s = t
	case types.StreamDict:
		// A rich text value as a stream: its bytes.
		b, err := fr.d.streamData(v)
		if err != nil {
			return ""
		}
		s = string(b)
	default:
		return ""
	}
	return strings.Join(strings.Fields(cleanTitle(strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, s))), " ")
}

func (fr *formReader) page(w types.Object) int {
	if ir, ok := w.(types.IndirectRef); ok {
		if p, ok := fr.widgetPage[ir.ObjectNumber.Value()]; ok {
			return p
		}
	}
	if ir, ok := fr.d.dict(w)["P"].(types.IndirectRef); ok {
		return fr.d.pageByObj[ir.ObjectNumber.Value()]
	}
	return 0
}

// widgetLabel is a widget's page and the text printed beside it: to its
// left on its line (right for a check box), else on the other side.
func (fr *formReader) widgetLabel(w types.Object, rightFirst bool) (int, string) {
	page := fr.page(w)
	if page == 0 {
		return 0, ""
	}
	r, ok := fr.d.boxOf(fr.d.dict(w)["Rect"])
	if !ok {
		return page, ""
	}
	pl := fr.pageLabels(page)
	if pl == nil {
		return page, ""
	}
	m := pl.m
	x0, y0 := m.apply(r[0], r[1])
	x1, y1 := m.apply(r[2], r[3])
	rect := box{min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)}
	if rightFirst {
		if l := pl.right(rect); l != "" {
			return page, l
		}
		return page, pl.left(rect)
	}
	if l := pl.left(rect); l != "" {
		return page, l
	}
	return page, pl.right(rect)
}

// pageLabels is a page's upright text as fragments, for finding labels.
type pageLabels struct {
	m     matrix
	frags []*frag
}

func (fr *formReader) pageLabels(n int) *pageLabels {
	if pl, ok := fr.labels[n]; ok {
		return pl
	}
	// A page that cannot be read costs its labels, not the form.
	glyphs, err := fr.d.pageGlyphsSafe(n, nil)
	var pl *pageLabels
	if err == nil && n >= 1 && n <= len(fr.d.pages) {
		m, _, _ := fr.d.pages[n-1].deviceMatrix()
		pl = &pageLabels{m: m, frags: buildFrags(glyphs, 0)}
	}
	fr.labels[n] = pl
	return pl
}

// onLine reports whether a fragment's baseline lies within the widget's
// height (with a little slack below, for descenders).
func onLine(f *frag, r box) bool {
	return f.y >= r[1]-0.2*f.size && f.y <= r[3]+0.3*f.size && f.y-f.size < r[3]
}

// maxLabelGap is the widest gap, in font sizes, between a widget and its
// label on the left (labels of a form are often aligned in a column of
// their own).
const maxLabelGap = 6

// left is the text that ends just left of the widget: the fragments on its
// line up to the first wide gap, read towards the widget, without a
// trailing colon.
func (pl *pageLabels) left(r box) string {
	var cand []*frag
	for _, f := range pl.frags {
		if onLine(f, r) && f.x1 <= r[0]+1 {
			cand = append(cand, f)
		}
	}
	slices.SortFunc(cand, func(a, b *frag) int { return cmpFloat(b.x1, a.x1) })
	var parts []string
	edge := r[0]
	for _, f := range cand {
		if edge-f.x1 > maxLabelGap*f.size {
			break
		}
		parts = append(parts, string(f.text))
		edge = f.x0
	}
	slices.Reverse(parts)
	return strings.TrimSpace(strings.TrimRight(strings.Join(parts, " "), ": "))
}

// right is the text that starts just right of the widget.
func (pl *pageLabels) right(r box) string {
	var cand []*frag
	for _, f := range pl.frags {
		if onLine(f, r) && f.x0 >= r[2]-1 {
			cand = append(cand, f)
		}
	}
	slices.SortFunc(cand, func(a, b *frag) int { return cmpFloat(a.x0, b.x0) })
	var parts []string
	edge := r[2]
	for _, f := range cand {
		if f.x0-edge > 2*f.size {
			break
		}
		parts = append(parts, string(f.text))
		edge = f.x1
	}
	return strings.TrimSpace(strings.TrimRight(strings.Join(parts, " "), ": "))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FormText is the fields of one page as text, one "label: value" a line.
func FormText(fields []FormField) string {
	var sb strings.Builder
	for _, f := range fields {
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(f.Label)
		sb.WriteString(": ")
		sb.WriteString(f.Value)
	}
	return sb.String()
}
