package mcpclient

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
)

// httpTransport is a streamable-HTTP server's transport: the admin's
// headers go with every request to the server's origin (and nowhere else),
// redirects are not followed, and a JSON answer is read through the
// server's bound (an event stream's events are bounded by the SDK's
// MaxEventSize, set to the same bound).
func httpTransport(c mcpconfig.Config, sec mcpconfig.Secrets, base http.RoundTripper, f *faults) (*mcp.StreamableClientTransport, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, err
	}
	client := &http.Client{
		Transport: &authTransport{base: base, scheme: u.Scheme, host: u.Host, headers: sec.Headers, limit: int64(c.ResultLimit()), faults: f},
		// A redirect could carry the request (and a bearer token the
		// transport would not add again, but the body) elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the MCP server answered with a redirect, which is not followed")
		},
	}
	return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: client, MaxEventSize: c.ResultLimit(), MaxRetries: 2}, nil
}

type authTransport struct {
	base         http.RoundTripper
	scheme, host string
	headers      map[string]string
	limit        int64
	faults       *faults
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == t.scheme && req.URL.Host == t.host && len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		if resp.ContentLength > t.limit {
			resp.Body.Close()
			err := fmt.Errorf("%w of %d bytes (Content-Length %d)", ErrTooLarge, t.limit, resp.ContentLength)
			t.faults.note(err)
			return nil, err
		}
		resp.Body = &limitedBody{rc: resp.Body, left: t.limit, limit: t.limit, faults: t.faults}
	}
	return resp, nil
}

// limitedBody fails a body that goes past the bound, without reading it.
type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
	faults      *faults
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("%w of %d bytes", ErrTooLarge, b.limit)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		err := fmt.Errorf("%w of %d bytes", ErrTooLarge, b.limit)
		b.faults.note(err)
		return 0, err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// faults keeps the first transport-level failure of a session (a message
// too large, garbage, the server gone): the SDK reports such failures to a
// pending call only as a closed connection, and this says why.
type faults struct {
	mu  sync.Mutex
	err error
}

func (f *faults) note(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *faults) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
