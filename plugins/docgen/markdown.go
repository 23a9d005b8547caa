package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
)

// renderMarkdown writes the outline as CommonMark with GitHub tables.
func renderMarkdown(s Spec) []byte {
	var b bytes.Buffer
	if t := strings.TrimSpace(s.Title); t != "" {
		fmt.Fprintf(&b, "# %s\n\n", oneLine(t))
	}
	for _, bl := range s.Blocks {
		switch bl.Type {
		case "heading":
			// The title is the only level-1 heading when there is one.
			level := bl.Level
			if s.Title != "" {
				level = min(level+1, 6)
			}
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", level), oneLine(bl.Text))
		case "paragraph":
			b.WriteString(strings.TrimSpace(bl.Text))
			b.WriteString("\n\n")
		case "list":
			for i, it := range bl.Items {
				marker := "-"
				if bl.Ordered {
					marker = fmt.Sprintf("%d.", i+1)
				}
				fmt.Fprintf(&b, "%s %s\n", marker, oneLine(it))
			}
			b.WriteString("\n")
		case "table":
			for r, row := range bl.Rows {
				b.WriteString("|")
				for _, c := range row {
					b.WriteString(" " + cellText(c) + " |")
				}
				b.WriteString("\n")
				if r == 0 {
					b.WriteString("|" + strings.Repeat(" --- |", len(row)) + "\n")
				}
			}
			b.WriteString("\n")
		}
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cellText escapes a Markdown table cell.
func cellText(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// renderCSV writes the outline's one table as RFC 4180 CSV.
func renderCSV(s Spec) ([]byte, error) {
	var tables [][][]string
	for _, bl := range s.Blocks {
		if bl.Type == "table" {
			tables = append(tables, bl.Rows)
		}
	}
	switch len(tables) {
	case 0:
		return nil, fmt.Errorf("CSV needs a table block (rows)")
	case 1:
	default:
		return nil, fmt.Errorf("a CSV file holds one table and this outline has %d: make one CSV per table", len(tables))
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	if err := w.WriteAll(tables[0]); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
