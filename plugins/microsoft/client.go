package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
)

// defaultBase is Graph's v1.0 root, used when the connection names none.
const defaultBase = "https://graph.microsoft.com/v1.0"

const (
	// maxBytes bounds one download: the host's download limit (uploads
	// are bounded by maxUpload and stream, drive.go).
	maxBytes = 64 << 20
	// maxPages bounds the pages followed to find one thing (a library by
	// name); a listing returns one page per call.
	maxPages = 10
	// maxDepth bounds a walk up a drive's folders.
	maxDepth = 64
)

// client speaks Graph through one connection.
type client struct {
	conn string
	base string // https://graph.microsoft.com/v1.0
}

func newClient(connID string) (*client, error) {
	info, err := connection.Info(connID)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(info.BaseURL, "/")
	if base == "" {
		base = defaultBase
	}
	return &client{conn: connID, base: base}, nil
}

// pageSize is a listing's $top: the caller's limit, at most 200.
func pageSize(n int) int {
	if n <= 0 {
		return 50
	}
	return min(n, 200)
}

// get sends GET base+path?q and decodes the JSON answer into out.
func (c *client) get(path string, q url.Values, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	_, err := c.do("GET", u, nil, nil, out)
	return err
}

// do sends a request and decodes a 2xx JSON answer into out (when out is
// not nil and the answer has a body); any other status becomes an error
// carrying Graph's code and message.
func (c *client) do(method, u string, body []byte, headers map[string]string, out any) (connection.Response, error) {
	resp, err := connection.Send(connection.Request{Connection: c.conn, Method: method, URL: u, Headers: headers, Body: body}, statusError)
	if err != nil {
		return resp, err
	}
	if out != nil && resp.Status != 202 && resp.Status != 204 {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return resp, pdk.Errorf("bad_response", "Microsoft Graph answered %s %s with something that is not its JSON: %v", method, c.strip(u), err)
		}
	}
	return resp, nil
}

// strip leaves a URL's path for messages.
func (c *client) strip(u string) string {
	u = strings.TrimPrefix(u, c.base)
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return u
}

func statusError(resp connection.Response) error {
	var ge graphError
	msg := ""
	if json.Unmarshal(resp.Body, &ge) == nil && ge.Error.Code != "" {
		msg = ge.Error.Code + ": " + ge.Error.Message
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", resp.Status)
	}
	switch resp.Status {
	case 404:
		return pdk.Errorf("not_found", "%s", msg)
	case 403:
		return pdk.Errorf("forbidden", "%s", msg)
	case 429, 503:
		return pdk.Errorf("rate_limited", "Microsoft Graph is throttling requests (retry after %ss): %s", resp.Headers["retry-after"], msg)
	case 400:
		return pdk.Errorf("invalid", "%s", msg)
	case 413:
		return pdk.Errorf("too_large", "%s", msg)
	case 409:
		return pdk.Errorf("conflict", "%s", msg)
	}
	return pdk.Errorf("graph_error", "HTTP %d: %s", resp.Status, msg)
}

// next checks a cursor: it must be an @odata.nextLink on Graph's own base
// URL (scheme, host, version), so a forged one cannot send the token
// anywhere else. Its path is not checked: a next link is opaque ("Paging
// Microsoft Graph data in your app": use the entire URL as is), and Graph
// has answered one without the folder path the listing was asked by
// (OneDrive/onedrive-api-docs#774, microsoftgraph/microsoft-graph-docs#3341).
func (c *client) next(cursor string) (string, error) {
	u, err := url.Parse(cursor)
	b, berr := url.Parse(c.base)
	if err != nil || berr != nil || u.Scheme != b.Scheme || u.Host != b.Host || u.User != nil || u.Fragment != "" ||
		!strings.HasPrefix(u.Path, strings.TrimSuffix(b.Path, "/")+"/") || strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") {
		return "", pdk.Errorf("invalid_cursor", "the cursor is not a next page of Microsoft Graph; browse again from the start")
	}
	return cursor, nil
}

// list fetches one page of a collection at path: the first (with q) or
// the one cursor names.
func list[T any](c *client, path string, q url.Values, cursor string) (page[T], error) {
	var p page[T]
	if cursor == "" {
		return p, c.get(path, q, &p)
	}
	u, err := c.next(cursor)
	if err != nil {
		return p, err
	}
	_, err = c.do("GET", u, nil, nil, &p)
	return p, err
}

// top is $top for a page of at most n.
func top(n int) url.Values { return url.Values{"$top": {strconv.Itoa(pageSize(n))}} }
