// Package wire holds the request and response documents of capability
// "websearch", shared by the host and the PDK so they cannot drift.
package wire

// SearchRequest asks the operator's search API one query.
type SearchRequest struct {
	Query string `json:"query"`
	// Count is how many results to return (0: the operator's default); the
	// host caps it at the operator's maximum.
	Count int `json:"count,omitempty"`
	// TimeRange limits results to the last "day", "week", "month" or "year".
	TimeRange string `json:"timeRange,omitempty"`
	// Language is a language code ("de", "en") the provider may prefer.
	Language string `json:"language,omitempty"`
}

// SearchResponse is the provider's answer, normalised.
type SearchResponse struct {
	// Provider is "searxng", "brave" or "tavily".
	Provider string   `json:"provider"`
	Query    string   `json:"query"`
	Results  []Result `json:"results"`
}

// Result is one hit: plain text (markup removed), bounded in length.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	// Published is the page's date as the provider gives it, RFC 3339 when
	// it is one, empty when unknown.
	Published string `json:"published,omitempty"`
}
