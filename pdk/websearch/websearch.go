// Package websearch searches the web through the operator's search API
// (capability "websearch"; declare it in plugin.json). The host holds the
// API key and the endpoint: a plugin sends a query and reads normalised
// results.
package websearch

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

// Search runs one query.
func Search(r wire.SearchRequest) (wire.SearchResponse, error) {
	var out wire.SearchResponse
	err := pdk.Invoke(search, r, &out)
	return out, err
}
