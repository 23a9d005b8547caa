package websearch

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

// The three providers' wire formats, from their public documentation:
// SearXNG's search API (GET /search?format=json), Brave's Web Search API
// (GET /res/v1/web/search, header X-Subscription-Token) and Tavily's
// (POST /search, Authorization: Bearer).

// request builds the provider's request for r.
func (s *Searcher) request(r wire.SearchRequest) egress.Request {
	q := url.Values{}
	h := map[string]string{"Accept": "application/json", "User-Agent": "agenthost-websearch/1.0"}
	switch s.cfg.Provider {
	case SearXNG:
		q.Set("q", r.Query)
		q.Set("format", "json")
		q.Set("pageno", "1")
		if r.Language != "" {
			q.Set("language", r.Language)
		}
		if r.TimeRange != "" {
			q.Set("time_range", r.TimeRange)
		}
		if s.key != "" {
			h["Authorization"] = "Bearer " + s.key
		}
		return egress.Request{Method: http.MethodGet, URL: s.base.String() + "/search?" + q.Encode(), Headers: h}
	case Brave:
		q.Set("q", r.Query)
		q.Set("count", strconv.Itoa(r.Count))
		if r.Language != "" {
			q.Set("search_lang", r.Language)
		}
		if f := map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}[r.TimeRange]; f != "" {
			q.Set("freshness", f)
		}
		h["X-Subscription-Token"] = s.key
		return egress.Request{Method: http.MethodGet, URL: s.base.String() + "/res/v1/web/search?" + q.Encode(), Headers: h}
	default: // Tavily
		body := map[string]any{"query": r.Query, "max_results": r.Count, "search_depth": "basic", "topic": "general"}
		if r.TimeRange != "" {
			body["time_range"] = r.TimeRange
		}
		b, _ := json.Marshal(body)
		h["Content-Type"] = "application/json"
		h["Authorization"] = "Bearer " + s.key
		return egress.Request{Method: http.MethodPost, URL: s.base.String() + "/search", Headers: h, Body: b}
	}
}

type (
	searxngAnswer struct {
		Results *[]struct {
			Title         string  `json:"title"`
			URL           string  `json:"url"`
			Content       string  `json:"content"`
			PublishedDate *string `json:"publishedDate"`
		} `json:"results"`
	}
	braveAnswer struct {
		Type string `json:"type"`
		Web  *struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				PageAge     string `json:"page_age"`
				Age         string `json:"age"`
			} `json:"results"`
		} `json:"web"`
	}
	tavilyAnswer struct {
		Results *[]struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
)

var errNoResults = errors.New("no results field")

// decode reads a 200 answer into results, dropping hits without an http(s) URL.
func (s *Searcher) decode(body []byte) ([]wire.Result, error) {
	var out []wire.Result
	add := func(title, link, snippet, date string) {
		u, err := url.Parse(strings.TrimSpace(link))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return
		}
		out = append(out, wire.Result{Title: clean(title, 300), URL: u.String(), Snippet: clean(snippet, 600), Published: date1(date)})
	}
	switch s.cfg.Provider {
	case SearXNG:
		var a searxngAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, err
		}
		if a.Results == nil {
			return nil, errNoResults
		}
		for _, r := range *a.Results {
			d := ""
			if r.PublishedDate != nil {
				d = *r.PublishedDate
			}
			add(r.Title, r.URL, r.Content, d)
		}
	case Brave:
		var a braveAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, err
		}
		if a.Type != "search" {
			return nil, errors.New(`type is not "search"`)
		}
		if a.Web != nil { // a query without web hits has no "web" section
			for _, r := range a.Web.Results {
				add(r.Title, r.URL, r.Description, r.PageAge)
			}
		}
	default:
		var a tavilyAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, err
		}
		if a.Results == nil {
			return nil, errNoResults
		}
		for _, r := range *a.Results {
			add(r.Title, r.URL, r.Content, r.PublishedDate)
		}
	}
	return out, nil
}

// errorDetail is the provider's own message in an error answer, or a short
// excerpt of an answer that is not the provider's error JSON.
func (s *Searcher) errorDetail(body []byte) string {
	var brave struct {
		Error *struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	var tavily struct {
		Detail json.RawMessage `json:"detail"`
	}
	switch {
	case s.cfg.Provider == Brave && json.Unmarshal(body, &brave) == nil && brave.Error != nil:
		return clean(brave.Error.Code+": "+brave.Error.Detail, 300)
	case s.cfg.Provider == Tavily && json.Unmarshal(body, &tavily) == nil && len(tavily.Detail) > 0:
		var inner struct {
			Error string `json:"error"`
		}
		var plain string
		if json.Unmarshal(tavily.Detail, &inner) == nil && inner.Error != "" {
			return clean(inner.Error, 300)
		} else if json.Unmarshal(tavily.Detail, &plain) == nil {
			return clean(plain, 300)
		}
	}
	return clean(string(bytes.ToValidUTF8(body, nil)), 200)
}

// clean makes provider text plain: tags removed (Brave marks matches with
// <strong>), entities decoded, white space collapsed, at most n runes.
func clean(s string, n int) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	t := strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
	if utf8.RuneCountInString(t) > n {
		t = string([]rune(t)[:n-1]) + "…"
	}
	return t
}

// date1 gives a provider's date as RFC 3339 when it parses as one of the
// forms they use, else the text as given (bounded), else "".
func date1(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return clean(s, 64)
}
