package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls one agenthost server's HTTP API with an API token. It is
// safe for concurrent use. Its methods (client_gen.go) are generated from
// the server's OpenAPI document, one per operation.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
	agent string
}

// Option configures a Client.
type Option func(*Client)

// WithToken authenticates every request with an API token (ahk_…) as a
// bearer token.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient sends requests through h instead of http.DefaultClient
// (for timeouts of the transport, proxies, TLS settings). Requests are
// bounded by their context, so h needs no overall Timeout; one would cut
// long event streams.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithUserAgent names the program in the User-Agent header.
func WithUserAgent(agent string) Option { return func(c *Client) { c.agent = agent } }

// New returns a client of the server at baseURL (http://127.0.0.1:8080;
// the API's paths are appended to it, so a prefix such as a reverse
// proxy's /agenthost is kept).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("sdk: server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("sdk: server URL %q: want http:// or https:// and a host", baseURL)
	}
	c := &Client{base: u, http: http.DefaultClient, agent: "agenthost-sdk-go"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// request is one call the generated methods describe.
type request struct {
	method, path string
	query        url.Values
	header       http.Header
	json         any        // sent as application/json when set
	form         []formPart // sent as multipart/form-data when set
	body         io.Reader  // sent as is, with contentType
	contentType  string
}

// send makes the request and returns the response of a status below 400;
// any other status is an *Error (the body closed).
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	u := *c.base
	unescaped, err := url.PathUnescape(r.path)
	if err != nil {
		return nil, fmt.Errorf("sdk: %s %s: %w", r.method, r.path, err)
	}
	u.Path = c.base.Path + unescaped
	u.RawPath = c.base.EscapedPath() + r.path
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	body, contentType, length := r.body, r.contentType, int64(-1)
	switch {
	case r.json != nil:
		raw, err := json.Marshal(r.json)
		if err != nil {
			return nil, fmt.Errorf("sdk: %s %s: encoding the body: %w", r.method, r.path, err)
		}
		body, contentType = bytes.NewReader(raw), "application/json"
	case r.form != nil:
		if body, contentType, length, err = streamForm(ctx, r.form); err != nil {
			return nil, fmt.Errorf("sdk: %s %s: %w", r.method, r.path, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		if rc, ok := body.(io.Closer); ok && r.form != nil {
			rc.Close()
		}
		return nil, fmt.Errorf("sdk: %s %s: %w", r.method, r.path, err)
	}
	if length >= 0 {
		req.ContentLength = length
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("User-Agent", c.agent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sdk: %s %s: %w", r.method, r.path, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, responseError(r.method, r.path, resp)
	}
	return resp, nil
}

// call makes the request and decodes a JSON answer into out (nil: the
// answer is read and dropped, so the connection is reused).
func (c *Client) call(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &Error{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode), Method: r.method, Path: r.path,
			Detail: "the API answered with a status the client does not expect"}
	}
	if out == nil {
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("sdk: %s %s: decoding the answer: %w", r.method, r.path, err)
	}
	return nil
}

// Do sends a request the generated methods do not cover (a route newer
// than this client, or a format such as ?format=csv): path is the API path
// (/api/v1/…), body is sent as application/json unless nil. The response of
// a status below 400 is returned for the caller to read and close; any
// other status is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	return c.send(ctx, request{method: method, path: path, query: query, json: body})
}
