package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
)

// client speaks Google's REST APIs through one connection.
type client struct {
	conn  string
	drive string // https://www.googleapis.com (Drive: /drive/v3, /upload/drive/v3)
	gmail string // https://gmail.googleapis.com (Gmail: /gmail/v1)
}

// newClient reads the connection's API root (the provider's base URL,
// https://www.googleapis.com by default). Gmail lives on
// gmail.googleapis.com beside it, on the same scheme and port; a base on
// another host (a proxy the operator set up) serves both.
func newClient(connID string) (*client, error) {
	info, err := connection.Info(connID)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(info.BaseURL, "/")
	if base == "" {
		base = "https://www.googleapis.com"
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, pdk.Errorf("invalid_connection", "connection %q has no usable API URL", info.Label)
	}
	c := &client{conn: connID, drive: base, gmail: base}
	if strings.EqualFold(u.Hostname(), "www.googleapis.com") {
		g := *u
		g.Host = "gmail.googleapis.com"
		if p := u.Port(); p != "" {
			g.Host += ":" + p
		}
		c.gmail = g.String()
	}
	return c, nil
}

// apiError is Google's error body.
type apiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Errors  []struct {
			Domain  string `json:"domain"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"errors"`
	} `json:"error"`
}

// send sends a request and returns a 2xx answer; any other status becomes
// an error carrying Google's message and reason.
func (c *client) send(method, u string, body []byte, headers map[string]string) (connection.Response, error) {
	return connection.Send(connection.Request{Connection: c.conn, Method: method, URL: u, Headers: headers, Body: body}, statusError)
}

// getJSON GETs base+path?q and decodes the JSON answer into out.
func (c *client) getJSON(base, path string, q url.Values, out any) error {
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := c.send("GET", u, nil, nil)
	if err != nil {
		return err
	}
	return decode(resp, path, out)
}

func decode(resp connection.Response, what string, out any) error {
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return pdk.Errorf("bad_response", "Google answered %s with something that is not its JSON: %v", what, err)
	}
	return nil
}

func statusError(resp connection.Response) error {
	var ge apiError
	msg, reason := "", ""
	if json.Unmarshal(resp.Body, &ge) == nil {
		msg = ge.Error.Message
		if len(ge.Error.Errors) > 0 {
			reason = ge.Error.Errors[0].Reason
		}
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", resp.Status)
	}
	if reason != "" {
		msg += " (" + reason + ")"
	}
	switch {
	case resp.Status == 429 || (resp.Status == 403 && (reason == "rateLimitExceeded" || reason == "userRateLimitExceeded")):
		wait := resp.Headers["retry-after"]
		if wait == "" {
			wait = "unknown"
		}
		return pdk.Errorf("rate_limited", "Google is throttling requests (retry after %ss): %s", wait, msg)
	case resp.Status == 404:
		return pdk.Errorf("not_found", "%s", msg)
	case resp.Status == 403 && reason == "exportSizeLimitExceeded":
		return pdk.Errorf("too_large", "Google exports documents of at most 10 MB: %s", msg)
	case resp.Status == 403:
		return pdk.Errorf("forbidden", "%s", msg)
	case resp.Status == 413:
		return pdk.Errorf("too_large", "%s", msg)
	case resp.Status == 400:
		return pdk.Errorf("invalid", "%s", msg)
	}
	return pdk.Errorf("google_error", "HTTP %d: %s", resp.Status, msg)
}
