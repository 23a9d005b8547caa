// Package google is a fake of Google's Drive v3 and Gmail v1 REST APIs
// for tests, written from Google's public API documentation (the
// reference pages of files.list, files.get, files.export, files.create,
// the Drive search-query terms, users.messages.list/get/send and
// users.labels.list, and the "Resolve errors" guides). It speaks the wire
// format: Bearer tokens checked against an OAuth server (401 with Google's
// error body otherwise), error bodies {"error": {"code", "message",
// "errors": [{"domain", "reason", "message", ...}], "status"}}, Drive's
// q language (the subset a connector needs), pageSize/pageToken paging,
// the fields selector, alt=media downloads, exports of Google-native
// documents (10 MB limit), multipart and resumable uploads; Gmail's
// messages paged by maxResults/pageToken, formats full, metadata, minimal
// and raw with base64url bodies, sending a raw RFC 2822 message (which
// then carries the SENT label), and labels. Knobs provoke throttling (429
// or 403 rateLimitExceeded, with Retry-After), garbage answers and a page
// echoing the credential; what it received (requests, Authorization
// headers, uploads, sent mail) can be inspected.
//
// Drive is served under /drive/v3 and /upload/drive/v3 (www.googleapis.com)
// and Gmail under /gmail/v1 (gmail.googleapis.com); one listener serves
// both, and Requests records the Host each request named.
package google

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/connections/fakes/fault"
)

// Request is one request the fake received.
type Request struct {
	Method, Host, Path, Query string
	// Authorization is the header as received.
	Authorization string
}

// Server is the fake Google API front end.
type Server struct {
	*httptest.Server
	// Valid says whether an access token is accepted (fakes/oauth's Valid).
	Valid func(token string) bool
	// Account is the mailbox's address (Gmail's "me").
	Account string
	// MaxPage, when set, bounds the files a files.list page answers
	// whatever pageSize asks: Drive API v3 "files.list" documents
	// pageSize as a maximum ("Partial or empty result pages are possible
	// even before the end of the files list has been reached").
	MaxPage int

	mu sync.Mutex
	// exportLimit bounds an export (Google: 10 MB); multipartLimit a
	// multipart upload's media (Google documents multipart for files of
	// 5 MB or less; larger ones go resumable).
	exportLimit, multipartLimit int
	files                       map[string]*File
	order                       []string
	seq                         int
	msgs                        []*Message
	labels                      []Label
	sessions                    map[string]*session
	uploads                     []File
	sent                        []Message
	throttle                    []throttle
	garbage                     fault.Countdown
	echo                        fault.Countdown
	failPuts                    fault.Countdown
	pageFailures                fault.Countdown // next files.list with a pageToken answered 500
	driveOff                    bool            // the Drive API is not enabled in the client's project
	chunks, failChunk           int             // resumable.go
	requests                    []Request
}

type throttle struct {
	status int
	after  time.Duration
}

// New starts a fake whose tokens valid accepts, for the mailbox account.
func New(valid func(string) bool, account string) *Server {
	s := &Server{Valid: valid, Account: account, exportLimit: 10 << 20, multipartLimit: 5 << 20,
		files: map[string]*File{}, sessions: map[string]*session{}}
	s.files[RootID] = &File{ID: RootID, Name: "My Drive", MIMEType: FolderType, Modified: epoch}
	for _, id := range []string{"INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "CATEGORY_PERSONAL"} {
		s.labels = append(s.labels, Label{ID: id, Name: id, Type: "system"})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /drive/v3/about", s.about)
	mux.HandleFunc("GET /drive/v3/files", s.listFiles)
	mux.HandleFunc("GET /drive/v3/files/{id}", s.getFile)
	mux.HandleFunc("GET /drive/v3/files/{id}/export", s.exportFile)
	mux.HandleFunc("POST /upload/drive/v3/files", s.createFile)
	mux.HandleFunc("PUT /upload/drive/v3/files", s.resumeUpload)
	mux.HandleFunc("PATCH /upload/drive/v3/files/{id}", s.updateFile)
	mux.HandleFunc("PUT /upload/drive/v3/files/{id}", s.resumeUpload)
	mux.HandleFunc("GET /gmail/v1/users/{user}/messages", s.listMessages)
	mux.HandleFunc("GET /gmail/v1/users/{user}/messages/{id}", s.getMessage)
	mux.HandleFunc("POST /gmail/v1/users/{user}/messages/send", s.sendMessage)
	mux.HandleFunc("GET /gmail/v1/users/{user}/labels", s.listLabels)
	mux.HandleFunc("GET /gmail/v1/users/{user}/profile", s.profile)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		googleError(w, http.StatusNotFound, "global", "notFound", "The requested URL "+r.URL.Path+" was not found on this server.", "NOT_FOUND")
	})
	s.Server = httptest.NewServer(s.guard(mux))
	return s
}

var epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// SetExportLimit changes the largest export (Google: 10 MB).
func (s *Server) SetExportLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exportLimit = n
}

// Throttle makes the next len(after) authenticated requests answer status
// (429, or 403 as Drive's rateLimitExceeded) with these Retry-After values.
func (s *Server) Throttle(status int, after ...time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range after {
		s.throttle = append(s.throttle, throttle{status, a})
	}
}

// Garbage makes the next n authenticated requests answer 200 with an HTML
// page instead of JSON, as a captive proxy or a maintenance page does.
func (s *Server) Garbage(n int) {
	s.garbage.Add(n)
}

// FailUploads makes the next n resumable-session PUTs answer 503
// backendError: the session's file is not created.
func (s *Server) FailUploads(n int) {
	s.failPuts.Add(n)
}

// EchoCredential makes the next n file contents (alt=media or export) the
// Authorization header the request carried, as a hostile page would.
func (s *Server) EchoCredential(n int) {
	s.echo.Add(n)
}

// DisableDrive answers every Drive request 403 accessNotConfigured, as
// Google does when the OAuth client's Cloud project has not enabled the
// Drive API ("Resolve errors": 403 "Drive API has not been used in
// project … before or it is disabled"; reason accessNotConfigured,
// status PERMISSION_DENIED). Gmail still answers.
func (s *Server) DisableDrive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.driveOff = true
}

// about is Drive v3 "about.get": the fields parameter is required
// (answered 400 without it); user is the signed-in user (kind
// drive#user, displayName, emailAddress, me, permissionId).
func (s *Server) about(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("fields") == "" {
		googleError(w, http.StatusBadRequest, "global", "required", "The 'fields' parameter is required for this method.", "INVALID_ARGUMENT", "parameter", "fields")
		return
	}
	writeJSON(w, map[string]any{"kind": "drive#about", "user": map[string]any{"kind": "drive#user", "displayName": strings.Split(s.Account, "@")[0],
		"emailAddress": s.Account, "me": true, "permissionId": "00112233445566778899"}})
}

// FailNextPage makes the next n files.list requests for a later page
// (with a pageToken) answer 500 backendError, which Drive's "Resolve
// errors" says to retry with exponential backoff.
func (s *Server) FailNextPage(n int) {
	s.pageFailures.Add(n)
}

// Requests returns every request received.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Authorizations returns the Authorization headers received.
func (s *Server) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.Authorization
	}
	return out
}

// ErrorBody is Google's error document.
type ErrorBody struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Errors  []struct {
			Domain       string `json:"domain"`
			Reason       string `json:"reason"`
			Message      string `json:"message"`
			Location     string `json:"location,omitempty"`
			LocationType string `json:"locationType,omitempty"`
		} `json:"errors"`
		Status string `json:"status,omitempty"`
	} `json:"error"`
}

// googleError writes Google's error body.
func googleError(w http.ResponseWriter, code int, domain, reason, msg, status string, location ...string) {
	var b ErrorBody
	b.Error.Code, b.Error.Message, b.Error.Status = code, msg, status
	b.Error.Errors = append(b.Error.Errors, struct {
		Domain       string `json:"domain"`
		Reason       string `json:"reason"`
		Message      string `json:"message"`
		Location     string `json:"location,omitempty"`
		LocationType string `json:"locationType,omitempty"`
	}{Domain: domain, Reason: reason, Message: msg})
	if len(location) == 2 {
		b.Error.Errors[0].LocationType, b.Error.Errors[0].Location = location[0], location[1]
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Vary", "Origin, X-Origin, Referer")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(b)
}

// invalid is a 400 on a parameter.
func invalid(w http.ResponseWriter, param, msg string) {
	googleError(w, http.StatusBadRequest, "global", "invalid", msg, "INVALID_ARGUMENT", "parameter", param)
}

func notFound(w http.ResponseWriter, msg, param string) {
	googleError(w, http.StatusNotFound, "global", "notFound", msg, "NOT_FOUND", "parameter", param)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

// guard records the request, checks the Bearer token, then applies the
// throttling and garbage knobs.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.RawQuery, Authorization: auth})
		s.mu.Unlock()
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || tok == "" || s.Valid == nil || !s.Valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
			googleError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials", "UNAUTHENTICATED", "header", "Authorization")
			return
		}
		s.mu.Lock()
		var th *throttle
		if len(s.throttle) > 0 {
			t := s.throttle[0]
			s.throttle, th = s.throttle[1:], &t
		}
		s.mu.Unlock()
		// A throttled request is not also garbage: the fault waits.
		garbage := th == nil && s.garbage.Take()
		if th != nil {
			w.Header().Set("Retry-After", strconv.Itoa(int(th.after.Seconds())))
			if th.status == http.StatusForbidden {
				googleError(w, http.StatusForbidden, "usageLimits", "rateLimitExceeded", "Rate Limit Exceeded", "PERMISSION_DENIED")
				return
			}
			googleError(w, http.StatusTooManyRequests, "usageLimits", "rateLimitExceeded", "Rate Limit Exceeded", "RESOURCE_EXHAUSTED")
			return
		}
		s.mu.Lock()
		off := s.driveOff && strings.HasPrefix(r.URL.Path, "/drive/")
		s.mu.Unlock()
		if off {
			googleError(w, http.StatusForbidden, "usageLimits", "accessNotConfigured",
				"Google Drive API has not been used in project 123456789012 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/drive.googleapis.com/overview?project=123456789012 then retry.",
				"PERMISSION_DENIED")
			return
		}
		if garbage {
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Error 502 (Server Error)!!1</title></head><body><p>That's an error.</p></body></html>")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// echoed reports whether this content answer is to echo the credential.
func (s *Server) echoed(w http.ResponseWriter, r *http.Request) bool {
	if !s.echo.Take() {
		return false
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, "you sent: "+r.Header.Get("Authorization"))
	return true
}
