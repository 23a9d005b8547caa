package pdftext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// A page on its own (docs/ui.md#the-cited-page): the workspace's preview
// draws a cited page with pdf.js, which, to find page n of a document
// whose page tree is flat, reads every page object before it (and so
// every object stream holding one): most of a long document's structure
// for one page. PagePDF writes page n as a document of its own instead:
// the page and the objects it reaches (contents, resources, fonts,
// images, annotations' appearances), nothing of the other pages, so the
// viewer parses a few hundred kilobytes in one request.
//
// Objects keep their numbers, so the copy is the original's objects
// verbatim (streams still encoded, never decoded and re-encoded); only
// the page dictionary is rewritten, with its inherited attributes made
// its own and its parent a new one-page tree.

// ErrPagePDF: the document cannot be copied page by page (it is
// encrypted, or was read by the fallback reader): show it whole.
var ErrPagePDF = errors.New("pdftext: page cannot be copied on its own")

// Bounds of one page's copy: a hostile page that reaches a million objects
// or gigabytes of streams is refused, not written.
const (
	pageMaxObjects = 200_000
	pageMaxBytes   = 256 << 20
	// pageMaxNesting bounds the walk's recursion (dictionaries, arrays
	// and references within each other).
	pageMaxNesting = 1024
)

// pageSkipKeys are the entries that lead from a page's objects to other
// pages or to the document around it: followed, they would pull the whole
// file into the copy. Left out, a reader takes them as null (a reference
// to an object the copy lacks is one to a free object).
var pageSkipKeys = map[string]bool{
	"Parent":       true, // page tree, field hierarchy
	"P":            true, // an annotation's page
	"Dest":         true, // a link's target page
	"A":            true, // actions (GoTo a page)
	"AA":           true,
	"B":            true, // article beads
	"Next":         true, // bead and action chains
	"Prev":         true,
	"StructParent": true, "StructParents": true, // the structure tree
	"Thumb": true,
}

// CopyPage writes page n (from 1) of the PDF in r as a one-page PDF to w
// and returns the document's page count. It reads only what leads to the
// page: the cross-reference, the page tree's nodes on the way down (by
// their /Count, so a page of a flat tree costs the one object stream that
// holds it, not every page before it) and the page's objects. A tree whose
// counts do not add up is walked whole, as Open walks it, so the page is
// the one the index numbers n.
func CopyPage(r io.ReaderAt, size int64, n int, w io.Writer) (pages int, err error) {
	defer recoverTo(&err, "copy page")
	f, err := openLazy(r, size)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrPagePDF, err)
	}
	d := &Document{xref: f, root: f.root, pageByObj: map[int]int{}, fonts: map[int]*font{}}
	if p, nr, total, ok := d.findPage(n); ok {
		d.pages = []page{p}
		if nr >= 0 {
			d.pageByObj[nr] = 1
		}
		return total, d.PagePDF(1, w)
	}
	if err := d.collectPages(); err != nil {
		return 0, fmt.Errorf("pdftext: copy page: %w: %w", ErrMalformed, err)
	}
	if n < 1 || n > len(d.pages) {
		return len(d.pages), fmt.Errorf("pdftext: page %d of %d: %w", n, len(d.pages), ErrNoPage)
	}
	return len(d.pages), d.PagePDF(n, w)
}

// ErrNoPage: the document has no such page.
var ErrNoPage = errors.New("no such page")

// findPage descends the page tree to page n by the nodes' /Count: the page,
// its object number (−1 for a direct one), the tree's count, and ok false
// where the counts cannot be followed (missing, inconsistent, a loop):
// then the caller walks the tree whole.
func (d *Document) findPage(n int) (p page, nr, total int, ok bool) {
	ref := d.root["Pages"]
	rootNode := d.dict(ref)
	if rootNode == nil {
		return page{}, 0, 0, false
	}
	count, ok := d.number(rootNode["Count"])
	if !ok || count < 1 || n < 1 || float64(n) > count {
		return page{}, 0, 0, false
	}
	total = int(count)
	var inh inherited
	seen := map[int]bool{}
	left := n - 1 // pages to pass over below the current node
	for depth := 0; depth <= maxTreeDepth; depth++ {
		nr = -1
		if ir, isRef := ref.(types.IndirectRef); isRef {
			nr = ir.ObjectNumber.Value()
			if seen[nr] {
				return page{}, 0, 0, false
			}
			seen[nr] = true
		}
		node := d.dict(ref)
		if node == nil {
			return page{}, 0, 0, false
		}
		inh = d.inherit(node, inh)
		kids := d.array(node["Kids"])
		if isLeaf(d.name(node["Type"]), kids) {
			if left != 0 {
				return page{}, 0, 0, false
			}
			return leafPage(node, inh), nr, total, true
		}
		c, ok := d.number(node["Count"])
		if !ok || float64(left) >= c {
			return page{}, 0, 0, false
		}
		if int(c) == len(kids) {
			// As many pages as kids: each kid is one page (a node of
			// one page at most), so kid left is the one.
			ref, left = kids[left], 0
			if kn := d.dict(ref); kn == nil || !isLeaf(d.name(kn["Type"]), d.array(kn["Kids"])) {
				return page{}, 0, 0, false // an empty node beside a larger one
			}
			continue
		}
		// Every kid's count, so that a node whose kids do not add up to
		// its own count (and so a document count that is not the pages')
		// is walked whole.
		next, nextLeft, sum := types.Object(nil), 0, 0.0
		for _, k := range kids {
			kn := d.dict(k)
			if kn == nil {
				return page{}, 0, 0, false
			}
			kc := 1.0
			if !isLeaf(d.name(kn["Type"]), d.array(kn["Kids"])) {
				if kc, ok = d.number(kn["Count"]); !ok || kc < 0 {
					return page{}, 0, 0, false
				}
			}
			if next == nil && float64(left) < sum+kc {
				next, nextLeft = k, left-int(sum)
			}
			sum += kc
		}
		if next == nil || sum != c {
			return page{}, 0, 0, false
		}
		ref, left = next, nextLeft
	}
	return page{}, 0, 0, false
}

// PagePDF writes page n (from 1) as a one-page PDF to w.
func (d *Document) PagePDF(n int, w io.Writer) (err error) {
	defer recoverTo(&err, "page pdf")
	f, ok := d.xref.(*lazyFile)
	if !ok {
		return ErrPagePDF
	}
	if n < 1 || n > len(d.pages) {
		return fmt.Errorf("pdftext: page %d of %d: %w", n, len(d.pages), ErrNoPage)
	}
	p := d.pages[n-1]
	pageNr := -1
	for nr, pn := range d.pageByObj {
		if pn == n {
			pageNr = nr
		}
	}
	c := &pageCopy{f: f, objs: map[int]types.Object{}, gens: map[int]int{}}
	// The page's own dictionary with what it inherits made its own.
	pd := types.Dict{}
	for k, v := range p.dict {
		if !pageSkipKeys[k] && k != "Annots" {
			pd[k] = v
		}
	}
	pd["Type"] = types.Name("Page")
	if p.resources != nil {
		pd["Resources"] = d.usedResources(&p)
	}
	pd["MediaBox"] = boxArray(p.media)
	if p.crop != p.media {
		pd["CropBox"] = boxArray(p.crop)
	}
	if p.rotate != 0 {
		pd["Rotate"] = types.Integer(p.rotate)
	}
	if annots := d.array(p.dict["Annots"]); annots != nil {
		pd["Annots"] = annots
	}
	if err := c.walk(pd, 0); err != nil {
		return err
	}
	top := f.maxObject() + 1
	if pageNr < 0 || c.objs[pageNr] != nil {
		// A page written directly in its parent's kids (or reached again
		// from its own objects): it gets a number of its own.
		pageNr, top = top, top+1
	}
	treeNr, rootNr := top, top+1
	pd["Parent"] = types.IndirectRef{ObjectNumber: types.Integer(treeNr)}
	c.objs[pageNr], c.gens[pageNr] = pd, 0
	c.objs[treeNr] = types.Dict{"Type": types.Name("Pages"), "Count": types.Integer(1),
		"Kids": types.Array{types.IndirectRef{ObjectNumber: types.Integer(pageNr)}}}
	c.objs[rootNr] = types.Dict{"Type": types.Name("Catalog"), "Pages": types.IndirectRef{ObjectNumber: types.Integer(treeNr)}}
	return c.write(w, rootNr)
}

// resourceKinds are the resource dictionaries whose entries a content
// stream names as an operand (/F1 Tf, /Im0 Do, /GS0 gs, /CS0 cs, /P0 scn,
// /Sh0 sh, /MC0 BDC).
var resourceKinds = []string{"Font", "XObject", "ExtGState", "ColorSpace", "Pattern", "Shading", "Properties"}

// usedResources is p's resources with only the entries its content names:
// documents often give every page one dictionary of all their fonts and
// images. Any name in the content counts (a superset of the operands'),
// so nothing drawn goes missing; content that cannot be read keeps all.
func (d *Document) usedResources(p *page) types.Dict {
	content, lost, err := d.pageContent(p, nil)
	if err != nil || lost != nil {
		return p.resources
	}
	used := contentNames(content)
	res := types.Dict{}
	for k, v := range p.resources {
		res[k] = v
	}
	for _, kind := range resourceKinds {
		all := d.dict(p.resources[kind])
		if all == nil {
			continue
		}
		some := types.Dict{}
		for name, v := range all {
			if used[name] {
				some[name] = v
			}
		}
		res[kind] = some
	}
	return res
}

// contentNames lists the names (/Name, #xx escapes decoded) in content.
func contentNames(content []byte) map[string]bool {
	names := map[string]bool{}
	for i := 0; i < len(content); i++ {
		if content[i] != '/' {
			continue
		}
		j := i + 1
		for j < len(content) && !isDelimOrSpace(content[j]) {
			j++
		}
		if n, err := types.DecodeName(string(content[i+1 : j])); err == nil {
			names[n] = true
		}
		i = j - 1
	}
	return names
}

func isDelimOrSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\f', 0, '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func boxArray(b box) types.Array {
	return types.Array{types.Float(b[0]), types.Float(b[1]), types.Float(b[2]), types.Float(b[3])}
}

// pageCopy collects the objects a page reaches.
type pageCopy struct {
	f     *lazyFile
	objs  map[int]types.Object
	gens  map[int]int
	bytes int
}

func (c *pageCopy) walk(o types.Object, depth int) error {
	if depth > pageMaxNesting {
		return fmt.Errorf("pdftext: page pdf: objects nested deeper than %d", pageMaxNesting)
	}
	switch v := o.(type) {
	case types.IndirectRef:
		nr := v.ObjectNumber.Value()
		if _, ok := c.objs[nr]; ok {
			return nil
		}
		if len(c.objs) >= pageMaxObjects {
			return fmt.Errorf("pdftext: page pdf: the page reaches more than %d objects", pageMaxObjects)
		}
		obj, err := c.f.Dereference(v)
		if err != nil {
			return fmt.Errorf("pdftext: page pdf: object %d: %w", nr, err)
		}
		if obj == nil {
			return nil // free or missing: null, as in the original
		}
		if sd, ok := obj.(types.StreamDict); ok {
			if err := c.f.load(&sd); err != nil {
				return err
			}
			if c.bytes += len(sd.Raw); c.bytes > pageMaxBytes {
				return fmt.Errorf("pdftext: page pdf: the page's streams pass %d MiB", pageMaxBytes>>20)
			}
			obj = sd
		}
		c.objs[nr], c.gens[nr] = obj, v.GenerationNumber.Value()
		return c.walk(obj, depth+1)
	case types.Dict:
		for k, e := range v {
			if !pageSkipKeys[k] {
				if err := c.walk(e, depth+1); err != nil {
					return err
				}
			}
		}
	case types.StreamDict:
		return c.walk(v.Dict, depth+1)
	case types.Array:
		for _, e := range v {
			if err := c.walk(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// write writes the objects, a cross-reference table and the trailer.
func (c *pageCopy) write(out io.Writer, rootNr int) error {
	w := &countWriter{w: bufio.NewWriterSize(out, 64<<10)}
	// The second line's high bytes mark the file as binary (PDF 32000-1, 7.5.2).
	w.str("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	nrs := make([]int, 0, len(c.objs))
	for nr := range c.objs {
		nrs = append(nrs, nr)
	}
	slices.Sort(nrs)
	offsets := map[int]int64{}
	for _, nr := range nrs {
		offsets[nr] = w.n
		w.str(strconv.Itoa(nr) + " " + strconv.Itoa(c.gens[nr]) + " obj\n")
		switch v := c.objs[nr].(type) {
		case types.StreamDict:
			dict := v.Dict.Clone().(types.Dict)
			// The length as the copy has it, never a reference to an
			// object the copy may lack.
			dict["Length"] = types.Integer(len(v.Raw))
			w.str(dict.PDFString())
			w.str("\nstream\n")
			w.bytes(v.Raw)
			w.str("\nendstream")
		default:
			w.str(pdfString(v))
		}
		w.str("\nendobj\n")
	}
	size := nrs[len(nrs)-1] + 1
	xref := w.n
	w.str("xref\n0 " + strconv.Itoa(size) + "\n")
	w.str("0000000000 65535 f\r\n")
	for nr := 1; nr < size; nr++ {
		if off, ok := offsets[nr]; ok {
			w.str(fmt.Sprintf("%010d %05d n\r\n", off, c.gens[nr]))
		} else {
			w.str("0000000000 00000 f\r\n")
		}
	}
	w.str(fmt.Sprintf("trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, rootNr, xref))
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func pdfString(o types.Object) string {
	if o == nil {
		return "null"
	}
	return o.PDFString()
}

// countWriter writes and counts, keeping the first error.
type countWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (w *countWriter) str(s string) {
	if w.err == nil {
		var k int
		k, w.err = w.w.WriteString(s)
		w.n += int64(k)
	}
}

func (w *countWriter) bytes(b []byte) {
	if w.err == nil {
		var k int
		k, w.err = w.w.Write(b)
		w.n += int64(k)
	}
}

// maxObject is the highest object number the cross-reference lists.
func (f *lazyFile) maxObject() int {
	top := 0
	for nr := range f.xref {
		top = max(top, nr)
	}
	return top
}
