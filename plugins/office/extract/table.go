package extract

import (
	"strings"
)

// markdownTable renders rows as a GitHub-flavoured Markdown table, the
// first row as header. Rows are padded to the widest, rows with no text
// after the header are left out; cell text is made safe for a table cell
// (pipes escaped, line breaks as <br>).
func markdownTable(rows [][]string) string {
	width := 0
	kept := rows[:0:0]
	for i, r := range rows {
		if i == 0 || !emptyRow(r) {
			kept = append(kept, r)
		}
	}
	rows = kept
	for _, r := range rows {
		width = max(width, len(r))
	}
	if width == 0 {
		return ""
	}
	var b strings.Builder
	writeRow := func(r []string) {
		b.WriteByte('|')
		for i := range width {
			b.WriteByte(' ')
			if i < len(r) {
				b.WriteString(cellText(r[i]))
			}
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	writeRow(rows[0])
	b.WriteByte('|')
	for range width {
		b.WriteString(" --- |")
	}
	b.WriteByte('\n')
	for _, r := range rows[1:] {
		writeRow(r)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cellText makes text safe inside a Markdown table cell.
func cellText(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "|\n\r\t") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\t", " ")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", "<br>"), "\n", "<br>")
}

func emptyRow(r []string) bool {
	for _, c := range r {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// nestedTableText renders a table that sits in a cell of another, for that
// cell's text (Markdown tables cannot nest): a line per row, its cells
// joined by " · ", so that a row still reads as one (a search for a name
// finds the values beside it); the lines of a cell (its paragraphs, a
// table nested deeper) are joined by "; " in parentheses, to keep its row
// one line and its cells apart. Empty cells and rows are left out.
func nestedTableText(rows [][]string) string {
	var lines []string
	for _, r := range rows {
		var cells []string
		for _, v := range r {
			var parts []string
			for l := range strings.SplitSeq(v, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					parts = append(parts, l)
				}
			}
			switch len(parts) {
			case 0:
			case 1:
				cells = append(cells, parts[0])
			default:
				cells = append(cells, "("+strings.Join(parts, "; ")+")")
			}
		}
		if len(cells) > 0 {
			lines = append(lines, strings.Join(cells, " · "))
		}
	}
	return strings.Join(lines, "\n")
}
