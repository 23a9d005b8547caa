package extract

import (
	"encoding/xml"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// maxODFObjectDepth bounds embedded objects in embedded objects (a chart in
// a text object in a slide): each level opens another content.xml of the
// package, all within the package's one unzip budget.
const (
	maxODFObjectDepth = 3
	maxODFObjects     = 256 // objects read in one file, all levels
)

// object reads an embedded object, <draw:object xlink:href="./Object 1">
// (OpenDocument 1.3 part 3): a sub-document kept in the package's folder
// of that name with a content.xml of its own (a chart, a text, a
// spreadsheet, a drawing, a formula). Its text becomes one paragraph where
// the object stands (in a slide's frame, a text's paragraph). Objects in
// other places (links out of the package) and objects nested deeper than
// maxODFObjectDepth are skipped.
func (w *odfWalker) object(e xml.StartElement) error {
	if err := w.d.Skip(); err != nil {
		return err
	}
	href := attr(e, "href")
	dir := strings.TrimSuffix(strings.TrimPrefix(href, "./"), "/")
	if w.p == nil || dir == "" || strings.Contains(href, ":") || strings.HasPrefix(dir, "/") || path.Clean(dir) != dir || strings.HasPrefix(dir, "..") {
		return nil
	}
	if w.nest >= maxODFObjectDepth {
		w.skip(fmt.Sprintf("%s: objects nested deeper than %d levels", dir, maxODFObjectDepth))
		return nil
	}
	if w.objBudget == nil {
		w.objBudget = &chunkBudget{}
	}
	if w.objBudget.read >= maxODFObjects {
		w.skip(fmt.Sprintf("%s: more than %d embedded objects", dir, maxODFObjects))
		return nil
	}
	w.objBudget.read++
	dir = w.base + dir // an object's objects are in its own folder
	text, err := w.objectText(dir)
	if err != nil {
		if w.ctx.Err() != nil {
			return w.ctx.Err()
		}
		w.skip(fmt.Sprintf("%s: %v", dir, err))
		return nil
	}
	w.objects++
	w.paragraph(text, 0)
	return nil
}

// skip notes what was not read, each reason once and at most 100.
func (w *odfWalker) skip(msg string) {
	if len(w.skipped) < 100 && !slices.Contains(w.skipped, msg) {
		w.skipped = append(w.skipped, msg)
	}
}

// objectText reads an embedded object's content.xml into text.
func (w *odfWalker) objectText(dir string) (string, error) {
	part := dir + "/content.xml"
	if !w.p.has(part) {
		return "", fmt.Errorf("%w: no %s", ErrMalformed, part)
	}
	d, c, err := w.p.decoder(part)
	if err != nil {
		return "", err
	}
	defer c.Close()
	var got []string
	sub := &odfWalker{ctx: w.ctx, d: d, s: w.s, lim: w.lim, p: w.p, nest: w.nest + 1, collect: &got, objBudget: w.objBudget, base: dir + "/",
		hiddenStyles: map[string]bool{}, depth: w.depth}
	err = xmlRoot(d, func(xml.StartElement) error {
		return sub.children(func(e xml.StartElement) error {
			if e.Name.Local != "body" {
				return d.Skip()
			}
			return sub.children(func(e xml.StartElement) error {
				switch e.Name.Local {
				case "chart":
					return sub.children(func(e xml.StartElement) error {
						if e.Name.Local != "chart" {
							return d.Skip()
						}
						text, err := sub.chart()
						got = append(got, text)
						return err
					})
				case "text":
					sub.kind = "text"
					return sub.blocks()
				case "spreadsheet", "presentation", "drawing":
					// Tables as Markdown, pages' frames as paragraphs.
					return sub.children(func(e xml.StartElement) error {
						switch e.Name.Local {
						case "table":
							return sub.table()
						case "page":
							return sub.blocks()
						}
						return d.Skip()
					})
				case "formula":
					// MathML; its StarMath annotation is what the author typed.
					var b strings.Builder
					err := xmlText(d, &b)
					got = append(got, strings.Join(strings.Fields(b.String()), " "))
					return err
				}
				return d.Skip()
			})
		})
	})
	w.notes = append(w.notes, sub.notes...)
	for _, m := range sub.skipped {
		w.skip(m)
	}
	w.objects += sub.objects
	var out []string
	for _, g := range got {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n"), err
}

// odfSeries is one chart:series: where its name and values are in the
// chart's own table.
type odfSeries struct {
	label, values string
}

// chart reads a <chart:chart> (OpenDocument 1.3 part 3, chapter 11) as
// text in the form chartText gives DrawingML charts: the titles
// (chart:title, chart:subtitle, the axes' titles) on a "Chart:" line,
// then each series with its name and points, taken from the chart's own
// table (table:table "local-table") through the cell ranges the series
// name. Without usable ranges the table is given as Markdown.
func (w *odfWalker) chart() (string, error) {
	var (
		titles []string
		series []odfSeries
		cats   string
		rows   [][]string
		labels string // chart:data-source-has-labels: none, row, column, both
	)
	var walk func(e xml.StartElement) error
	walk = func(e xml.StartElement) error {
		switch e.Name.Local {
		case "title", "subtitle":
			var got []string
			outer := w.collect
			w.collect = &got
			err := w.blocks()
			w.collect = outer
			if t := strings.Join(got, " "); t != "" {
				titles = append(titles, t)
			}
			return err
		case "categories":
			if cats == "" {
				cats = attr(e, "cell-range-address")
			}
			return w.d.Skip()
		case "series":
			if len(series) < chartMaxSeries {
				series = append(series, odfSeries{label: attr(e, "label-cell-address"), values: attr(e, "values-cell-range-address")})
			}
			return w.children(walk)
		case "table":
			var err error
			rows, err = w.tableRows()
			return err
		case "plot-area", "axis":
			if e.Name.Local == "plot-area" {
				labels = attr(e, "data-source-has-labels")
			}
			return w.children(walk)
		}
		return w.d.Skip()
	}
	if err := w.children(walk); err != nil {
		return "", err
	}
	var b strings.Builder
	if len(titles) > 0 {
		b.WriteString("Chart: " + strings.Join(titles, " / "))
	}
	cell := func(r, c int) string {
		if r >= 0 && r < len(rows) && c >= 0 && c < len(rows[r]) {
			return rows[r][c]
		}
		return ""
	}
	// Ranges name the chart's own table ("local-table"); a chart of a
	// spreadsheet names the sheet's cells instead, of which its table is
	// a copy laid out as the specification lays out a chart's table: a
	// series per column, its name in the first row and the categories in
	// the first column when the plot area says it has those labels.
	rowLabels := labels == "both" || labels == "row"
	colLabels := labels == "both" || labels == "column"
	r0, c0 := 0, 0
	if rowLabels {
		r0 = 1
	}
	if colLabels {
		c0 = 1
	}
	var catVals []string
	local := len(series) > 0 && strings.Contains(series[0].values, "local-table")
	if local {
		catVals = rangeCells(cats, cell)
	} else if colLabels {
		for r := r0; r < len(rows); r++ {
			catVals = append(catVals, cell(r, 0))
		}
	}
	written := 0
	for i, s := range series {
		var vals []string
		name := ""
		if local {
			vals = rangeCells(s.values, cell)
			name = strings.Join(rangeCells(s.label, cell), " ")
		} else {
			for r := r0; r < len(rows); r++ {
				vals = append(vals, cell(r, c0+i))
			}
			if rowLabels {
				name = cell(0, c0+i)
			}
		}
		if len(vals) == 0 {
			continue
		}
		if name == "" {
			name = "Series " + strconv.Itoa(i+1)
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(name + ":")
		for j, v := range vals[:min(len(vals), chartMaxPoints)] {
			if j > 0 {
				b.WriteByte(';')
			}
			b.WriteByte(' ')
			if j < len(catVals) && catVals[j] != "" {
				b.WriteString(catVals[j] + " = ")
			}
			b.WriteString(v)
		}
		written++
	}
	if written == 0 && len(rows) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(markdownTable(rows))
	}
	return b.String(), nil
}

// tableRows reads the table just started into rows of cell texts
// (repeated cells and rows written out up to small bounds: a chart's table
// is small, a hostile one is not).
func (w *odfWalker) tableRows() ([][]string, error) {
	var rows [][]string
	var rowsOf func() error
	rowsOf = func() error {
		return w.children(func(e xml.StartElement) error {
			switch e.Name.Local {
			case "table-header-rows", "table-rows", "table-row-group":
				return rowsOf()
			case "table-row":
				var row []string
				err := w.children(func(c xml.StartElement) error {
					if c.Name.Local != "table-cell" && c.Name.Local != "covered-table-cell" {
						return w.d.Skip()
					}
					text, err := w.cellValue(c)
					n, _ := strconv.Atoi(attr(c, "number-columns-repeated"))
					for i := 0; i < max(1, min(n, 64)) && len(row) < 1024; i++ {
						row = append(row, text)
					}
					return err
				})
				n, _ := strconv.Atoi(attr(e, "number-rows-repeated"))
				for i := 0; i < max(1, min(n, 64)) && len(rows) < chartMaxPoints+1; i++ {
					rows = append(rows, row)
				}
				return err
			}
			return w.d.Skip()
		})
	}
	err := rowsOf()
	return rows, err
}

// rangeCells lists the cells of a range such as "local-table.$B$2:.$B$4"
// or "local-table.$B$1" (OpenDocument cell range addresses: a table name,
// a dot, a column and a row; the end may drop the table name), row by row;
// nil for a range that is not one.
func rangeCells(addr string, cell func(r, c int) string) []string {
	// The first of a space-separated list; quoted table names may hold
	// spaces ('Mass balance'.B2).
	addr = strings.TrimSpace(addr)
	quoted := false
	for i := 0; i < len(addr); i++ {
		if addr[i] == '\'' {
			quoted = !quoted
		} else if addr[i] == ' ' && !quoted {
			addr = addr[:i]
			break
		}
	}
	if addr == "" {
		return nil
	}
	from, to, ok := strings.Cut(addr, ":")
	if !ok {
		to = from
	}
	r0, c0, ok0 := cellAddr(from)
	r1, c1, ok1 := cellAddr(to)
	if !ok0 || !ok1 || r1 < r0 || c1 < c0 {
		return nil
	}
	var out []string
	for r := r0; r <= min(r1, r0+chartMaxPoints); r++ {
		for c := c0; c <= min(c1, c0+chartMaxPoints); c++ {
			out = append(out, cell(r, c))
		}
	}
	return out
}

// cellAddr reads "table.$B$2" (or ".$B$2", "B2") as zero-based row and
// column.
func cellAddr(a string) (row, col int, ok bool) {
	if i := strings.LastIndex(a, "."); i >= 0 {
		a = a[i+1:]
	}
	a = strings.ReplaceAll(a, "$", "")
	i := 0
	for i < len(a) && a[i] >= 'A' && a[i] <= 'Z' {
		col = col*26 + int(a[i]-'A'+1)
		i++
		if col > 1<<14 {
			return 0, 0, false
		}
	}
	n, err := strconv.Atoi(a[i:])
	if i == 0 || err != nil || n < 1 || n > 1<<20 {
		return 0, 0, false
	}
	return n - 1, col - 1, true
}

// masterPages reads the text a presentation's master pages carry
// themselves (styles.xml, style:master-page: a line of their own, a
// logo's caption), one object per master page with text: Part "master",
// Label the master page's name, Location "master:NAME". Placeholders
// (presentation:placeholder) are the slides' own; field frames (footer,
// date, page number) hold no text here, their slides' declarations do.
func (w *odfWalker) masterPages(p *pkg) error {
	d, c, err := p.decoder("styles.xml")
	if err != nil {
		return err
	}
	defer c.Close()
	contentD := w.d
	w.d = d
	defer func() { w.d = contentD }()
	return xmlRoot(d, func(xml.StartElement) error {
		return w.children(func(e xml.StartElement) error {
			if e.Name.Local != "master-styles" {
				return d.Skip()
			}
			return w.children(func(e xml.StartElement) error {
				if e.Name.Local != "master-page" || w.s.full() {
					return d.Skip()
				}
				name := attr(e, "name")
				var got []string
				outer := w.collect
				w.collect = &got
				err := w.children(func(f xml.StartElement) error {
					switch {
					case attr(f, "placeholder") == "true":
					case f.Name.Local == "frame", f.Name.Local == "g", f.Name.Local == "custom-shape",
						f.Name.Local == "rect", f.Name.Local == "ellipse", f.Name.Local == "text-box":
						return w.blocks()
					}
					return d.Skip() // the notes master, layers, thumbnails
				})
				w.collect = outer
				if err != nil {
					return err
				}
				if len(got) > 0 {
					md := map[string]any{"master": true}
					if use := w.masterUse[name]; len(use) > 0 {
						md["slides"] = use
					}
					w.s.add(content.Object{ContentType: content.Text, Data: strings.Join(got, "\n\n"), Metadata: md,
						Ref: content.Ref{Part: "master", Label: name, Location: "master:" + name}})
					w.masters = append(w.masters, name)
				}
				return nil
			})
		})
	})
}
