package extract

import (
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// paragraphRange is a Location for paragraphs a to b of a part.
func paragraphRange(a, b int) string {
	if a == b {
		return "paragraph:" + strconv.Itoa(a)
	}
	return "paragraph:" + strconv.Itoa(a) + "-" + strconv.Itoa(b)
}

// emitParagraphs adds the non-empty paragraphs of one part (numbered from 1
// in order, empty ones not counted, as for DOCX) as text objects of about
// size bytes each: Ref.Part is the part, Ref.Paragraph the first paragraph
// of the block, Location "paragraph:A-B", Metadata["lastParagraph"] the
// last when it differs. It returns the number of paragraphs, and false
// once the sink is full.
func emitParagraphs(s *sink, part string, paras []string, size int) (int, bool) {
	return emitParagraphsFrom(s, part, paras, size, 0)
}

// emitParagraphsFrom is emitParagraphs numbering after the first done
// paragraphs of the part; it returns the number of new ones.
func emitParagraphsFrom(s *sink, part string, paras []string, size, done int) (int, bool) {
	n := done
	var b strings.Builder
	first := 0
	flush := func() bool {
		if b.Len() == 0 {
			return true
		}
		var md map[string]any
		if n > first {
			md = map[string]any{"lastParagraph": n}
		}
		ok := s.add(content.Object{ContentType: content.Text, Data: b.String(), Metadata: md,
			Ref: content.Ref{Part: part, Paragraph: first, Location: paragraphRange(first, n)}})
		b.Reset()
		return ok
	}
	for _, p := range paras {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 && b.Len()+len(p) > size {
			if !flush() {
				return n, false
			}
		}
		n++
		if b.Len() == 0 {
			first = n
		} else {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return n - done, flush()
}

// wordBlock is a paragraph, or a table (rows of cell texts) when rows is set.
type wordBlock struct {
	text   string
	rows   [][]string
	nested int // tables written into the cells of rows
}

// emitBlocks is emitParagraphs for paragraphs and tables: a table ends the
// current text object and becomes an object of its own, a Markdown table
// (as DOCX tables are) whose Paragraph is the number its first cell takes;
// each non-empty cell counts as a paragraph. It returns the paragraphs and
// tables emitted, and false once the sink is full.
func emitBlocks(s *sink, part string, blocks []wordBlock, size int) (paras, tables int, ok bool) {
	var run []string
	flush := func() bool {
		k, ok := emitParagraphsFrom(s, part, run, size, paras)
		paras += k
		run = run[:0]
		return ok
	}
	for _, b := range blocks {
		if b.rows == nil {
			run = append(run, b.text)
			continue
		}
		if !flush() {
			return paras, tables, false
		}
		text := markdownTable(b.rows)
		cells, cols := 0, 0
		for _, r := range b.rows {
			cols = max(cols, len(r))
			for _, c := range r {
				if c != "" {
					cells++
				}
			}
		}
		if cells == 0 || text == "" {
			continue
		}
		tables++
		md := map[string]any{"table": tables, "rows": len(b.rows), "cols": cols}
		if cells > 1 {
			md["lastParagraph"] = paras + cells
		}
		if b.nested > 0 {
			md["nestedTables"] = b.nested
		}
		if !s.add(content.Object{ContentType: content.Text, Data: text, Metadata: md,
			Ref: content.Ref{Part: part, Paragraph: paras + 1, Location: paragraphRange(paras+1, paras+cells)}}) {
			return paras + cells, tables, false
		}
		paras += cells
	}
	return paras, tables, flush()
}
