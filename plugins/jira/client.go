package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
)

// client speaks Jira's REST API through one connection: Cloud's v3, or
// Data Center's v2 (the connection's deployment, else its site's name).
type client struct {
	conn string
	base string // https://NAME.atlassian.net, or https://api.atlassian.com/ex/jira/{cloudId}
	// site is where people open issues (https://NAME.atlassian.net); it
	// is unknown through the gateway, whose URL is an API root only.
	site string
	// cloud: Jira Cloud (a site on atlassian.net or the gateway), not
	// Data Center or Server.
	cloud bool
}

func newClient(connID string) (*client, error) {
	info, err := connection.Info(connID)
	if err != nil {
		return nil, err
	}
	if info.BaseURL == "" {
		return nil, pdk.Errorf("invalid_connection", "connection %q has no Jira site URL", info.Label)
	}
	c := &client{conn: connID, base: strings.TrimSuffix(info.BaseURL, "/")}
	// Scoped API tokens, service accounts and OAuth 2.0 (3LO) reach the
	// site through Atlassian's gateway, https://api.atlassian.com/ex/jira/{cloudId}
	// (Atlassian, "Manage API tokens for your Atlassian account").
	if !strings.Contains(c.base, "/ex/jira/") {
		c.site = c.base
	}
	switch info.Deployment {
	case "cloud":
		c.cloud = true
	case "datacenter":
		// Data Center and Server: REST v2 (search paged by startAt,
		// descriptions as wiki markup text), whatever the site's name.
	default:
		if u, err := url.Parse(c.base); err == nil {
			h := u.Hostname()
			c.cloud = strings.HasSuffix(h, ".atlassian.net") || h == "api.atlassian.com"
		}
	}
	return c, nil
}

// api is the platform REST version: 3 on Jira Cloud (rich text as ADF),
// 2 on Data Center and Server, which have no v3.
func (c *client) api() string {
	if c.cloud {
		return "3"
	}
	return "2"
}

// browseURL is the page for people, when the site is known.
func (c *client) browseURL(key string) string {
	if c.site == "" {
		return ""
	}
	return c.site + "/browse/" + key
}

// jiraError is Jira's error body.
type jiraError struct {
	ErrorMessages []string          `json:"errorMessages"`
	Errors        map[string]string `json:"errors"`
}

// do sends a request and decodes a 2xx JSON answer into out; any other
// status becomes an error carrying Jira's messages.
func (c *client) do(method, path string, q url.Values, body []byte, headers map[string]string, out any) ([]byte, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := connection.Send(connection.Request{Connection: c.conn, Method: method, URL: u, Headers: headers, Body: body}, statusError)
	if err != nil {
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return nil, pdk.Errorf("bad_response", "Jira answered %s %s with something that is not its JSON: %v", method, path, err)
		}
	}
	return resp.Body, nil
}

func statusError(resp connection.Response) error {
	var je jiraError
	msg := ""
	if json.Unmarshal(resp.Body, &je) == nil {
		parts := append([]string(nil), je.ErrorMessages...)
		for k, v := range je.Errors {
			parts = append(parts, k+": "+v)
		}
		msg = strings.Join(parts, "; ")
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", resp.Status)
	}
	switch resp.Status {
	case 404:
		return pdk.Errorf("not_found", "%s", msg)
	case 403:
		return pdk.Errorf("forbidden", "%s", msg)
	case 429:
		return pdk.Errorf("rate_limited", "Jira is throttling requests (retry after %ss): %s", resp.Headers["retry-after"], msg)
	case 400:
		return pdk.Errorf("invalid", "%s", msg)
	}
	return pdk.Errorf("jira_error", "HTTP %d: %s", resp.Status, msg)
}

// multipartFile is the body Jira's attachment upload takes (part
// "file"): a head and a tail around the file, which the host streams from
// the upload.
func multipartFile(name, mimeType string, size int64) ([]connection.Part, string) {
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	h.Set("Content-Type", mimeType)
	// Writes to a bytes.Buffer do not fail.
	_, _ = w.CreatePart(h)
	tail := "\r\n--" + w.Boundary() + "--\r\n"
	return []connection.Part{connection.Bytes(head.Bytes()), connection.Upload(0, size), connection.Bytes([]byte(tail))}, w.FormDataContentType()
}
