package sdk

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is an answer of the API with a status of 400 or above: the RFC 9457
// problem document the server sends (application/problem+json), or what
// could be read of another body (a proxy's error page). Test for it with
// errors.As.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Type, Title and Detail are the problem document's; Detail says what
	// was wrong with the request when the server knows (the field, the id).
	Type, Title, Detail string
	// RetryAfter is the server's Retry-After (429, 503), zero when absent.
	RetryAfter time.Duration
	// Method and Path name the request.
	Method, Path string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("sdk: %s %s: %d %s", e.Method, e.Path, e.Status, e.Title)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 64 << 10

// responseError reads resp (status ≥ 400) into an *Error.
func responseError(method, path string, resp *http.Response) *Error {
	e := &Error{Status: resp.StatusCode, Method: method, Path: path}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var p Problem
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && json.Unmarshal(raw, &p) == nil && p.Title != "" {
		e.Type, e.Title, e.Detail = p.Type, p.Title, p.Detail
	} else {
		e.Title = http.StatusText(resp.StatusCode)
		e.Detail = strings.TrimSpace(string(raw))
		if len(e.Detail) > 512 {
			e.Detail = e.Detail[:512] + "…"
		}
	}
	if e.Title == "" {
		e.Title = "status " + strconv.Itoa(resp.StatusCode)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}
