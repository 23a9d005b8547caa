package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

const testKey = "tvly-SECRET-0123456789"

// fakeProvider is one provider's API on loopback, speaking its wire format
// (from the providers' documentation). answer decides each response; the
// request seen last is kept for assertions.
type fakeProvider struct {
	t      *testing.T
	srv    *httptest.Server
	calls  atomic.Int32
	answer func(n int, w http.ResponseWriter, r *http.Request)
	last   atomic.Pointer[seen]
}

type seen struct {
	method, path string
	query        url.Values
	header       http.Header
	body         string
}

func newFake(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *fakeProvider {
	f := &fakeProvider{t: t, answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.last.Store(&seen{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: string(b)})
		f.answer(int(f.calls.Add(1)), w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) searcher(provider string) *Searcher {
	f.t.Helper()
	u, _ := url.Parse(f.srv.URL)
	s, err := New(Config{Provider: provider, URL: f.srv.URL, APIKey: testKey, MaxResponseBytes: 64 << 10}, nil, wasm.EgressOptions{AllowPrivateHosts: []string{u.Host}})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Real answers, shaped as each provider documents them.
func okAnswer(provider string, n int) string {
	var items []string
	for i := range n {
		switch provider {
		case SearXNG:
			items = append(items, fmt.Sprintf(`{"url":"https://example.org/%d","title":"Result %d","content":"About <b>agents</b> &amp; tools %d","engine":"duckduckgo","parsed_url":["https","example.org","/%d","","",""],"engines":["duckduckgo"],"positions":[%d],"score":1.0,"category":"general","publishedDate":%s}`,
				i, i, i, i, i+1, map[bool]string{true: `"2024-03-01T10:00:00"`, false: "null"}[i == 0]))
		case Brave:
			items = append(items, fmt.Sprintf(`{"title":"Result %d","url":"https://example.org/%d","is_source_local":false,"is_source_both":false,"description":"About <strong>agents</strong> &amp; tools %d","page_age":"2024-03-01T10:00:00","age":"March 1, 2024","language":"en","family_friendly":true,"type":"search_result","meta_url":{"scheme":"https","netloc":"example.org","hostname":"example.org","path":"› %d"}}`, i, i, i, i))
		case Tavily:
			items = append(items, fmt.Sprintf(`{"title":"Result %d","url":"https://example.org/%d","content":"About agents &amp; tools %d","score":0.9,"raw_content":null}`, i, i, i))
		}
	}
	list := strings.Join(items, ",")
	switch provider {
	case SearXNG:
		return `{"query":"agents","number_of_results":0,"results":[` + list + `],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`
	case Brave:
		return `{"query":{"original":"agents","show_strict_warning":false,"is_navigational":false,"spellcheck_off":true,"country":"us","more_results_available":true},"mixed":{"type":"mixed","main":[]},"type":"search","web":{"type":"search","results":[` + list + `],"family_friendly":true}}`
	default:
		return `{"query":"agents","follow_up_questions":null,"answer":null,"images":[],"results":[` + list + `],"response_time":0.93}`
	}
}

// checkRequest asserts the request is the provider's documented one, the
// key where the provider wants it.
func checkRequest(t *testing.T, provider string, s *seen, count int) {
	t.Helper()
	switch provider {
	case SearXNG:
		if s.method != "GET" || s.path != "/search" || s.query.Get("format") != "json" || s.query.Get("q") != "agents" {
			t.Errorf("searxng request %s %s %v", s.method, s.path, s.query)
		}
	case Brave:
		if s.method != "GET" || s.path != "/res/v1/web/search" || s.query.Get("q") != "agents" || s.query.Get("count") != fmt.Sprint(count) ||
			s.header.Get("X-Subscription-Token") != testKey || s.header.Get("Accept") != "application/json" {
			t.Errorf("brave request %s %s %v %v", s.method, s.path, s.query, s.header)
		}
	case Tavily:
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		if err := json.Unmarshal([]byte(s.body), &body); err != nil || s.method != "POST" || s.path != "/search" ||
			body.Query != "agents" || body.MaxResults != count || s.header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("tavily request %s %s %s %v", s.method, s.path, s.body, s.header)
		}
	}
}

func TestSearchNormalisesEachProvider(t *testing.T) {
	for _, p := range []string{SearXNG, Brave, Tavily} {
		t.Run(p, func(t *testing.T) {
			f := newFake(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, okAnswer(p, 30)) })
			out, err := f.searcher(p).Search(context.Background(), wire.SearchRequest{Query: "  agents ", Count: 3})
			if err != nil {
				t.Fatal(err)
			}
			checkRequest(t, p, f.last.Load(), 3)
			if out.Provider != p || out.Query != "agents" || len(out.Results) != 3 {
				t.Fatalf("got %+v", out)
			}
			r := out.Results[0]
			if r.Title != "Result 0" || r.URL != "https://example.org/0" || r.Snippet != "About agents & tools 0" {
				t.Errorf("result %+v", r)
			}
			wantDate := "2024-03-01T10:00:00Z"
			if p == Tavily {
				wantDate = "" // topic general carries no date
			}
			if r.Published != wantDate {
				t.Errorf("published %q, want %q", r.Published, wantDate)
			}
			// Asking for more than the operator's maximum gets the maximum.
			out, err = f.searcher(p).Search(context.Background(), wire.SearchRequest{Query: "agents", Count: 500})
			if err != nil || len(out.Results) != 10 {
				t.Fatalf("count 500: %d results, %v", len(out.Results), err)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	huge := `{"results":[` + strings.Repeat(`{"title":"x","url":"https://e.org","content":"`+strings.Repeat("y", 1000)+`"},`, 100) + `{}]}`
	cases := []struct {
		name, provider string
		status         int
		header         map[string]string
		body           string
		code, text     string
	}{
		{"brave bad key", Brave, 422, nil, `{"type":"ErrorResponse","error":{"id":"5d5e9a1c","status":422,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid.","meta":{"component":"authentication"}},"time":1700000000}`, "unauthorized", "SUBSCRIPTION_TOKEN_INVALID"},
		{"brave 401", Brave, 401, nil, `{"type":"ErrorResponse","error":{"id":"x","status":401,"code":"UNAUTHORIZED","detail":"Missing token"}}`, "unauthorized", "Missing token"},
		{"tavily bad key", Tavily, 401, nil, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`, "unauthorized", "missing or invalid API key"},
		{"searxng proxy 401", SearXNG, 401, nil, `Unauthorized`, "unauthorized", "401"},
		{"searxng json off", SearXNG, 403, nil, `<html>403 Forbidden</html>`, "upstream_error", "format=json"},
		{"brave 429 long", Brave, 429, map[string]string{"Retry-After": "3600", "X-RateLimit-Reset": "1, 3600"}, `{"type":"ErrorResponse","error":{"id":"r","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan.","meta":{"plan":"Free","rate_limit":1}}}`, "rate_limited", "retry after 1h0m0s"},
		{"tavily plan limit", Tavily, 432, nil, `{"detail":{"error":"This request exceeds your plan's set usage limit."}}`, "rate_limited", "usage limit"},
		{"tavily 500", Tavily, 500, nil, `{"detail":{"error":"Internal Server Error"}}`, "upstream_error", "500"},
		{"garbage searxng", SearXNG, 200, nil, `{"results": [tru`, "bad_response", "not its search JSON"},
		{"garbage brave", Brave, 200, nil, `<html>not json</html>`, "bad_response", ""},
		{"tavily without results", Tavily, 200, nil, `{"query":"agents"}`, "bad_response", "no results"},
		{"huge", Tavily, 200, nil, huge, "too_large", "larger than 65536 bytes"},
		{"key echoed", Tavily, 400, nil, `{"detail":{"error":"bad key ` + testKey + `"}}`, "invalid_arguments", "[redacted]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				writeJSON(w, c.status, c.body)
			})
			s := f.searcher(c.provider)
			s.sleep = func(context.Context, time.Duration) error {
				t.Error("slept for a Retry-After beyond the maximum")
				return nil
			}
			_, err := s.Search(context.Background(), wire.SearchRequest{Query: "agents"})
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(e.Message, c.text) {
				t.Fatalf("got %v, want code %s containing %q", err, c.code, c.text)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("the key is in the error: %v", err)
			}
		})
	}
}

func TestRetryAfterIsHonouredOnce(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			writeJSON(w, 429, `{"detail":{"error":"rate limit"}}`)
			return
		}
		writeJSON(w, 200, okAnswer(Tavily, 2))
	})
	s := f.searcher(Tavily)
	var waited time.Duration
	s.sleep = func(_ context.Context, d time.Duration) error { waited += d; return nil }
	out, err := s.Search(context.Background(), wire.SearchRequest{Query: "agents"})
	if err != nil || len(out.Results) != 2 || waited != 2*time.Second || f.calls.Load() != 2 {
		t.Fatalf("results %d, err %v, waited %s, calls %d", len(out.Results), err, waited, f.calls.Load())
	}
	// Twice rate limited: one retry only, then the error.
	f.answer = func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, 429, `{"detail":{"error":"rate limit"}}`)
	}
	f.calls.Store(0)
	if _, err := s.Search(context.Background(), wire.SearchRequest{Query: "agents"}); err == nil || f.calls.Load() != 2 {
		t.Fatalf("err %v after %d calls", err, f.calls.Load())
	}
}

// A provider redirecting elsewhere does not get the key sent on: the only
// allowed host is the configured endpoint's.
func TestRedirectElsewhereIsRefused(t *testing.T) {
	other := newFake(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, okAnswer(Brave, 1)) })
	f := newFake(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.srv.URL+"/res/v1/web/search?q=x", http.StatusFound)
	})
	// The other server is loopback on another port: allow it as private too,
	// so that only the allow-list stands in the way.
	u, _ := url.Parse(other.srv.URL)
	fu, _ := url.Parse(f.srv.URL)
	s, err := New(Config{Provider: Brave, URL: f.srv.URL, APIKey: testKey}, nil, wasm.EgressOptions{AllowPrivateHosts: []string{fu.Host, u.Host}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Search(context.Background(), wire.SearchRequest{Query: "agents"})
	var e *Error
	if !errors.As(err, &e) || e.Code != "denied" {
		t.Fatalf("got %v", err)
	}
	if other.calls.Load() != 0 {
		t.Fatal("the redirect target was reached")
	}
}

func TestBadArgumentsAndConfig(t *testing.T) {
	f := newFake(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, okAnswer(SearXNG, 1)) })
	s := f.searcher(SearXNG)
	for _, r := range []wire.SearchRequest{{Query: " "}, {Query: strings.Repeat("q", 1001)}, {Query: "x", TimeRange: "decade"}} {
		var e *Error
		if _, err := s.Search(context.Background(), r); !errors.As(err, &e) || e.Code != "invalid_arguments" {
			t.Errorf("%+v: %v", r, err)
		}
	}
	if f.calls.Load() != 0 {
		t.Error("a bad request reached the provider")
	}
	for _, c := range []Config{
		{Provider: "google"},
		{Provider: SearXNG},
		{Provider: Brave},
		{Provider: Tavily, APIKeyEnv: "UNSET_KEY"},
		{Provider: SearXNG, URL: "ftp://x"},
		{Provider: SearXNG, URL: "https://user:pw@searx.example.org"},
	} {
		if _, err := New(c, func(string) string { return "" }, wasm.EgressOptions{}); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	s2, err := New(Config{Provider: "Brave", APIKeyEnv: "K"}, func(k string) string { return map[string]string{"K": "v"}[k] }, wasm.EgressOptions{})
	if err != nil || s2.key != "v" || s2.base.String() != "https://api.search.brave.com" {
		t.Fatalf("%v %+v", err, s2)
	}
}

// A query cannot add or replace the request's parameters or path: it
// arrives as the one q the provider reads.
func TestQueryCannotInjectParameters(t *testing.T) {
	const q = "agents&format=html&count=500/../admin?#frag"
	for _, p := range []string{SearXNG, Brave, Tavily} {
		f := newFake(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, okAnswer(p, 1)) })
		if _, err := f.searcher(p).Search(context.Background(), wire.SearchRequest{Query: q, Count: 2}); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		s := f.last.Load()
		switch p {
		case SearXNG:
			if s.path != "/search" || s.query.Get("q") != q || len(s.query["format"]) != 1 || s.query.Get("format") != "json" {
				t.Errorf("searxng got %s %v", s.path, s.query)
			}
		case Brave:
			if s.path != "/res/v1/web/search" || s.query.Get("q") != q || len(s.query["count"]) != 1 || s.query.Get("count") != "2" {
				t.Errorf("brave got %s %v", s.path, s.query)
			}
		case Tavily:
			var body map[string]any
			if err := json.Unmarshal([]byte(s.body), &body); err != nil || body["query"] != q || body["max_results"] != float64(2) {
				t.Errorf("tavily got %s", s.body)
			}
		}
	}
}

// Brave's 429 names the window's reset in X-RateLimit-Reset rather than
// Retry-After.
func TestBraveRateLimitReset(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("X-RateLimit-Limit", "1, 15000")
			w.Header().Set("X-RateLimit-Remaining", "0, 14000")
			w.Header().Set("X-RateLimit-Reset", "1, 1419704")
			writeJSON(w, 429, `{"type":"ErrorResponse","error":{"id":"r","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan."}}`)
			return
		}
		writeJSON(w, 200, okAnswer(Brave, 1))
	})
	s := f.searcher(Brave)
	var waited time.Duration
	s.sleep = func(_ context.Context, d time.Duration) error { waited += d; return nil }
	if out, err := s.Search(context.Background(), wire.SearchRequest{Query: "agents"}); err != nil || len(out.Results) != 1 || waited != time.Second {
		t.Fatalf("%v, waited %s", err, waited)
	}
}

// noDNS knows no name: the only way to reach the fake is the override.
type noDNS struct{}

func (noDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return nil, fmt.Errorf("no such host %s", host)
}

// TestResolveOverride: the operator's -resolve reaches the search API's
// client (a name only the override knows is reached), and the override
// alone does not let it reach loopback: -allow-host still must.
func TestResolveOverride(t *testing.T) {
	f := newFake(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, okAnswer(SearXNG, 1)) })
	u, _ := url.Parse(f.srv.URL)
	o, err := egress.NewOverrides(noDNS{}, "search.example.test=127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Provider: SearXNG, URL: "http://search.example.test:" + u.Port()}
	refused, err := New(cfg, nil, wasm.EgressOptions{Resolver: o})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refused.Search(context.Background(), wire.SearchRequest{Query: "agents"}); err == nil || f.calls.Load() != 0 {
		t.Fatalf("override to loopback without -allow-host: %v, %d calls", err, f.calls.Load())
	}
	s, err := New(cfg, nil, wasm.EgressOptions{Resolver: o, AllowPrivateHosts: []string{"search.example.test:" + u.Port()}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(context.Background(), wire.SearchRequest{Query: "agents"})
	if err != nil || len(res.Results) != 1 || f.calls.Load() != 1 {
		t.Fatalf("search: %+v %v, %d calls", res, err, f.calls.Load())
	}
}
