package ondemand

import (
	"context"
	"encoding/json"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// PageReader extracts pages from..to (inclusive, from 1) of a document.
// sections is the document's section map from its pre-scan (the index
// keeps it), so the reader references pages by section without scanning
// the document again; nil lets the reader find the sections itself.
type PageReader interface {
	ReadPages(ctx context.Context, name, mimeType string, in wasm.Input, from, to int, sections []Section) ([]content.Object, error)
}

// PageCount is structure["pages"] of an index (a JSON number after a round
// trip through the store, an int before).
func PageCount(idx content.Index) int {
	switch v := idx.Structure["pages"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// Is reports whether an index is a pre-scan whose pages are
// extracted when read.
func Is(idx content.Index) bool {
	b, _ := idx.Structure[kindex.StructOnDemand].(bool)
	return b
}
