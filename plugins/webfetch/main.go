// Command webfetch is a built-in tool plugin: it fetches a web page through the
// host (only from the hosts in its manifest's allow-list) and returns the page's
// readable text as Markdown-like plain text.
package main

import (
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

type fetchArgs struct {
	URL      string `json:"url" format:"uri" pattern:"^https?://" description:"the http(s) URL of the page"`
	MaxChars int    `json:"maxChars,omitempty" minimum:"100" maximum:"200000" default:"20000" description:"cut the text after this many characters"`
	Links    bool   `json:"links,omitempty" description:"keep link targets after link texts"`
}

type page struct {
	URL       string `json:"url"`
	Status    int    `json:"status"`
	Title     string `json:"title"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

func fetchPage(a fetchArgs) (page, error) {
	if a.MaxChars == 0 {
		a.MaxChars = 20000
	}
	resp := pdk.HTTP(pdk.HTTPRequest{Method: "GET", URL: a.URL, Headers: map[string]string{
		"Accept":     "text/html,application/xhtml+xml,text/plain;q=0.8",
		"User-Agent": "agenthost-webfetch/1.0",
	}})
	if resp.Status >= 400 {
		return page{}, pdk.Errorf("http_status", "%s answered %d", a.URL, resp.Status)
	}
	ct := resp.Headers["content-type"]
	var title, text string
	switch {
	case strings.Contains(ct, "html") || ct == "" && looksHTML(resp.Body):
		title, text = readable(resp.Body, a.Links)
	case strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") || strings.Contains(ct, "xml"):
		text = string(resp.Body)
	default:
		return page{}, pdk.Errorf("unsupported_content", "%s is %s, not a text page", a.URL, ct)
	}
	p := page{URL: a.URL, Status: resp.Status, Title: title, Text: text}
	if r := []rune(p.Text); len(r) > a.MaxChars {
		p.Text, p.Truncated = string(r[:a.MaxChars]), true
	}
	return p, nil
}

func looksHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html")
}

func init() {
	pdk.Tool("fetchPage", "Fetch a web page from an approved site and return its title and readable text (scripts, styles and navigation removed).", fetchPage, pdk.ReadOnly())
}

func main() {}
