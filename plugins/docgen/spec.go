package main

import (
	"fmt"
	"strings"
)

// Block is one element of a document outline.
type Block struct {
	Type    string     `json:"type" description:"heading, paragraph, list or table" enum:"heading,paragraph,list,table"`
	Text    string     `json:"text,omitempty" description:"the heading's or paragraph's text"`
	Level   int        `json:"level,omitempty" description:"heading level, 1 (top) to 6" minimum:"0" maximum:"6"`
	Items   []string   `json:"items,omitempty" description:"list items"`
	Ordered bool       `json:"ordered,omitempty" description:"a numbered list"`
	Rows    [][]string `json:"rows,omitempty" description:"table rows, the first one the header"`
}

// Spec is a document outline.
type Spec struct {
	Title  string  `json:"title,omitempty"`
	Blocks []Block `json:"blocks"`
}

// maxCells bounds a table, maxBlocks a document: the plugin's memory is
// the real limit, these give a clear error well before it.
const (
	maxBlocks = 5000
	maxCells  = 200_000
)

// validate checks the outline and normalises it (levels, ragged rows).
func (s *Spec) validate() error {
	if strings.TrimSpace(s.Title) == "" && len(s.Blocks) == 0 {
		return fmt.Errorf("the document has no title and no blocks")
	}
	if len(s.Blocks) > maxBlocks {
		return fmt.Errorf("%d blocks, at most %d", len(s.Blocks), maxBlocks)
	}
	cells := 0
	for i := range s.Blocks {
		b := &s.Blocks[i]
		switch b.Type {
		case "heading":
			if strings.TrimSpace(b.Text) == "" {
				return fmt.Errorf("blocks[%d]: a heading needs text", i)
			}
			if b.Level == 0 {
				b.Level = 1
			}
			if b.Level < 1 || b.Level > 6 {
				return fmt.Errorf("blocks[%d]: heading level %d (want 1 to 6)", i, b.Level)
			}
		case "paragraph":
			if b.Text == "" {
				return fmt.Errorf("blocks[%d]: a paragraph needs text", i)
			}
		case "list":
			if len(b.Items) == 0 {
				return fmt.Errorf("blocks[%d]: a list needs items", i)
			}
		case "table":
			if len(b.Rows) == 0 {
				return fmt.Errorf("blocks[%d]: a table needs rows", i)
			}
			cols := 0
			for _, r := range b.Rows {
				cols = max(cols, len(r))
				cells += len(r)
			}
			if cols == 0 {
				return fmt.Errorf("blocks[%d]: a table needs at least one column", i)
			}
			// Ragged rows are padded, so every format gets a rectangle.
			for r := range b.Rows {
				for len(b.Rows[r]) < cols {
					b.Rows[r] = append(b.Rows[r], "")
				}
			}
		default:
			return fmt.Errorf("blocks[%d]: unknown type %q (want heading, paragraph, list or table)", i, b.Type)
		}
	}
	if cells > maxCells {
		return fmt.Errorf("the tables have %d cells, at most %d", cells, maxCells)
	}
	return nil
}
