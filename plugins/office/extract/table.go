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
