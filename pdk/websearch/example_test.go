package websearch_test

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk/websearch"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

// A web search through the operator's search provider (capability
// "websearch"): the plugin never sees the provider's key. Runs inside a
// plugin.
func ExampleSearch() {
	resp, err := websearch.Search(wire.SearchRequest{Query: "Bern lighthouse museum", Count: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range resp.Results {
		fmt.Println(r.Title, r.URL)
	}
}
