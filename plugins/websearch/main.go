// Plugin websearch offers the agent webSearch (a core tool):
// a query to the search API the operator configured, answered with
// titles, URLs, snippets and dates. The host holds the endpoint and key;
// this plugin sees neither.
package main

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/websearch"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

func main() {}

func init() {
	pdk.Tool("webSearch", "Search the web. Returns up to count results, each with title, url, a snippet and, when known, "+
		"the publication date. Use fetchPage to read a result's page.", search, pdk.ReadOnly())
}

// SearchArgs are webSearch's arguments.
type SearchArgs struct {
	Query     string `json:"query" description:"what to search for" minLength:"1" maxLength:"1000"`
	Count     int    `json:"count,omitempty" description:"how many results (default and maximum are the operator's)" minimum:"1" maximum:"20"`
	TimeRange string `json:"timeRange,omitempty" description:"only results from the last day, week, month or year" enum:"day,week,month,year"`
	Language  string `json:"language,omitempty" description:"preferred result language, e.g. de or en" pattern:"^[a-zA-Z]{2}(-[a-zA-Z]{2})?$"`
}

func search(a SearchArgs) (wire.SearchResponse, error) {
	return websearch.Search(wire.SearchRequest{Query: a.Query, Count: a.Count, TimeRange: a.TimeRange, Language: a.Language})
}
