package pdftext

import (
	"math"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The document outline (bookmarks). pdfcpu reads it too, but drops items
// without a title or destination together with their children; we keep
// every item, resolve named destinations through both the catalog's /Dests
// dictionary and the /Names /Dests name tree, and give Page 0 where a
// destination does not lead to a page of this file.

// OutlineItem is one entry of the outline.
type OutlineItem struct {
	Title string
	// Page is the 1-based page the item points to, 0 when unknown.
	Page int
	// Level is the depth in the tree: 0 for top-level items.
	Level    int
	Children []OutlineItem
}

// maxOutlineItems bounds the items read from a hostile outline.
const maxOutlineItems = 100_000

// Outline returns the outline tree, or nil when the document has none. It is
// read once and cached; the cost is linear in the number of items (named
// destinations are indexed on first use). A broken outline yields the items
// read before the break.
func (d *Document) Outline() (items []OutlineItem) {
	if d.outlineDone {
		return d.outline
	}
	d.outlineDone = true
	defer func() {
		if r := recover(); r != nil {
			items = d.outline // what was read before the panic, if anything
		}
	}()
	root := d.root
	if root == nil {
		return nil
	}
	outlines := d.dict(root["Outlines"])
	if outlines == nil {
		return nil
	}
	o := &outlineReader{d: d, seen: map[int]bool{}}
	d.outline = o.items(outlines["First"], 0)
	d.outlineFlat = o.flat
	return d.outline
}

// flatItem is an outline item in document order with where on its page
// the destination points: top is the fraction of the page height above
// it (0 at the top edge), or -1 when the destination does not say.
type flatItem struct {
	title string
	level int
	page  int
	top   float64
}

type outlineReader struct {
	d     *Document
	seen  map[int]bool
	count int
	named map[string]types.Object
	flat  []flatItem
}

func (o *outlineReader) items(first types.Object, level int) []OutlineItem {
	var out []OutlineItem
	if level > maxTreeDepth {
		return nil
	}
	for ref := first; ref != nil && o.count < maxOutlineItems; {
		if ir, ok := ref.(types.IndirectRef); ok {
			if o.seen[ir.ObjectNumber.Value()] {
				break
			}
			o.seen[ir.ObjectNumber.Value()] = true
		}
		it := o.d.dict(ref)
		if it == nil {
			break
		}
		o.count++
		item := OutlineItem{Level: level}
		if t, err := model.Text(o.d.deref(it["Title"])); err == nil {
			item.Title = cleanTitle(t)
		}
		var top float64
		item.Page, top = o.itemPage(it)
		o.flat = append(o.flat, flatItem{title: item.Title, level: level, page: item.Page, top: top})
		if it["First"] != nil {
			item.Children = o.items(it["First"], level+1)
		}
		out = append(out, item)
		ref = it["Next"]
	}
	return out
}

// cleanTitle drops control characters, which some writers leave in titles.
func cleanTitle(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 32 || r == 0x7F {
			return -1
		}
		return r
	}, s))
}

func (o *outlineReader) itemPage(it types.Dict) (int, float64) {
	if dest, ok := it["Dest"]; ok {
		return o.destPage(dest, 0)
	}
	a := o.d.dict(it["A"])
	if a == nil || o.d.name(a["S"]) != "GoTo" {
		return 0, -1
	}
	return o.destPage(a["D"], 0)
}

// destPage resolves a destination (explicit array, name, string, or a
// dictionary holding one in /D) to a page number and the position of its
// top on the page (see flatItem).
func (o *outlineReader) destPage(dest types.Object, depth int) (int, float64) {
	if depth > 8 {
		return 0, -1
	}
	switch v := o.d.deref(dest).(type) {
	case types.Array:
		if len(v) == 0 {
			return 0, -1
		}
		page := 0
		switch p := v[0].(type) {
		case types.IndirectRef:
			page = o.d.pageByObj[p.ObjectNumber.Value()]
		case types.Integer:
			// A page index, as in remote go-to actions; some writers use it
			// locally too.
			if n := int(p) + 1; n >= 1 && n <= len(o.d.pages) {
				page = n
			}
		}
		return page, o.destTop(v, page)
	case types.Dict:
		return o.destPage(v["D"], depth+1)
	case types.Name:
		return o.destPage(o.namedDest(string(v)), depth+1)
	case types.StringLiteral, types.HexLiteral:
		return o.destPage(o.namedDest(rawString(v)), depth+1)
	}
	return 0, -1
}

// destTop reads the top coordinate of an explicit destination
// ([page /XYZ left top zoom], /FitH top, /FitBH top, /FitR l b r top; /Fit
// shows the whole page, so its top is the page's).
func (o *outlineReader) destTop(v types.Array, page int) float64 {
	if page < 1 || len(v) < 2 {
		return -1
	}
	p := &o.d.pages[page-1]
	y := math.NaN()
	switch o.d.name(v[1]) {
	case "XYZ":
		if len(v) >= 4 {
			if t, ok := o.d.number(v[3]); ok {
				y = t
			}
		}
	case "FitH", "FitBH":
		if len(v) >= 3 {
			if t, ok := o.d.number(v[2]); ok {
				y = t
			}
		}
	case "FitR":
		if len(v) >= 6 {
			if t, ok := o.d.number(v[5]); ok {
				y = t
			}
		}
	case "Fit", "FitB":
		return 0
	}
	if math.IsNaN(y) || p.rotate != 0 || p.crop.height() <= 0 {
		return -1
	}
	return min(max((p.crop[3]-y)/p.crop.height(), 0), 1)
}

// rawString returns the bytes of a string object, unescaped but not decoded,
// which is how name-tree keys compare.
func rawString(o types.Object) string {
	switch v := o.(type) {
	case types.StringLiteral:
		b, err := types.Unescape(string(v))
		if err != nil {
			return string(v)
		}
		return string(b)
	case types.HexLiteral:
		b, err := v.Bytes()
		if err != nil {
			return string(v)
		}
		return string(b)
	case types.Name:
		return string(v)
	}
	return ""
}

// namedDest looks a destination name up, indexing the catalog's /Dests and
// the /Names /Dests tree on first use.
func (o *outlineReader) namedDest(name string) types.Object {
	if o.named == nil {
		o.named = map[string]types.Object{}
		root := o.d.root
		for k, v := range o.d.dict(root["Dests"]) {
			o.named[k] = v
		}
		if names := o.d.dict(root["Names"]); names != nil {
			o.nameTree(names["Dests"], 0, map[int]bool{})
		}
	}
	return o.named[name]
}

func (o *outlineReader) nameTree(node types.Object, depth int, seen map[int]bool) {
	if depth > maxTreeDepth || len(o.named) > maxOutlineItems*10 {
		return
	}
	if ir, ok := node.(types.IndirectRef); ok {
		if seen[ir.ObjectNumber.Value()] {
			return
		}
		seen[ir.ObjectNumber.Value()] = true
	}
	n := o.d.dict(node)
	if n == nil {
		return
	}
	pairs := o.d.array(n["Names"])
	for i := 0; i+1 < len(pairs); i += 2 {
		key := rawString(o.d.deref(pairs[i]))
		if _, dup := o.named[key]; !dup {
			o.named[key] = pairs[i+1]
		}
	}
	for _, k := range o.d.array(n["Kids"]) {
		o.nameTree(k, depth+1, seen)
	}
}
