package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// docx is one DOCX extraction: the package, the output and what the parts
// share (heading styles, the outline, media already emitted).
type docx struct {
	p       *pkg
	s       *sink
	lim     Limits
	styles  map[string]int // paragraph style ID → heading level (1..9)
	outline outline
	media   map[string]bool // media parts already emitted
	tables  int
	images  int
	skipped []string // optional parts that could not be read, and why
	// nest is how many altChunk levels deep this document is (0 for the
	// file itself); chunks is what all levels share.
	nest   int
	chunks *chunkBudget
	embed  *embedder // OLE objects (w:object/o:OLEObject)
}

// extractDOCX walks word/document.xml, then headers, footers, footnotes,
// endnotes and comments, then media no part referenced.
func extractDOCX(ctx context.Context, in input, s *sink) error {
	p, err := openPackage(in.r, in.size, in.lim)
	if err != nil {
		return err
	}
	x := &docx{p: p, s: s, lim: in.lim, media: map[string]bool{}, outline: outline{max: 10_000}, chunks: &chunkBudget{},
		embed: &embedder{ctx: ctx, p: p, s: s, lim: in.lim}}
	return x.run(ctx)
}

// run reads the package's document into the sink.
func (x *docx) run(ctx context.Context) error {
	p, s := x.p, x.s
	main, err := p.mainPart("word/document.xml")
	if err != nil {
		return err
	}
	rels, err := p.relsOf(main)
	if err != nil {
		return err
	}
	x.styles = x.readStyles(rels)
	paras, err := x.walkPart(main, "document", rels, true)
	if err != nil {
		return err
	}
	parts := []string{"document"}
	// Secondary parts in a stable order: kind, then natural name order.
	for _, kind := range []string{"header", "footer", "footnotes", "endnotes", "comments"} {
		for _, target := range relTargets(rels, kind, p) {
			if s.full() {
				break
			}
			label := partBase(target)
			prels, err := p.relsOf(target)
			if err == nil {
				_, err = x.walkPart(target, label, prels, false)
			}
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return err
				}
				x.skipped = append(x.skipped, fmt.Sprintf("%s: %v", target, err))
				continue
			}
			parts = append(parts, label)
		}
	}
	x.orphanMedia(p.names(dirOf(main) + "media/"))
	s.structure["parts"] = parts
	s.structure["paragraphs"] = paras
	s.structure["tables"] = x.tables
	s.structure["images"] = x.images
	if len(x.outline.sections) > 0 {
		s.structure["sections"] = x.outline.sections
	}
	if len(x.skipped) > 0 {
		s.structure["skipped"] = x.skipped
	}
	if x.nest == 0 && x.chunks.read > 0 {
		s.structure["altChunks"] = x.chunks.read
	}
	x.embed.finish()
	return nil
}

// relTargets lists the internal targets of relationships of a type, in
// natural order of their names, each once, only those present.
func relTargets(rels []rel, typ string, p *pkg) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rels {
		if r.Type == typ && !r.External && !seen[r.Target] && p.has(r.Target) {
			seen[r.Target] = true
			out = append(out, r.Target)
		}
	}
	sortNatural(out)
	return out
}

func dirOf(part string) string {
	if i := strings.LastIndex(part, "/"); i >= 0 {
		return part[:i+1]
	}
	return ""
}

// headingName matches the built-in heading styles' names ("heading 1"),
// which Word keeps in English whatever the UI language, and their usual
// IDs ("Heading1").
var headingName = regexp.MustCompile(`(?i)^heading\s*([1-9])$`)

// readStyles maps paragraph style IDs to heading levels: by the built-in
// name, else by an outline level set in the style, following basedOn.
// Without styles.xml the conventional IDs still work.
func (x *docx) readStyles(rels []rel) map[string]int {
	levels := map[string]int{}
	name := "word/styles.xml"
	for _, r := range rels {
		if r.Type == "styles" && !r.External {
			name = r.Target
		}
	}
	// A streaming read of the few fields needed: styles.xml runs to tens
	// of kilobytes of formatting nobody here reads.
	type style struct {
		name, basedOn, outline string
		hasOutline             bool
	}
	byID := map[string]style{}
	if rc, err := x.p.open(name); err == nil {
		defer rc.Close()
		d := newXMLDecoder(rc)
		var (
			cur   style
			id    string
			inPar bool // inside a paragraph style
		)
		for {
			t, err := d.RawToken()
			if err != nil {
				if err != io.EOF {
					x.skipped = append(x.skipped, fmt.Sprintf("%s: %v", name, err))
				}
				break
			}
			switch e := t.(type) {
			case xml.StartElement:
				switch e.Name.Local {
				case "style":
					typ := attr(e, "type")
					inPar, id, cur = typ == "" || typ == "paragraph", attr(e, "styleId"), style{}
				case "name":
					cur.name = attr(e, "val")
				case "basedOn":
					cur.basedOn = attr(e, "val")
				case "outlineLvl":
					cur.outline, cur.hasOutline = attr(e, "val"), true
				}
			case xml.EndElement:
				if e.Name.Local == "style" && inPar {
					byID[id] = cur
					inPar = false
				}
			}
		}
	}
	var level func(id string, depth int) int
	level = func(id string, depth int) int {
		st, ok := byID[id]
		if !ok || depth > 10 {
			if m := headingName.FindStringSubmatch(id); m != nil {
				return int(m[1][0] - '0')
			}
			return 0
		}
		if m := headingName.FindStringSubmatch(st.name); m != nil {
			return int(m[1][0] - '0')
		}
		if st.hasOutline {
			if n, err := strconv.Atoi(st.outline); err == nil && n >= 0 && n < 9 {
				return n + 1
			}
			return 0
		}
		if st.basedOn != "" {
			return level(st.basedOn, depth+1)
		}
		return 0
	}
	for id := range byID {
		if l := level(id, 0); l > 0 {
			levels[id] = l
		}
	}
	return levels
}

// docxWalker walks one part.
type docxWalker struct {
	x        *docx
	d        *xml.Decoder
	part     string // Ref.Part
	rels     map[string]rel
	para     int            // non-empty paragraphs so far
	meta     map[string]any // the note or comment being walked
	sections bool           // headings open sections (the main document only)
	depth    int            // element nesting of the walk
	// nestedTables counts the tables in cells of the table being read.
	nestedTables int
}

// paraResult is what a paragraph holds.
type paraResult struct {
	text   string
	num    int      // its paragraph number, 0 when it has no text
	after  int      // the number of the last paragraph with text up to it
	level  int      // heading level, 0 for body text
	images []imgRef // pictures anchored in the paragraph
	nested []func() // text boxes: emitted after their anchor paragraph
}

type imgRef struct {
	rel rel
	alt string
}

// walkPart walks a part's block content and returns its paragraph count.
func (x *docx) walkPart(name, label string, rels []rel, sections bool) (int, error) {
	d, c, err := x.p.decoder(name)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	w := &docxWalker{x: x, d: d, part: label, rels: relByID(rels), sections: sections}
	if err := w.blocks(); err != nil && !errors.Is(err, errFull) {
		return w.para, fmt.Errorf("%s: %w", name, err)
	}
	return w.para, nil
}

// errFull stops a walk once the output is full.
var errFull = errors.New("output full")

// blocks walks block-level content up to the end of the enclosing element
// (or of the part), emitting paragraphs and tables.
func (w *docxWalker) blocks() error {
	for {
		if w.x.s.full() {
			if err := w.x.s.ctx.Err(); err != nil {
				return err
			}
			return errFull
		}
		t, err := xmlToken(w.d)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch e := t.(type) {
		case xml.EndElement:
			return nil
		case xml.StartElement:
			if err := w.block(e, nil); err != nil {
				return err
			}
		}
	}
}

// block handles one block-level element. In a table cell, cell collects
// the paragraphs' text instead of emitting them.
func (w *docxWalker) block(e xml.StartElement, cell *docxCell) error {
	switch e.Name.Local {
	case "p":
		r, err := w.paragraph()
		if err != nil {
			return err
		}
		if cell != nil {
			cell.add(w, r)
			return nil
		}
		w.emitParagraph(r)
		return nil
	case "tbl":
		rows, first, last, later, err := w.table()
		if err != nil {
			return err
		}
		if cell != nil {
			cell.addTable(rows, first, last, later)
			w.nestedTables++
			return nil
		}
		w.emitTable(rows, first, last)
		for _, f := range later {
			f()
		}
		return nil
	case "sectPr", "del", "moveFrom", "pPr", "rPr", "tblPr", "tblGrid", "trPr", "tcPr":
		return w.d.Skip()
	case "altChunk":
		if err := w.altChunk(attrNS(e, "relationships", "id"), cell); err != nil {
			return err
		}
		return w.d.Skip()
	case "AlternateContent":
		return w.alternate(func(e xml.StartElement) error { return w.block(e, cell) })
	case "footnote", "endnote":
		switch attr(e, "type") {
		case "separator", "continuationSeparator", "continuationNotice":
			return w.d.Skip()
		}
		w.meta = map[string]any{"note": attr(e, "id")}
		defer func() { w.meta = nil }()
	case "comment":
		w.meta = map[string]any{"commentId": attr(e, "id")}
		if a := attr(e, "author"); a != "" {
			w.meta["author"] = a
		}
		defer func() { w.meta = nil }()
	}
	// Containers: body, sdt, sdtContent, customXml, ins, moveTo, hdr, …
	return w.children(func(c xml.StartElement) error { return w.block(c, cell) })
}

// children runs f on each child element up to the end of the current one.
// Content nested deeper than maxDepth is skipped: real documents nest a
// few dozen levels, and the walk recurses once per level.
func (w *docxWalker) children(f func(xml.StartElement) error) error {
	if w.depth >= maxDepth {
		return w.d.Skip()
	}
	w.depth++
	defer func() { w.depth-- }()
	return xmlChildren(w.d, f)
}

// alternate takes the first choice of an mc:AlternateContent.
func (w *docxWalker) alternate(f func(xml.StartElement) error) error {
	return xmlAlternate(w.d, f)
}

// paragraph reads a w:p: its style, its text and what is anchored in it.
func (w *docxWalker) paragraph() (paraResult, error) {
	var (
		r   paraResult
		b   strings.Builder
		alt string // alt text of the drawing being read
		fn  func(xml.StartElement) error
	)
	fn = func(e xml.StartElement) error {
		switch e.Name.Local {
		case "pPr":
			return w.paraProps(&r)
		case "t":
			return w.text(&b)
		case "delText", "instrText", "delInstrText", "rPr", "del", "moveFrom",
			"footnoteReference", "endnoteReference", "commentReference", "fldData":
			return w.d.Skip()
		case "tab", "ptab":
			b.WriteByte('\t')
		case "br", "cr":
			b.WriteByte('\n')
		case "noBreakHyphen":
			b.WriteByte('-')
		case "AlternateContent":
			return w.alternate(fn)
		case "docPr", "cNvPr":
			// Alt text of the picture that follows.
			if alt == "" {
				alt = firstNonEmpty(attr(e, "descr"), attr(e, "title"))
			}
		case "blip", "imagedata":
			id := firstNonEmpty(attrNS(e, "relationships", "embed"), attrNS(e, "relationships", "id"), attrNS(e, "relationships", "link"))
			if rl, ok := w.rels[id]; ok {
				r.images = append(r.images, imgRef{rel: rl, alt: alt})
				alt = ""
			}
		case "chart":
			// A chart's text (titles, series) follows its paragraph.
			if rl, ok := w.rels[attrNS(e, "relationships", "id")]; ok && !rl.External {
				r.nested = append(r.nested, func() {
					if text := chartText(w.x.p, rl.Target); text != "" {
						w.x.s.add(content.Object{ContentType: content.Text, Data: text, Ref: w.ref(0),
							Metadata: map[string]any{"chart": true, "afterParagraph": w.para}})
					}
				})
			}
		case "OLEObject":
			// An embedded document (VML o:OLEObject in a w:object): its
			// text follows its paragraph, as a chart's does.
			if rl, ok := w.rels[attrNS(e, "relationships", "id")]; ok && !rl.External && attr(e, "Type") != "Link" {
				progID := attr(e, "ProgID")
				r.nested = append(r.nested, func() {
					if text := w.x.embed.text(rl.Target, progID); text != "" {
						w.x.s.add(content.Object{ContentType: content.Text, Data: text, Ref: w.ref(0),
							Metadata: map[string]any{"embedded": rl.Target, "afterParagraph": w.para}})
					}
				})
			}
		case "txbxContent":
			// A text box: its paragraphs are their own, after this one.
			sub := &docxWalker{x: w.x, d: w.d, part: w.part, rels: w.rels, meta: w.meta, sections: w.sections}
			sub.para, sub.depth = w.para, w.depth
			var queued []func()
			err := w.children(func(c xml.StartElement) error {
				if c.Name.Local == "p" {
					pr, err := sub.paragraph()
					if err != nil {
						return err
					}
					queued = append(queued, func() { sub.emitParagraph(pr) })
					return nil
				}
				return sub.block(c, nil)
			})
			w.para = sub.para
			r.nested = append(r.nested, queued...)
			return err
		}
		return w.children(fn)
	}
	if err := w.children(fn); err != nil {
		return r, err
	}
	r.text = b.String()
	if strings.TrimSpace(r.text) != "" {
		w.para++
		r.num = w.para
	}
	r.after = w.para
	return r, nil
}

// paraProps reads the style and outline level of a paragraph.
func (w *docxWalker) paraProps(r *paraResult) error {
	return w.children(func(e xml.StartElement) error {
		switch e.Name.Local {
		case "pStyle":
			if l, ok := w.x.styles[attr(e, "val")]; ok {
				r.level = l
			} else if m := headingName.FindStringSubmatch(attr(e, "val")); m != nil {
				r.level = int(m[1][0] - '0')
			}
		case "outlineLvl":
			if n, err := strconv.Atoi(attr(e, "val")); err == nil && n >= 0 && n < 9 {
				r.level = n + 1
			}
		}
		return w.d.Skip()
	})
}

// text appends the character data of a w:t.
func (w *docxWalker) text(b *strings.Builder) error {
	return xmlText(w.d, b)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// ref is the reference of an object at the walker's position.
func (w *docxWalker) ref(paragraph int) content.Ref {
	r := content.Ref{Part: w.part, Paragraph: paragraph}
	if w.sections {
		r.SectionID = w.x.outline.current()
	}
	return r
}

func (w *docxWalker) metadata() map[string]any {
	if w.meta == nil {
		return nil
	}
	m := make(map[string]any, len(w.meta))
	for k, v := range w.meta {
		m[k] = v
	}
	return m
}

// emitParagraph adds a paragraph's text object (if it has text), then its
// text boxes and pictures.
func (w *docxWalker) emitParagraph(r paraResult) {
	for _, f := range r.nested {
		f()
	}
	n := r.num
	if n > 0 {
		md := w.metadata()
		if r.level > 0 && w.sections {
			label := headingText(r.text)
			w.x.outline.heading(r.level, label, map[string]any{"paragraph": n})
			if md == nil {
				md = map[string]any{}
			}
			md["heading"] = r.level
			ref := w.ref(n)
			ref.Label = label
			w.x.s.add(content.Object{ContentType: content.Text, Data: r.text, Ref: ref, Metadata: md})
		} else {
			w.x.s.add(content.Object{ContentType: content.Text, Data: r.text, Ref: w.ref(n), Metadata: md})
		}
	}
	for _, im := range r.images {
		w.emitImage(im, n, r.after)
	}
}

// emitImage adds an image object for a picture reference. A picture in an
// empty paragraph gets no paragraph number, but says which paragraph it
// follows.
func (w *docxWalker) emitImage(im imgRef, paragraph, after int) {
	if im.rel.ID == "" {
		return
	}
	ref := w.ref(paragraph)
	ref.Label = headingText(im.alt)
	var o content.Object
	if im.rel.External {
		o = content.Object{ContentType: content.Image, Data: im.rel.Target, Metadata: map[string]any{"encoding": "url"}}
	} else {
		if w.x.media[im.rel.Target] {
			return
		}
		w.x.media[im.rel.Target] = true
		o = w.x.p.mediaObject(im.rel.Target, w.x.lim)
	}
	if paragraph == 0 && after > 0 {
		o.Metadata["afterParagraph"] = after
	}
	o.Ref = ref
	if o.ContentType == content.Image {
		w.x.images++
	}
	w.x.s.add(o)
}

// orphanMedia adds the media files no walked part referenced.
func (x *docx) orphanMedia(names []string) {
	for _, n := range names {
		if x.media[n] || x.s.full() {
			continue
		}
		x.media[n] = true
		o := x.p.mediaObject(n, x.lim)
		o.Ref = content.Ref{Part: "media", Label: partBase(n)}
		if o.ContentType == content.Image {
			x.images++
		}
		x.s.add(o)
	}
}

// docxCell collects a table cell: paragraph texts, nested tables a line per row,
// the paragraph numbers it spans and what to emit after the table.
type docxCell struct {
	parts       []string
	first, last int
	later       []func()
}

func (c *docxCell) add(w *docxWalker, r paraResult) {
	if r.num > 0 {
		c.parts = append(c.parts, strings.TrimSpace(r.text))
		c.mark(r.num, r.num)
	}
	c.later = append(c.later, r.nested...)
	for _, im := range r.images {
		c.later = append(c.later, func() { w.emitImage(im, r.num, r.after) })
	}
}

func (c *docxCell) mark(first, last int) {
	if first == 0 {
		return
	}
	if c.first == 0 {
		c.first = first
	}
	c.last = max(c.last, last)
}

// addTable writes a nested table into the cell, a line per row (see
// nestedTableText).
func (c *docxCell) addTable(rows [][]string, first, last int, later []func()) {
	if text := nestedTableText(rows); text != "" {
		c.parts = append(c.parts, text)
	}
	c.mark(first, last)
	c.later = append(c.later, later...)
}

// table reads a w:tbl into rows of cell texts. Horizontally merged cells
// (gridSpan) leave empty cells after them so columns stay aligned.
func (w *docxWalker) table() (rows [][]string, first, last int, later []func(), err error) {
	err = w.children(func(e xml.StartElement) error {
		switch e.Name.Local {
		case "tr":
			var row []string
			err := w.children(func(e xml.StartElement) error {
				if e.Name.Local != "tc" {
					if e.Name.Local == "sdt" || e.Name.Local == "customXml" || e.Name.Local == "sdtContent" {
						return w.children(func(e xml.StartElement) error { return w.cell(e, &row, &first, &last, &later) })
					}
					return w.d.Skip()
				}
				return w.cell(e, &row, &first, &last, &later)
			})
			rows = append(rows, row)
			return err
		case "sdt", "customXml", "sdtContent":
			sub, f, l, lt, err := w.table()
			rows = append(rows, sub...)
			if first == 0 {
				first = f
			}
			last = max(last, l)
			later = append(later, lt...)
			return err
		}
		return w.d.Skip()
	})
	return rows, first, last, later, err
}

// cell reads one w:tc (or descends toward one through content controls).
func (w *docxWalker) cell(e xml.StartElement, row *[]string, first, last *int, later *[]func()) error {
	if e.Name.Local != "tc" {
		if e.Name.Local == "sdtContent" {
			return w.children(func(e xml.StartElement) error { return w.cell(e, row, first, last, later) })
		}
		return w.d.Skip()
	}
	var c docxCell
	span := 1
	err := w.children(func(e xml.StartElement) error {
		if e.Name.Local == "tcPr" {
			return w.children(func(p xml.StartElement) error {
				if p.Name.Local == "gridSpan" {
					if n, err := strconv.Atoi(attr(p, "val")); err == nil && n > 1 && n < 64 {
						span = n
					}
				}
				return w.d.Skip()
			})
		}
		return w.block(e, &c)
	})
	*row = append(*row, strings.Join(c.parts, "\n"))
	for i := 1; i < span; i++ {
		*row = append(*row, "")
	}
	if c.first != 0 {
		if *first == 0 {
			*first = c.first
		}
		*last = max(*last, c.last)
	}
	*later = append(*later, c.later...)
	return err
}

// emitTable adds a table as one Markdown text object, unless it is empty.
func (w *docxWalker) emitTable(rows [][]string, first, last int) {
	has := false
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
		for _, c := range r {
			has = has || strings.TrimSpace(c) != ""
		}
	}
	if !has {
		return
	}
	w.x.tables++
	md := w.metadata()
	if md == nil {
		md = map[string]any{}
	}
	md["table"] = w.x.tables
	md["rows"], md["cols"] = len(rows), cols
	if last > first {
		md["lastParagraph"] = last
	}
	if w.nestedTables > 0 {
		md["nestedTables"] = w.nestedTables
	}
	w.nestedTables = 0
	w.x.s.add(content.Object{ContentType: content.Text, Data: markdownTable(rows), Ref: w.ref(first), Metadata: md})
}
