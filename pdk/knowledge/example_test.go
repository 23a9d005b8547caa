package knowledge_test

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk/knowledge"
)

// Searching the caller's readable files (capability "knowledge"): the host
// answers only from files the calling user may read. Runs inside a plugin.
func ExampleSearch() {
	hits, err := knowledge.Search(knowledge.SearchRequest{Query: "lighthouse opening hours", Limit: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hits {
		fmt.Printf("%s (%.2f): %s\n", h.FileName, h.Score, h.Text)
	}
}
