package extract

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/agenthost/agenthost/pdk/content"
)

// odfKind is "text", "spreadsheet" or "presentation" for the MIME types of
// OpenDocument files (templates included), "" for others.
func odfKind(m string) string {
	switch strings.TrimSuffix(m, "-template") {
	case mimeODT:
		return "text"
	case mimeODS:
		return "spreadsheet"
	case mimeODP:
		return "presentation"
	}
	return ""
}

// odfMaxRepeat bounds how often a repeated non-empty cell or row is
// written out: repeats exist to compress, and a hostile file could ask
// for a billion copies.
const odfMaxRepeat = 1000

// odfSkip are elements whose text is not the document's own: tables of
// contents and indexes (copies of headings), deleted text of tracked
// changes, declarations, and the metadata of annotations.
var odfSkip = map[string]bool{
	"table-of-content": true, "alphabetical-index": true, "illustration-index": true,
	"table-index": true, "object-index": true, "user-index": true, "bibliography": true,
	"tracked-changes": true, "sequence-decls": true, "variable-decls": true,
	"user-field-decls": true, "note-citation": true,
	"forms": true, "soft-page-break": true, "bookmark": true, "bookmark-start": true,
	"bookmark-end": true, "reference-mark-start": true, "reference-mark-end": true,
	"annotation-end": true,
}

// extractODF reads an OpenDocument text, spreadsheet or presentation
// (content.xml of the package): references as for the OOXML formats.
//
//	ODT  Part "document" (Paragraph, SectionID from the text:h outline, Label
//	     on headings; tables as Markdown), "footnotes"/"endnotes" and
//	     "comments" for notes and annotations.
//	ODS  SheetName, Location "sheet:NAME!A1:F20"; dates as ISO dates.
//	ODP  SlideIndex, Part the page's name, Location "slide:N" and
//	     "slide:N/notes"; hidden pages have Metadata["hidden"]. The footer
//	     a page shows is in its text; a master page's own text is an
//	     object of Part "master", Location "master:NAME".
//
// Embedded objects (draw:object: charts, texts, spreadsheets) are read
// where they stand (odfobject.go).
func extractODF(ctx context.Context, in input, s *sink) error {
	p, err := openPackage(in.r, in.size, in.lim)
	if err != nil {
		return err
	}
	kind := ""
	if b, err := p.readAll("mimetype"); err == nil {
		kind = odfKind(strings.TrimSpace(string(b)))
		if kind != "" {
			s.mime = strings.TrimSpace(string(b))
		}
	}
	if kind == "" {
		kind = odfKind(in.mime)
	}
	if !p.has("content.xml") {
		if p.has("encryptiondata") || p.has("meta-inf/manifest.xml") && manifestEncrypted(p) {
			return fmt.Errorf("%w: a password-protected OpenDocument file", ErrEncrypted)
		}
		return fmt.Errorf("%w: an OpenDocument package without content.xml", ErrMalformed)
	}
	if manifestEncrypted(p) {
		return fmt.Errorf("%w: a password-protected OpenDocument file (content.xml is encrypted)", ErrEncrypted)
	}
	d, c, err := p.decoder("content.xml")
	if err != nil {
		return err
	}
	defer c.Close()
	w := &odfWalker{ctx: ctx, d: d, s: s, lim: in.lim, kind: kind, hiddenStyles: map[string]bool{}, p: p}
	err = xmlRoot(d, func(root xml.StartElement) error {
		return xmlChildren(d, func(e xml.StartElement) error {
			switch e.Name.Local {
			case "automatic-styles":
				return w.styles()
			case "body":
				return xmlChildren(d, func(e xml.StartElement) error {
					switch e.Name.Local {
					case "text":
						return w.blocks()
					case "spreadsheet":
						return w.spreadsheet()
					case "presentation", "drawing":
						return w.presentation()
					}
					return d.Skip()
				})
			}
			return d.Skip()
		})
	})
	if err != nil {
		return fmt.Errorf("content.xml: %w", err)
	}
	if kind == "text" && p.has("styles.xml") {
		if err := w.headersFooters(p); err != nil {
			return fmt.Errorf("styles.xml: %w", err)
		}
	}
	if kind == "presentation" && p.has("styles.xml") && !s.full() {
		// The master pages are not what the slides need: a broken
		// styles.xml loses them alone.
		if err := w.masterPages(p); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.skipped = append(w.skipped, fmt.Sprintf("styles.xml: %v", err))
		}
	}
	w.finish()
	s.structure["format"] = "odf-" + kind
	return nil
}

// manifestEncrypted reports whether META-INF/manifest.xml marks content.xml
// as encrypted.
func manifestEncrypted(p *pkg) bool {
	b, err := p.readAll("META-INF/manifest.xml")
	if err != nil {
		return false
	}
	i := strings.Index(string(b), `"content.xml"`)
	if i < 0 {
		return false
	}
	rest := string(b[i:])
	if j := strings.Index(rest, "</manifest:file-entry>"); j >= 0 {
		rest = rest[:j]
	} else if j := strings.Index(rest, "/>"); j >= 0 {
		rest = rest[:j]
	}
	return strings.Contains(rest, "encryption-data")
}

// odfWalker reads content.xml. Paragraphs go to the sink, or to collect
// when a table cell or a slide gathers them.
type odfWalker struct {
	ctx     context.Context
	d       *xml.Decoder
	s       *sink
	lim     Limits
	kind    string
	depth   int
	collect *[]string
	outline outline
	paras   int
	tables  int
	// cells is how deep in table cells the walk is; nestedTables counts
	// the tables met in the cells of the table being read.
	cells, nestedTables int
	notes               []odfNote
	// hiddenStyles are drawing-page styles with presentation:visibility
	// hidden and table styles with table:display false.
	hiddenStyles map[string]bool
	// later are paragraphs of frames met inside a paragraph, emitted after it.
	later  []string
	slides []map[string]any
	sheets []map[string]any
	// p is the package, for embedded objects' parts; nest is how many
	// embedded objects deep this walk is; objects counts those read, and
	// skipped those that could not be.
	p         *pkg
	nest      int
	objects   int
	skipped   []string
	objBudget *chunkBudget // shared by the levels of one file
	// cellNotes, while a spreadsheet cell is read, collects its
	// annotations (cell comments), which stand beside the cell's
	// paragraphs rather than inside one.
	cellNotes *[]excelize.Comment
	base      string // the folder of the object being read ("Object 1/"), "" for the file
	// decls are a presentation's footer and header declarations by
	// "footer:NAME"; masterUse the slides each master page serves, and
	// masters the master pages read.
	decls     map[string]string
	masterUse map[string][]int
	masters   []string
}

type odfNote struct {
	part, text string
}

func (w *odfWalker) children(f func(xml.StartElement) error) error {
	if w.depth >= maxDepth {
		return w.d.Skip()
	}
	w.depth++
	defer func() { w.depth-- }()
	return xmlChildren(w.d, f)
}

// styles reads the automatic styles: which drawing-page styles hide a page
// and which table styles hide a sheet.
func (w *odfWalker) styles() error {
	return w.children(func(e xml.StartElement) error {
		family := attr(e, "family")
		if e.Name.Local != "style" || family != "drawing-page" && family != "table" {
			return w.d.Skip()
		}
		name := attr(e, "name")
		return w.children(func(pe xml.StartElement) error {
			switch {
			case pe.Name.Local == "drawing-page-properties" && attr(pe, "visibility") == "hidden",
				pe.Name.Local == "table-properties" && attr(pe, "display") == "false":
				w.hiddenStyles[name] = true
			}
			return w.d.Skip()
		})
	})
}

// blocks reads block content: headings, paragraphs, lists, tables,
// sections and frames.
func (w *odfWalker) blocks() error {
	return w.children(w.block)
}

func (w *odfWalker) block(e xml.StartElement) error {
	if w.s.full() {
		return w.d.Skip()
	}
	switch e.Name.Local {
	case "h", "p":
		var b strings.Builder
		if err := w.inline(&b); err != nil {
			return err
		}
		level := 0
		if e.Name.Local == "h" {
			level, _ = strconv.Atoi(attr(e, "outline-level"))
			level = max(level, 1)
		}
		w.paragraph(b.String(), level)
		later := w.later
		w.later = nil
		for _, t := range later {
			w.paragraph(t, 0)
		}
		return nil
	case "list", "list-item", "list-header", "section", "text-box", "frame", "g",
		"index-body", "deletion", "change", "numbered-paragraph", "note-body":
		if e.Name.Local == "deletion" {
			return w.d.Skip()
		}
		return w.blocks()
	case "table":
		return w.table()
	case "object":
		return w.object(e)
	case "annotation":
		if w.cellNotes != nil {
			return w.cellAnnotation()
		}
		return w.aside("comments")
	}
	return w.d.Skip()
}

// cellAnnotation reads a spreadsheet cell's annotation: its author
// (dc:creator) and its paragraphs; its date is left out.
func (w *odfWalker) cellAnnotation() error {
	notes := w.cellNotes
	w.cellNotes = nil // an annotation holds none of its own
	defer func() { w.cellNotes = notes }()
	var c excelize.Comment
	var got []string
	outer := w.collect
	w.collect = &got
	w.cells++
	err := w.children(func(e xml.StartElement) error {
		switch e.Name.Local {
		case "creator":
			var b strings.Builder
			if err := w.inline(&b); err != nil {
				return err
			}
			c.Author = strings.TrimSpace(b.String())
			return nil
		case "date", "date-string":
			return w.d.Skip()
		}
		return w.block(e)
	})
	w.cells--
	w.collect = outer
	if c.Text = strings.Join(got, "\n"); strings.TrimSpace(c.Text) != "" && len(*notes) < w.lim.MaxObjects {
		*notes = append(*notes, c)
	}
	return err
}

// paragraph emits (or collects) one paragraph; level > 0 is a heading.
func (w *odfWalker) paragraph(text string, level int) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if w.collect != nil {
		*w.collect = append(*w.collect, text)
		return
	}
	w.paras++
	ref := content.Ref{Part: "document", Paragraph: w.paras}
	var md map[string]any
	if level > 0 {
		label := headingText(text)
		w.outline.heading(level, label, map[string]any{"paragraph": w.paras})
		ref.Label = label
		md = map[string]any{"heading": level}
	}
	ref.SectionID = w.outline.current()
	w.s.add(content.Object{ContentType: content.Text, Data: text, Ref: ref, Metadata: md})
}

// inline appends the text of the paragraph just started: spans, links,
// spaces and tabs; notes and annotations are kept aside, frames' text
// follows the paragraph.
func (w *odfWalker) inline(b *strings.Builder) error {
	if w.depth >= maxDepth {
		return w.d.Skip()
	}
	w.depth++
	defer func() { w.depth-- }()
	for {
		t, err := xmlToken(w.d)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("%w: unexpected end of part", ErrMalformed)
			}
			return err
		}
		switch e := t.(type) {
		case xml.EndElement:
			return nil
		case xml.CharData:
			writeCollapsed(b, string(e))
		case xml.StartElement:
			if err := w.inlineElement(b, e); err != nil {
				return err
			}
		}
	}
}

func (w *odfWalker) inlineElement(b *strings.Builder, e xml.StartElement) error {
	switch e.Name.Local {
	case "s":
		n, err := strconv.Atoi(attr(e, "c"))
		if err != nil || n < 1 {
			n = 1
		}
		b.WriteString(strings.Repeat(" ", min(n, 100)))
		return w.d.Skip()
	case "tab":
		b.WriteByte('\t')
		return w.d.Skip()
	case "line-break":
		b.WriteByte('\n')
		return w.d.Skip()
	case "note":
		part := "footnotes"
		if attr(e, "note-class") == "endnote" {
			part = "endnotes"
		}
		return w.aside(part)
	case "annotation":
		return w.aside("comments")
	case "frame", "text-box", "g", "custom-shape", "rect", "ellipse":
		// A frame inside a paragraph holds its own paragraphs.
		outer := w.collect
		var got []string
		w.collect = &got
		err := w.blocks()
		w.collect = outer
		w.later = append(w.later, got...)
		return err
	}
	if odfSkip[e.Name.Local] {
		return w.d.Skip()
	}
	return w.inline(b)
}

// aside collects a note's or annotation's paragraphs, emitted at the end.
// headersFooters reads the headers and footers of a text document's
// master pages (styles.xml), as DOCX's are read: objects of parts "header"
// and "footer".
func (w *odfWalker) headersFooters(p *pkg) error {
	d, c, err := p.decoder("styles.xml")
	if err != nil {
		return err
	}
	defer c.Close()
	content := w.d
	w.d = d
	defer func() { w.d = content }()
	return xmlRoot(d, func(xml.StartElement) error {
		return xmlChildren(d, func(e xml.StartElement) error {
			if e.Name.Local != "master-styles" {
				return d.Skip()
			}
			return xmlChildren(d, func(e xml.StartElement) error {
				if e.Name.Local != "master-page" {
					return d.Skip()
				}
				return xmlChildren(d, func(e xml.StartElement) error {
					switch e.Name.Local {
					case "header", "header-left", "header-first":
						return w.aside("header")
					case "footer", "footer-left", "footer-first":
						return w.aside("footer")
					}
					return d.Skip()
				})
			})
		})
	})
}

func (w *odfWalker) aside(part string) error {
	outer := w.collect
	var got []string
	w.collect = &got
	w.cells++
	err := w.blocks()
	w.cells--
	w.collect = outer
	if len(got) > 0 && len(w.notes) < w.lim.MaxObjects {
		w.notes = append(w.notes, odfNote{part: part, text: strings.Join(got, "\n")})
	}
	return err
}

// writeCollapsed writes character data with runs of white space as one
// space, as OpenDocument reads it (text:s and text:tab carry real spacing).
func writeCollapsed(b *strings.Builder, s string) {
	space := b.Len() > 0 && strings.HasSuffix(b.String(), " ")
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteRune(r)
		space = false
	}
}

// table reads a text table into rows of cell texts and emits it as one
// Markdown object (or collects it, inside a cell or a slide).
func (w *odfWalker) table() error {
	var rows [][]string
	var rowsOf func() error
	rowsOf = func() error {
		return w.children(func(e xml.StartElement) error {
			switch e.Name.Local {
			case "table-header-rows", "table-rows", "table-row-group":
				return rowsOf()
			case "shapes":
				// Frames over the table (a spreadsheet object's chart).
				return w.blocks()
			case "table-row":
				var row []string
				err := w.children(func(c xml.StartElement) error {
					if c.Name.Local != "table-cell" && c.Name.Local != "covered-table-cell" {
						return w.d.Skip()
					}
					text, err := w.cellText()
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(attr(c, "number-columns-repeated"))
					for i := 0; i < max(1, min(n, 64)); i++ {
						row = append(row, text)
					}
					return nil
				})
				if len(rows) < 10_000 {
					rows = append(rows, row)
				}
				return err
			}
			return w.d.Skip()
		})
	}
	if err := rowsOf(); err != nil {
		return err
	}
	// Trailing empty columns (repeated to the sheet's width) say nothing.
	width := 0
	for _, r := range rows {
		for i := len(r) - 1; i >= 0; i-- {
			if strings.TrimSpace(r[i]) != "" {
				width = max(width, i+1)
				break
			}
		}
	}
	if width == 0 {
		return nil
	}
	for i := range rows {
		rows[i] = rows[i][:min(len(rows[i]), width)]
	}
	if w.cells > 0 {
		// In another table's cell: a line per row (Markdown tables
		// cannot nest).
		if text := nestedTableText(rows); text != "" {
			*w.collect = append(*w.collect, text)
			w.nestedTables++
		}
		return nil
	}
	text := markdownTable(rows)
	if w.collect != nil {
		*w.collect = append(*w.collect, text)
		return nil
	}
	w.tables++
	w.paras++
	md := map[string]any{"table": w.tables, "rows": len(rows), "cols": width}
	if w.nestedTables > 0 {
		md["nestedTables"] = w.nestedTables
	}
	w.nestedTables = 0
	w.s.add(content.Object{ContentType: content.Text, Data: text,
		Ref:      content.Ref{Part: "document", Paragraph: w.paras, SectionID: w.outline.current()},
		Metadata: md})
	return nil
}

// cellText collects the paragraphs of the cell just started.
func (w *odfWalker) cellText() (string, error) {
	outer := w.collect
	var got []string
	w.collect = &got
	w.cells++
	err := w.blocks()
	w.cells--
	w.collect = outer
	return strings.Join(got, "\n"), err
}

// spreadsheet reads each table (sheet) of a spreadsheet as cell blocks.
func (w *odfWalker) spreadsheet() error {
	return w.children(func(e xml.StartElement) error {
		if e.Name.Local != "table" || w.s.full() {
			return w.d.Skip()
		}
		return w.sheet(attr(e, "name"), w.hiddenStyles[attr(e, "style-name")])
	})
}

// sheet emits one sheet's non-empty cells in blocks, as for XLSX.
func (w *odfWalker) sheet(name string, hidden bool) error {
	var (
		blk    []xlsxRow
		size   int
		header []xlsxCell
		first  int
		st     sheetStats
		minC   = 1 << 30
		maxC   int
	)
	row := 0
	var comments []excelize.Comment
	flush := func() {
		if len(blk) > 0 {
			emitSheetBlock(w.s, name, blk, header, first, hidden)
		}
		blk, size = nil, 0
	}
	var rowsOf func() error
	rowsOf = func() error {
		return w.children(func(e xml.StartElement) error {
			switch e.Name.Local {
			case "table-header-rows", "table-rows", "table-row-group":
				return rowsOf()
			case "shapes":
				// Charts and frames over the sheet: objects of their own.
				var got []string
				outer := w.collect
				w.collect = &got
				err := w.blocks()
				w.collect = outer
				for _, text := range got {
					w.s.add(content.Object{ContentType: content.Text, Data: text, Metadata: map[string]any{"shape": true},
						Ref: content.Ref{SheetName: name, Location: "sheet:" + name}})
				}
				return err
			case "table-row":
			default:
				return w.d.Skip()
			}
			var r xlsxRow
			col := 0
			err := w.children(func(c xml.StartElement) error {
				if c.Name.Local != "table-cell" && c.Name.Local != "covered-table-cell" {
					return w.d.Skip()
				}
				n, _ := strconv.Atoi(attr(c, "number-columns-repeated"))
				n = max(n, 1)
				var notes []excelize.Comment
				w.cellNotes = &notes
				v, err := w.cellValue(c)
				w.cellNotes = nil
				if err != nil {
					return err
				}
				for _, nt := range notes {
					nt.Cell = cellName(col+1, row+1)
					comments = append(comments, nt)
				}
				if strings.TrimSpace(v) != "" {
					for i := 0; i < min(n, odfMaxRepeat); i++ {
						r.cells = append(r.cells, xlsxCell{col: col + i + 1, v: v})
						size += len(v) + 4
					}
				}
				col += min(n, 1<<20)
				return nil
			})
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(attr(e, "number-rows-repeated"))
			n = max(n, 1)
			if len(r.cells) == 0 {
				row += min(n, 1<<20)
				return nil
			}
			for i := 0; i < min(n, odfMaxRepeat) && !w.s.full(); i++ {
				row++
				rr := xlsxRow{n: row, cells: r.cells}
				if header == nil {
					header, first = rr.cells, row
				}
				minC, maxC = min(minC, rr.cells[0].col), max(maxC, rr.cells[len(rr.cells)-1].col)
				st.rows++
				st.cells += len(rr.cells)
				blk = append(blk, rr)
				if size >= w.lim.BlockBytes {
					flush()
				}
			}
			row += max(0, n-odfMaxRepeat)
			return nil
		})
	}
	if err := rowsOf(); err != nil {
		return err
	}
	flush()
	entry := map[string]any{"name": name}
	if hidden {
		entry["hidden"] = true
	}
	if len(comments) > 0 {
		// As an XLSX sheet's comments: one object, each cell's comment
		// with its author.
		xlsxComments(w.s, name, comments)
		entry["comments"] = len(comments)
	}
	if st.cells > 0 {
		entry["rows"], entry["cells"] = st.rows, st.cells
		entry["range"] = cellRange(minC, first, maxC, row)
	}
	if len(w.sheets) < 10_000 {
		w.sheets = append(w.sheets, entry)
	}
	return nil
}

// cellValue is a spreadsheet cell's value: dates as ISO dates (the
// displayed text may have a two-digit year), otherwise the text shown.
func (w *odfWalker) cellValue(c xml.StartElement) (string, error) {
	text, err := w.cellText()
	if err != nil {
		return "", err
	}
	switch attr(c, "value-type") {
	case "date":
		if v := attr(c, "date-value"); v != "" {
			return strings.TrimSuffix(v, "T00:00:00"), nil
		}
	case "float", "percentage", "currency":
		if text == "" {
			return attr(c, "value"), nil
		}
	case "boolean":
		if text == "" {
			return strings.ToUpper(attr(c, "boolean-value")), nil
		}
	}
	return text, nil
}

// presentation reads the pages (slides) and their notes.
func (w *odfWalker) presentation() error {
	k := 0
	return w.children(func(e xml.StartElement) error {
		switch e.Name.Local {
		case "footer-decl", "header-decl":
			// Text a page shows in its master's footer or header field.
			var b strings.Builder
			if err := xmlText(w.d, &b); err != nil {
				return err
			}
			if w.decls == nil {
				w.decls = map[string]string{}
			}
			if len(w.decls) < 10_000 {
				w.decls[strings.TrimSuffix(e.Name.Local, "-decl")+":"+attr(e, "name")] = strings.TrimSpace(b.String())
			}
			return nil
		case "page":
			if w.s.full() {
				return w.d.Skip()
			}
			k++
			return w.page(k, e)
		}
		return w.d.Skip()
	})
}

func (w *odfWalker) page(k int, e xml.StartElement) error {
	part := attr(e, "name")
	if part == "" {
		part = "page" + strconv.Itoa(k)
	}
	hidden := w.hiddenStyles[attr(e, "style-name")] || attr(e, "visibility") == "hidden"
	var title string
	var blocks, notes []string
	outer := w.collect
	defer func() { w.collect = outer }()
	if m := attr(e, "master-page-name"); m != "" {
		if w.masterUse == nil {
			w.masterUse = map[string][]int{}
		}
		if len(w.masterUse[m]) < 10_000 {
			w.masterUse[m] = append(w.masterUse[m], k)
		}
	}
	err := w.children(func(c xml.StartElement) error {
		switch c.Name.Local {
		case "notes":
			w.collect = &notes
			return w.children(func(n xml.StartElement) error {
				if n.Name.Local == "frame" && attr(n, "class") != "notes" {
					return w.d.Skip() // the page's thumbnail
				}
				return w.block(n)
			})
		case "frame":
			var got []string
			w.collect = &got
			if err := w.blocks(); err != nil {
				return err
			}
			if attr(c, "class") == "title" && title == "" && len(got) > 0 {
				title, got = got[0], got[1:]
			}
			if len(got) > 0 {
				blocks = append(blocks, strings.Join(got, "\n"))
			}
			return nil
		case "g", "custom-shape", "rect", "ellipse", "text-box":
			var got []string
			w.collect = &got
			err := w.blocks()
			if len(got) > 0 {
				blocks = append(blocks, strings.Join(got, "\n"))
			}
			return err
		}
		return w.d.Skip()
	})
	if err != nil {
		return err
	}
	w.collect = outer
	entry := map[string]any{"index": k, "part": part}
	if title != "" {
		entry["title"] = title
	}
	var md map[string]any
	if hidden {
		entry["hidden"] = true
		md = map[string]any{"hidden": true}
	}
	// The footer the page shows through its master's footer field
	// (presentation:use-footer-name); a header is shown on notes pages.
	if f := w.decls["footer:"+attr(e, "use-footer-name")]; f != "" && attr(e, "use-footer-name") != "" {
		blocks = append(blocks, f)
	}
	if h := w.decls["header:"+attr(e, "use-header-name")]; h != "" && attr(e, "use-header-name") != "" && len(notes) > 0 {
		notes = append([]string{h}, notes...)
	}
	text := blocks
	if title != "" {
		text = append([]string{title}, text...)
	}
	loc := "slide:" + strconv.Itoa(k)
	if len(text) > 0 {
		w.s.add(content.Object{ContentType: content.Text, Data: strings.Join(text, "\n\n"), Metadata: md,
			Ref: content.Ref{SlideIndex: k, Part: part, Label: headingText(title), Location: loc}})
	}
	if len(notes) > 0 {
		entry["notes"] = true
		w.s.add(content.Object{ContentType: content.Text, Data: strings.Join(notes, "\n\n"), Metadata: cloneMap(md),
			Ref: content.Ref{SlideIndex: k, Part: part + "/notes", Label: headingText(title), Location: loc + "/notes"}})
	}
	if len(w.slides) < 10_000 {
		w.slides = append(w.slides, entry)
	}
	return nil
}

// finish emits the notes and annotations kept aside and the structure.
func (w *odfWalker) finish() {
	counts := map[string]int{}
	for _, n := range w.notes {
		counts[n.part]++
		if !w.s.add(content.Object{ContentType: content.Text, Data: n.text,
			Ref: content.Ref{Part: n.part, Paragraph: counts[n.part]}}) {
			break
		}
	}
	switch w.kind {
	case "text":
		w.s.structure["paragraphs"] = w.paras
		if len(w.outline.sections) > 0 {
			w.s.structure["sections"] = w.outline.sections
		}
		if w.tables > 0 {
			w.s.structure["tables"] = w.tables
		}
	case "spreadsheet":
		w.s.structure["sheets"] = w.sheets
	case "presentation":
		w.s.structure["slides"] = len(w.slides)
		w.s.structure["slideList"] = w.slides
	}
	for part, n := range counts {
		w.s.structure[part] = n
	}
	if w.objects > 0 {
		w.s.structure["objects"] = w.objects
	}
	if len(w.masters) > 0 {
		w.s.structure["masters"] = w.masters
	}
	if len(w.skipped) > 0 {
		w.s.structure["skipped"] = w.skipped
	}
}
