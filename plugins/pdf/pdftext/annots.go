package pdftext

import (
	"cmp"
	"math"
	"strings"
	"unicode"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Annotations shown on a page are part of what it says: a reader sees a
// comment or a stamp, and poppler's pdftotext prints them. A page's text
// therefore includes the normal appearance (/AP /N, the /AS state of it
// when it has several) of every annotation shown, placed on its /Rect as
// PDF 32000-1 section 12.5.5 says, and a FreeText comment without an appearance
// gives its /Contents there. Left out: links and pop-ups (no text of
// their own), form fields' widgets, whose values FormFields reports
// (drawing them too would print each value twice; signature fields,
// which have no value, are drawn), and annotations flagged Hidden or
// NoView.

// maxAnnots bounds the annotations read on one page.
const maxAnnots = 4096

// Annotation flags (PDF 32000-1 table 165).
const (
	annotHidden = 1 << 1
	annotNoView = 1 << 5
)

// appearance is one shown annotation: its appearance stream and the
// matrix from the stream's form space to the page's default user space,
// or, for a FreeText comment without one, its text and rectangle.
type appearance struct {
	sd   types.StreamDict
	m    matrix
	text string
	rect box
}

// appearances lists the page's shown annotations in their order.
func (d *Document) appearances(p *page) []appearance {
	var out []appearance
	for i, a := range d.array(p.dict["Annots"]) {
		if i >= maxAnnots {
			break
		}
		ad := d.dict(a)
		if ad == nil {
			continue
		}
		switch d.name(ad["Subtype"]) {
		case "Link", "Popup":
			continue
		case "Widget":
			if d.fieldType(ad) != "Sig" {
				continue
			}
		}
		if f, _ := d.number(ad["F"]); int(f)&(annotHidden|annotNoView) != 0 {
			continue
		}
		rect, ok := d.boxOf(ad["Rect"])
		if !ok || rect.width() <= 0 || rect.height() <= 0 {
			continue
		}
		sd, ok := d.normalAppearance(ad)
		if !ok {
			if d.name(ad["Subtype"]) == "FreeText" {
				if s, err := model.Text(d.deref(ad["Contents"])); err == nil && strings.TrimSpace(s) != "" {
					out = append(out, appearance{text: s, rect: rect})
				}
			}
			continue
		}
		if m, ok := d.appearanceMatrix(sd, rect); ok {
			out = append(out, appearance{sd: sd, m: m})
		}
	}
	return out
}

// normalAppearance is the annotation's normal appearance stream: /AP /N,
// or its /AS entry when /N holds appearance states.
func (d *Document) normalAppearance(ad types.Dict) (types.StreamDict, bool) {
	ap := d.dict(ad["AP"])
	if ap == nil {
		return types.StreamDict{}, false
	}
	switch n := d.deref(ap["N"]).(type) {
	case types.StreamDict:
		return n, true
	case types.Dict:
		sd, ok := d.deref(n[d.name(ad["AS"])]).(types.StreamDict)
		return sd, ok
	}
	return types.StreamDict{}, false
}

// appearanceMatrix maps an appearance stream's bounding box, as its
// /Matrix transforms it, onto the annotation's rectangle (PDF 32000-1 section 12.5.5).
func (d *Document) appearanceMatrix(sd types.StreamDict, rect box) (matrix, bool) {
	bbox, ok := d.boxOf(sd.Dict["BBox"])
	if !ok {
		return matrix{}, false
	}
	m := matrix{1, 0, 0, 1, 0, 0}
	if v := d.array(sd.Dict["Matrix"]); len(v) == 6 {
		for i := range 6 {
			m[i], _ = d.number(v[i])
		}
	}
	// The transformed box's bounds.
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range [4][2]float64{{bbox[0], bbox[1]}, {bbox[2], bbox[1]}, {bbox[0], bbox[3]}, {bbox[2], bbox[3]}} {
		x, y := m.apply(c[0], c[1])
		minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
	}
	if !(maxX > minX) || !(maxY > minY) {
		return matrix{}, false
	}
	sx, sy := rect.width()/(maxX-minX), rect.height()/(maxY-minY)
	a := matrix{sx, 0, 0, sy, rect[0] - minX*sx, rect[1] - minY*sy}
	return m.mul(a), true
}

// fieldType is a widget's field type, its own or inherited through
// /Parent.
func (d *Document) fieldType(ad types.Dict) string {
	for depth := 0; ad != nil && depth < maxTreeDepth; depth++ {
		if ft := d.name(ad["FT"]); ft != "" {
			return ft
		}
		ad = d.dict(ad["Parent"])
	}
	return ""
}

// annotations draws the page's shown annotations over its content, each
// from the page's initial graphics state (base).
func (in *interp) annotations(p *page, base gstate) {
	for _, a := range in.d.appearances(p) {
		in.gs = base
		in.stack = in.stack[:0]
		if a.text != "" {
			in.comment(a.text, a.rect)
			continue
		}
		data, res, err := in.d.formContent(a.sd, nil)
		if err != nil {
			in.st.lose(err)
			continue
		}
		in.gs.ctm = a.m.mul(base.ctm)
		in.run(data, res, 1)
	}
	in.gs = base
}

// comment lays out a FreeText comment's text in its rectangle, a line per
// line of the text, 10 points high, in a stand-in for the typeface a
// viewer would choose (Helvetica's average advance).
func (in *interp) comment(text string, r box) {
	const size, advance = 10.0, 0.5 // points; em
	f := &font{name: "(annotation)", sizeScale: 1}
	in.gs.fontSize, in.gs.hScale = size, 1
	for i, line := range commentLines(text) {
		in.tm = matrix{1, 0, 0, 1, r[0] + 2, r[3] - 2 - float64(i+1)*size*1.2}
		for _, c := range line {
			s := string(c)
			in.emit(s, f, advance*size, isBlank(s))
			in.tm[4] += advance * size
		}
	}
}

func commentLines(text string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
}

// annotations counts the page's shown annotations as the sketch counts
// its content.
func (s *sketch) annotations(p *page) {
	for _, a := range s.d.appearances(p) {
		if a.text != "" {
			for _, c := range a.text {
				if !unicode.IsSpace(c) {
					s.text++
					s.glyphs++
				}
			}
			continue
		}
		data, res, err := s.d.formContent(a.sd, nil)
		if err != nil {
			s.lost = cmp.Or(s.lost, err)
			continue
		}
		s.run(data, res, 1)
	}
}
