package extract

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/agenthost/agenthost/pdk/content"
)

// extractXLSX emits each sheet's non-empty cells as text objects, one per
// block of rows of about Limits.BlockBytes, values as Excel displays them
// (excelize applies the number formats) except dates, which are ISO dates,
// then the sheet's comments and pictures.
//
// excelize reads every part of the package into memory, so the package is
// checked against the limits first, by the sizes its directory declares
// (archive/zip refuses to read a part beyond its declared size).
func extractXLSX(ctx context.Context, in input, s *sink) error {
	p, err := openPackage(in.r, in.size, in.lim)
	if err != nil {
		return err
	}
	var total uint64
	for _, f := range p.zr.File {
		if int64(f.UncompressedSize64) > in.lim.MaxPartBytes {
			return fmt.Errorf("%w: part %s declares %d bytes, over %d", ErrLimit, f.Name, f.UncompressedSize64, in.lim.MaxPartBytes)
		}
		if f.Flags&1 != 0 {
			return fmt.Errorf("%w: part %s is encrypted", ErrEncrypted, f.Name)
		}
		total += f.UncompressedSize64
	}
	if total > uint64(in.lim.MaxUnzippedBytes) {
		return fmt.Errorf("%w: package expands to %d bytes, over %d", ErrLimit, total, in.lim.MaxUnzippedBytes)
	}
	main, err := p.mainPart("xl/workbook.xml")
	if err != nil {
		return err
	}
	// Options keep excelize in memory: a part over UnzipXMLSizeLimit would go
	// to a temporary file, which a sandboxed plugin does not have.
	// Dates print as ISO dates: the styles part is rewritten so that
	// every date format is yyyy-mm-dd.
	var src io.Reader = io.NewSectionReader(in.r, 0, in.size)
	if b, ok, err := withISODates(p, in.size); err != nil {
		return err
	} else if ok {
		src = bytes.NewReader(b)
	}
	f, err := excelize.OpenReader(src, excelize.Options{
		UnzipSizeLimit:    max(in.lim.MaxUnzippedBytes, int64(total)+1),
		UnzipXMLSizeLimit: max(in.lim.MaxUnzippedBytes, int64(total)+1),
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	defer f.Close()
	parts := workbookSheets(p, main)
	list := []map[string]any{}
	var skipped []string
	for _, name := range f.GetSheetList() {
		if s.full() {
			break
		}
		entry := map[string]any{"name": name}
		if visible, err := f.GetSheetVisible(name); err == nil && !visible {
			entry["hidden"] = true
		}
		st, err := xlsxSheet(f, s, in.lim, name, entry["hidden"] == true)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", name, err))
		}
		if st.cells > 0 {
			entry["range"] = st.rng
			entry["rows"], entry["cells"] = st.rows, st.cells
		}
		if comments, err := f.GetComments(name); err == nil && len(comments) > 0 {
			xlsxComments(s, name, comments)
			entry["comments"] = len(comments)
		}
		if part, ok := parts[name]; ok {
			if n := sheetPictures(p, s, in.lim, name, part); n > 0 {
				entry["images"] = n
			}
		}
		if len(list) < 10_000 {
			list = append(list, entry)
		}
	}
	s.structure["sheets"] = list
	if len(skipped) > 0 {
		s.structure["skipped"] = skipped
	}
	return nil
}

// sheetStats sums up what a sheet held.
type sheetStats struct {
	rows, cells int
	rng         string
}

// xlsxCell is a non-empty cell; col counts from 1.
type xlsxCell struct {
	col int
	v   string
}

type xlsxRow struct {
	n     int
	cells []xlsxCell
}

// xlsxSheet streams a sheet's rows and emits them in blocks.
func xlsxSheet(f *excelize.File, s *sink, lim Limits, name string, hidden bool) (sheetStats, error) {
	var st sheetStats
	rows, err := f.Rows(name)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	var (
		blk        []xlsxRow
		size       int
		header     []xlsxCell // the sheet's first non-empty row
		minC, maxC int
		firstRow   int
	)
	flush := func() bool {
		if len(blk) == 0 {
			return true
		}
		ok := emitSheetBlock(s, name, blk, header, firstRow, hidden)
		blk, size = nil, 0
		return ok
	}
	for n := 1; rows.Next(); n++ {
		if n%1024 == 0 && s.full() {
			break
		}
		cols, err := rows.Columns()
		if err != nil {
			return st, err
		}
		var r xlsxRow
		for i, v := range cols {
			if strings.TrimSpace(v) != "" {
				r.cells = append(r.cells, xlsxCell{col: i + 1, v: v})
				size += len(v) + 4
			}
		}
		if len(r.cells) == 0 {
			continue
		}
		r.n = n
		if header == nil {
			header, firstRow = r.cells, n
			minC, maxC = r.cells[0].col, r.cells[len(r.cells)-1].col
		}
		minC, maxC = min(minC, r.cells[0].col), max(maxC, r.cells[len(r.cells)-1].col)
		st.rows++
		st.cells += len(r.cells)
		blk = append(blk, r)
		st.rng = cellRange(minC, firstRow, maxC, n)
		if size >= lim.BlockBytes && !flush() {
			break
		}
	}
	if err := rows.Error(); err != nil {
		return st, err
	}
	flush()
	return st, nil
}

func cellName(col, row int) string {
	return colName(col) + strconv.Itoa(row)
}

// emitSheetBlock renders a block of rows. Dense blocks become a Markdown
// table whose header names the columns (A, B, …) and whose first column
// gives the row number, so every value keeps its cell reference; sparse
// blocks become one line per row of CELL=value pairs.
func emitSheetBlock(s *sink, sheet string, blk []xlsxRow, header []xlsxCell, headerRow int, hidden bool) bool {
	var cols []int
	cells := 0
	for _, r := range blk {
		cells += len(r.cells)
		for _, c := range r.cells {
			cols = append(cols, c.col)
		}
	}
	slices.Sort(cols)
	cols = slices.Compact(cols)
	first, last := blk[0].n, blk[len(blk)-1].n
	rng := cellRange(cols[0], first, cols[len(cols)-1], last)
	var text string
	dense := float64(cells)/float64(len(blk)*len(cols)) >= 0.3 || len(cols) <= 3
	if dense {
		table := make([][]string, 0, len(blk)+1)
		head := []string{""}
		pos := make(map[int]int, len(cols))
		for i, c := range cols {
			pos[c] = i + 1
			head = append(head, colName(c))
		}
		table = append(table, head)
		for _, r := range blk {
			row := make([]string, len(cols)+1)
			row[0] = strconv.Itoa(r.n)
			for _, c := range r.cells {
				row[pos[c.col]] = c.v
			}
			table = append(table, row)
		}
		text = markdownTable(table)
	} else {
		var b strings.Builder
		for _, r := range blk {
			for i, c := range r.cells {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(cellName(c.col, r.n))
				b.WriteByte('=')
				b.WriteString(strings.ReplaceAll(strings.ReplaceAll(c.v, "\r", ""), "\n", " "))
			}
			b.WriteByte('\n')
		}
		text = strings.TrimSuffix(b.String(), "\n")
	}
	md := map[string]any{"rows": len(blk), "cells": cells, "format": "markdown"}
	if !dense {
		md["format"] = "cells"
	}
	if hidden {
		md["hidden"] = true
	}
	if len(header) > 0 && first > headerRow {
		// Later blocks carry the sheet's first row, usually its column
		// titles, so they read on their own.
		var h []string
		for _, c := range header {
			h = append(h, colName(c.col)+"="+c.v)
		}
		md["header"] = strings.Join(h, "; ")
	}
	return s.add(content.Object{ContentType: content.Text, Data: text, Metadata: md,
		Ref: content.Ref{SheetName: sheet, Location: "sheet:" + sheet + "!" + rng}})
}

// cellRange names a range, "A1:F20", or one cell, "B1".
func cellRange(c1, r1, c2, r2 int) string {
	if c1 == c2 && r1 == r2 {
		return cellName(c1, r1)
	}
	return cellName(c1, r1) + ":" + cellName(c2, r2)
}

// colName is a column's letters: 1 → "A", 27 → "AA".
func colName(col int) string {
	c, err := excelize.ColumnNumberToName(col)
	if err != nil {
		return "?"
	}
	return c
}

// xlsxComments emits a sheet's comments as one text object.
func xlsxComments(s *sink, sheet string, comments []excelize.Comment) {
	var b strings.Builder
	cells := make([]string, 0, len(comments))
	for _, c := range comments {
		text := c.Text
		if text == "" {
			for _, r := range c.Paragraph {
				text += r.Text
			}
		}
		b.WriteString(c.Cell)
		if c.Author != "" {
			b.WriteString(" (" + c.Author + ")")
		}
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(text))
		b.WriteByte('\n')
		cells = append(cells, c.Cell)
	}
	s.add(content.Object{ContentType: content.Text, Data: strings.TrimSuffix(b.String(), "\n"),
		Metadata: map[string]any{"cells": cells},
		Ref:      content.Ref{SheetName: sheet, Part: "comments", Location: "sheet:" + sheet + "!" + strings.Join(cells, ",")}})
}

// workbookSheets maps sheet names to their parts, for the pictures.
func workbookSheets(p *pkg, main string) map[string]string {
	out := map[string]string{}
	rels, err := p.relsOf(main)
	if err != nil {
		return out
	}
	byID := relByID(rels)
	d, c, err := p.decoder(main)
	if err != nil {
		return out
	}
	defer c.Close()
	_ = xmlRoot(d, func(root xml.StartElement) error {
		return xmlChildren(d, func(e xml.StartElement) error {
			if e.Name.Local != "sheets" {
				return d.Skip()
			}
			return xmlChildren(d, func(e xml.StartElement) error {
				if r, ok := byID[attrNS(e, "relationships", "id")]; ok && !r.External {
					out[attr(e, "name")] = r.Target
				}
				return d.Skip()
			})
		})
	})
	return out
}

// sheetPictures emits the pictures and charts of a sheet's drawings, each
// located at its anchor cell. It returns the number of pictures.
func sheetPictures(p *pkg, s *sink, lim Limits, sheet, part string) int {
	rels, err := p.relsOf(part)
	if err != nil {
		return 0
	}
	n := 0
	for _, drawing := range relTargets(rels, "drawing", p) {
		drels, err := p.relsOf(drawing)
		if err != nil {
			continue
		}
		byID := relByID(drels)
		d, c, err := p.decoder(drawing)
		if err != nil {
			continue
		}
		var (
			col, row int
			alt      string
			inFrom   bool
			field    string
		)
		for {
			t, err := xmlToken(d)
			if err != nil {
				break
			}
			switch e := t.(type) {
			case xml.StartElement:
				switch e.Name.Local {
				case "twoCellAnchor", "oneCellAnchor", "absoluteAnchor":
					col, row, alt = 0, 0, ""
				case "from":
					inFrom = true
				case "col", "row":
					field = e.Name.Local
				case "cNvPr":
					alt = firstNonEmpty(attr(e, "descr"), attr(e, "title"))
				case "chart":
					r, ok := byID[attrNS(e, "relationships", "id")]
					if !ok || r.External || s.full() {
						continue
					}
					if text := chartText(p, r.Target); text != "" {
						loc := "sheet:" + sheet
						if col > 0 && row > 0 {
							loc += "!" + cellName(col, row)
						}
						s.add(content.Object{ContentType: content.Text, Data: text, Metadata: map[string]any{"chart": true},
							Ref: content.Ref{SheetName: sheet, Part: partBase(r.Target), Label: headingText(alt), Location: loc}})
					}
				case "blip":
					r, ok := byID[attrNS(e, "relationships", "embed")]
					if !ok || r.External || s.full() {
						continue
					}
					o := p.mediaObject(r.Target, lim)
					o.Ref = content.Ref{SheetName: sheet, Label: headingText(alt), Location: "sheet:" + sheet}
					if col > 0 && row > 0 {
						o.Ref.Location += "!" + cellName(col, row)
					}
					s.add(o)
					n++
				}
			case xml.CharData:
				if inFrom && field != "" {
					if v, err := strconv.Atoi(strings.TrimSpace(string(e))); err == nil {
						if field == "col" {
							col = v + 1
						} else {
							row = v + 1
						}
					}
				}
			case xml.EndElement:
				switch e.Name.Local {
				case "from":
					inFrom = false
				case "col", "row":
					field = ""
				}
			}
		}
		c.Close()
	}
	return n
}
