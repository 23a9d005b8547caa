// Package websearch is the host side of the webSearch tool: one search API
// the operator configures (a SearXNG instance's JSON output, the Brave
// Search API or Tavily), asked through the egress client with the
// endpoint's host as its only allowed host, its answer normalised to
// titles, URLs, snippets and dates. The API key stays in the host: plugins
// reach the search through capability "websearch" and never see the key,
// the endpoint's other paths or the provider's raw answer.
package websearch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

// The providers.
const (
	SearXNG = "searxng"
	Brave   = "brave"
	Tavily  = "tavily"
)

// Config is the operator's search API (section webSearch of the
// configuration file).
type Config struct {
	// Provider is SearXNG, Brave or Tavily.
	Provider string `yaml:"provider"`
	// URL is the API root: the SearXNG instance ("https://searx.example.org"),
	// or for Brave and Tavily their public endpoints when empty.
	URL string `yaml:"url"`
	// APIKey is Brave's subscription token or Tavily's key (for SearXNG,
	// when set, a bearer token for a proxy in front of the instance).
	APIKey string `yaml:"apiKey"`
	// APIKeyEnv names the environment variable holding the key instead.
	APIKeyEnv string `yaml:"apiKeyEnv"`
	// DefaultCount and MaxCount bound the results of one search (5 and 10;
	// MaxCount at most 20).
	DefaultCount int `yaml:"defaultCount"`
	MaxCount     int `yaml:"maxCount"`
	// Timeout bounds one request (15 s).
	Timeout time.Duration `yaml:"timeout"`
	// MaxResponseBytes caps the provider's answer (2 MiB).
	MaxResponseBytes int64 `yaml:"maxResponseBytes"`
	// MaxRetryAfter is the longest Retry-After of a 429 that is waited for
	// and retried once (10 s); a longer one is an error at once.
	MaxRetryAfter time.Duration `yaml:"maxRetryAfter"`
}

// Error is a search that failed, with a code plugins and models can act on:
// not_configured, invalid_arguments, unauthorized, rate_limited,
// upstream_error, bad_response, too_large, denied.
type Error struct {
	Code    string
	Message string
	// RetryAfter is the provider's Retry-After of a rate_limited error.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Searcher asks the configured provider. It is safe for concurrent use.
type Searcher struct {
	cfg    Config
	key    string
	base   *url.URL
	client *egress.Client
	sleep  func(context.Context, time.Duration) error
}

// New checks cfg and builds the searcher; env reads APIKeyEnv (os.Getenv).
// o are the operator's egress settings: hosts that may resolve to private
// addresses (-allow-host: an on-premises SearXNG) and the resolver
// (-resolve; nil: the system's DNS).
func New(cfg Config, env func(string) string, o wasm.EgressOptions) (*Searcher, error) {
	cfg.Provider = strings.ToLower(strings.TrimSpace(cfg.Provider))
	switch cfg.Provider {
	case SearXNG:
		if cfg.URL == "" {
			return nil, errors.New("webSearch: provider searxng needs url (the instance's root)")
		}
	case Brave:
		if cfg.URL == "" {
			cfg.URL = "https://api.search.brave.com"
		}
	case Tavily:
		if cfg.URL == "" {
			cfg.URL = "https://api.tavily.com"
		}
	default:
		return nil, fmt.Errorf("webSearch: provider %q: want searxng, brave or tavily", cfg.Provider)
	}
	key := cfg.APIKey
	if cfg.APIKeyEnv != "" {
		if env == nil || env(cfg.APIKeyEnv) == "" {
			return nil, fmt.Errorf("webSearch: apiKeyEnv %s is not set", cfg.APIKeyEnv)
		}
		key = env(cfg.APIKeyEnv)
	}
	if key == "" && cfg.Provider != SearXNG {
		return nil, fmt.Errorf("webSearch: provider %s needs apiKey or apiKeyEnv", cfg.Provider)
	}
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, fmt.Errorf("webSearch: url %q: want an http(s) URL without credentials or query", cfg.URL)
	}
	if cfg.DefaultCount <= 0 {
		cfg.DefaultCount = 5
	}
	if cfg.MaxCount <= 0 {
		cfg.MaxCount = 10
	}
	cfg.MaxCount = min(cfg.MaxCount, 20)
	cfg.DefaultCount = min(cfg.DefaultCount, cfg.MaxCount)
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 2 << 20
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 10 * time.Second
	}
	// The endpoint's host (and port) is the only host: a redirect elsewhere
	// is refused, so the key attached to the request cannot follow it.
	pol := egress.NewPolicy().
		WithAllowedHosts(u.Host).
		WithMethods(http.MethodGet, http.MethodPost).
		WithMaxResponseBytes(cfg.MaxResponseBytes).
		WithTimeout(cfg.Timeout).
		WithPrivateHostsAllowed(o.AllowPrivateHosts...)
	if o.Resolver != nil {
		pol = pol.WithResolver(o.Resolver)
	}
	return &Searcher{cfg: cfg, key: key, base: u, client: egress.NewClient(pol), sleep: sleepCtx}, nil
}

// Provider names the configured provider.
func (s *Searcher) Provider() string { return s.cfg.Provider }

// Search asks the provider one query. A 429 whose Retry-After is within
// MaxRetryAfter is waited for and tried once more.
func (s *Searcher) Search(ctx context.Context, r wire.SearchRequest) (wire.SearchResponse, error) {
	r.Query = strings.TrimSpace(r.Query)
	if r.Query == "" {
		return wire.SearchResponse{}, &Error{Code: "invalid_arguments", Message: "the query is empty"}
	}
	if len(r.Query) > 1000 {
		return wire.SearchResponse{}, &Error{Code: "invalid_arguments", Message: "the query is longer than 1000 bytes"}
	}
	switch r.TimeRange {
	case "", "day", "week", "month", "year":
	default:
		return wire.SearchResponse{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("timeRange %q: want day, week, month or year", r.TimeRange)}
	}
	if r.Count <= 0 {
		r.Count = s.cfg.DefaultCount
	}
	r.Count = min(r.Count, s.cfg.MaxCount)
	for attempt := 0; ; attempt++ {
		results, err := s.once(ctx, r)
		var e *Error
		if err != nil && errors.As(err, &e) && e.Code == "rate_limited" && attempt == 0 && e.RetryAfter > 0 && e.RetryAfter <= s.cfg.MaxRetryAfter {
			if serr := s.sleep(ctx, e.RetryAfter); serr != nil {
				return wire.SearchResponse{}, err
			}
			continue
		}
		if err != nil {
			return wire.SearchResponse{}, s.redact(err)
		}
		if len(results) > r.Count {
			results = results[:r.Count]
		}
		return wire.SearchResponse{Provider: s.cfg.Provider, Query: r.Query, Results: results}, nil
	}
}

// once sends one request and normalises its answer.
func (s *Searcher) once(ctx context.Context, r wire.SearchRequest) ([]wire.Result, error) {
	req := s.request(r)
	resp, err := s.client.Do(ctx, req)
	if err != nil {
		var denied *egress.DeniedError
		switch {
		case errors.As(err, &denied):
			return nil, &Error{Code: "denied", Message: err.Error()}
		case errors.Is(err, egress.ErrResponseTooLarge):
			return nil, &Error{Code: "too_large", Message: fmt.Sprintf("the %s answer is larger than %d bytes", s.cfg.Provider, s.cfg.MaxResponseBytes)}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, &Error{Code: "upstream_error", Message: fmt.Sprintf("%s: %v", s.cfg.Provider, err)}
	}
	if resp.Status != http.StatusOK {
		return nil, s.statusError(resp)
	}
	results, err := s.decode(resp.Body)
	if err != nil {
		return nil, &Error{Code: "bad_response", Message: fmt.Sprintf("%s answered what is not its search JSON: %v", s.cfg.Provider, err)}
	}
	return results, nil
}

// statusError turns an answer other than 200 into an Error carrying the
// provider's own message.
func (s *Searcher) statusError(resp *egress.Response) error {
	msg := fmt.Sprintf("%s answered %d", s.cfg.Provider, resp.Status)
	if detail := s.errorDetail(resp.Body); detail != "" {
		msg += ": " + detail
	}
	e := &Error{Code: "upstream_error", Message: msg}
	switch {
	case resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden && s.cfg.Provider != SearXNG,
		s.cfg.Provider == Brave && resp.Status == http.StatusUnprocessableEntity && strings.Contains(msg, "SUBSCRIPTION_TOKEN_INVALID"):
		e.Code = "unauthorized"
		e.Message += " (check the webSearch apiKey)"
	case resp.Status == http.StatusForbidden && s.cfg.Provider == SearXNG:
		e.Code = "upstream_error"
		e.Message += " (the instance must allow format=json: search.formats in its settings.yml)"
	case resp.Status == http.StatusTooManyRequests:
		e.Code = "rate_limited"
		e.RetryAfter = retryAfter(resp.Headers.Get("Retry-After"), time.Now())
		if e.RetryAfter == 0 && s.cfg.Provider == Brave {
			// Brave gives the seconds until each window resets instead:
			// "1, 1419704" (per second, per month); the first is the one hit.
			first, _, _ := strings.Cut(resp.Headers.Get("X-RateLimit-Reset"), ",")
			e.RetryAfter = retryAfter(first, time.Now())
		}
		if e.RetryAfter > 0 {
			e.Message += fmt.Sprintf(" (retry after %s)", e.RetryAfter.Round(time.Second))
		}
	case resp.Status == 432 || resp.Status == 433:
		// Tavily: the plan's or the pay-as-you-go limit is reached.
		e.Code = "rate_limited"
	case resp.Status >= 400 && resp.Status < 500:
		e.Code = "invalid_arguments"
	}
	return e
}

// redact removes the key from an error's text: a provider may echo it.
func (s *Searcher) redact(err error) error {
	if s.key == "" || !strings.Contains(err.Error(), s.key) {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Message = strings.ReplaceAll(c.Message, s.key, "[redacted]")
		return &c
	}
	return errors.New(strings.ReplaceAll(err.Error(), s.key, "[redacted]"))
}

// retryAfter reads Retry-After: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var secs int
	if _, err := fmt.Sscanf(v, "%d", &secs); err == nil && fmt.Sprint(secs) == v {
		return time.Duration(max(secs, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
