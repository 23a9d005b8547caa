package kindex

import (
	"slices"

	"github.com/agenthost/agenthost/pdk/content"
)

// Structure keys of an on-demand index.
const (
	// StructOnDemand is true when pages are extracted on demand.
	StructOnDemand = "onDemand"
	// StructExtractedPages lists the pages already extracted, ascending.
	StructExtractedPages = "extractedPages"
)

// ExtractedPages lists the pages of an on-demand index already extracted.
func ExtractedPages(idx content.Index) []int {
	var out []int
	switch v := idx.Structure[StructExtractedPages].(type) {
	case []int:
		out = slices.Clone(v)
	case []any:
		for _, x := range v {
			if f, ok := x.(float64); ok {
				out = append(out, int(f))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ChunkFilter selects stored chunks of one file's content.
type ChunkFilter struct {
	// Pages (from 1); empty: every page.
	Pages []int
	// Section matches a chunk's section id or any below it ("2" matches
	// "2" and "2.1"); empty: every section.
	Section string
	// Types; empty: every type.
	Types []content.Type
}
