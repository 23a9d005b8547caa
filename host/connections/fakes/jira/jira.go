// Package jira is a fake Jira Cloud site for tests, written from
// Atlassian's public REST documentation (platform REST v3 and Agile 1.0):
// basic authentication with an account's e-mail and API token (401
// otherwise), error bodies {"errorMessages": [...], "errors": {...}},
// enhanced JQL search paged by nextPageToken and isLast, Agile lists paged
// by startAt, maxResults and isLast, attachment content answered by a 303
// to a media URL unless redirect=false, uploads guarded by
// X-Atlassian-Token: no-check, and throttling with 429 and Retry-After.
// Jira Cloud as Atlassian now documents it: the API gateway
// /ex/jira/{cloudId} (scoped API tokens, refused on the site's URL; OAuth
// 2.0 access tokens), accessible-resources, rich text as ADF in v3 (read
// and required on write), text ~ with the text search's operators
// refused unless escaped, transitions and assignment by account id. Each
// behaviour names its document where it is implemented.
package jira

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/connections/fakes/fault"
)

// Attachment is a file on an issue.
type Attachment struct {
	ID       string
	Filename string
	MIMEType string
	Content  []byte
	Created  time.Time
}

// Issue is a Jira issue.
type Issue struct {
	ID, Key, Summary, Status, Description string
	Attachments                           []Attachment
	// DescriptionADF, when set, is the description as an Atlassian
	// Document Format document (REST v3 answers rich text only as ADF:
	// "Atlassian Document Format", developer.atlassian.com/cloud/jira/platform/apis/document/structure/);
	// otherwise Description is wrapped in one paragraph.
	DescriptionADF any
	Comments       []Comment
	Assignee       string
}

// Comment is an issue's comment; its body is an ADF document in v3.
type Comment struct {
	Author string
	Body   any
}

// Board is an Agile board and the keys of its issues.
type Board struct {
	ID     int
	Name   string
	Type   string
	Issues []string
}

// Server is the fake site.
type Server struct {
	*httptest.Server
	// Email and Token are the account and its classic API token, taken on
	// the site's own URL (https://NAME.atlassian.net).
	Email, Token string
	// CloudID is the site's id on Atlassian's API gateway: requests to
	// /ex/jira/{CloudID}/rest/... are the site's REST API (Atlassian,
	// "Manage API tokens for your Atlassian account": tokens with scopes
	// go to https://api.atlassian.com/ex/jira/{cloudId}; "OAuth 2.0 (3LO)
	// apps": https://api.atlassian.com/ex/jira/{cloudid}/{api}).
	CloudID string
	// ScopedToken is an API token with scopes (a user's or a service
	// account's), taken with Email by basic authentication on the gateway
	// only: on the site's URL it is refused with 401, as reported in
	// sooperset/mcp-atlassian#968.
	ScopedToken string
	// Bearer, when set, tells the OAuth 2.0 (3LO) access tokens the
	// gateway takes (those the test's authorisation server issued).
	Bearer func(token string) bool
	// MaxPage, when set, bounds the issues a search page answers whatever
	// maxResults asks: REST v3 "Search for issues using JQL enhanced
	// search" documents that the API "may return fewer items per page"
	// than maxResults, so a client must page by nextPageToken, never by
	// counting.
	MaxPage int
	// PAT, on a Data Center site (NewDataCenter), is the personal access
	// token it takes as a bearer token.
	PAT string
	// dc: a Data Center site, REST v2 only.
	dc bool
	mu sync.Mutex
	// attachmentLimit is the site's largest attachment in bytes, an
	// administrator's setting served by GET /rest/api/3/attachment/meta
	// ({"enabled","uploadLimit"}, "Get Jira attachment settings"); New sets
	// Cloud's documented default, 1 GB a file ("Configure file
	// attachments": default 1 GB, at most 2 GB). An upload over it is
	// refused with 413 before its body is read.
	attachmentLimit int64

	issues   []*Issue
	boards   []Board
	nextID   int
	throttle []time.Duration // Retry-After of the next requests to refuse
	garbage  fault.Countdown // next authenticated requests answered with an HTML error page
	failures fault.Countdown // next attachment content requests answered 500
	// pageFailures: next search requests for a later page (with a
	// nextPageToken, or startAt past 0 on REST v2) answered 500.
	pageFailures fault.Countdown
	requests     []string
	// onContent, when set, runs before an attachment's content is served
	// (a test's moment to act mid-download: cut a database, say).
	onContent func()
}

// New starts a site accepting email and token.
func New(email, token string) *Server {
	s := &Server{Email: email, Token: token, nextID: 10000, CloudID: "11223344-a1b2-3b33-c444-def123456789",
		ScopedToken: token + "-scoped", attachmentLimit: 1 << 30}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rest/api/3/myself", s.myself)
	mux.HandleFunc("GET /rest/api/3/issue/{key}", s.issue)
	mux.HandleFunc("GET /rest/api/3/search/jql", s.search)
	mux.HandleFunc("GET /rest/api/3/attachment/meta", s.attachmentSettings)
	mux.HandleFunc("GET /rest/api/3/attachment/{id}", s.attachmentMeta)
	mux.HandleFunc("GET /rest/api/3/attachment/content/{id}", s.attachmentContent)
	mux.HandleFunc("GET /media/file/{id}/binary", s.media)
	mux.HandleFunc("POST /rest/api/3/issue/{key}/attachments", s.upload)
	mux.HandleFunc("DELETE /rest/api/3/attachment/{id}", s.deleteAttachment)
	mux.HandleFunc("GET /rest/agile/1.0/board", s.listBoards)
	mux.HandleFunc("GET /rest/agile/1.0/board/{id}/issue", s.boardIssues)
	mux.HandleFunc("GET /oauth/token/accessible-resources", s.accessibleResources)
	mux.HandleFunc("POST /rest/api/3/issue", s.createIssue)
	mux.HandleFunc("POST /rest/api/3/issue/{key}/comment", s.addComment)
	mux.HandleFunc("GET /rest/api/3/issue/{key}/transitions", s.transitions)
	mux.HandleFunc("POST /rest/api/3/issue/{key}/transitions", s.transition)
	mux.HandleFunc("PUT /rest/api/3/issue/{key}/assignee", s.assign)
	s.Server = httptest.NewServer(s.guard(mux))
	return s
}

// NewDataCenter starts a Jira Data Center site, written from Atlassian's
// Jira Server/Data Center REST API documentation (platform REST v2,
// https://docs.atlassian.com/software/jira/docs/api/REST/latest/): a
// personal access token taken as "Authorization: Bearer <token>" ("Using
// Personal Access Tokens"), GET /rest/api/2/search paged by startAt,
// maxResults and total, descriptions and comment bodies as wiki-markup
// strings (read and required on write: an ADF object is refused), an
// assignee named by "name" (Data Center has no account ids), and no REST
// v3 at all (404).
func NewDataCenter(pat string) *Server {
	s := &Server{PAT: pat, dc: true, nextID: 10000}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rest/api/2/myself", s.myself)
	mux.HandleFunc("GET /rest/api/2/issue/{key}", s.issue)
	mux.HandleFunc("GET /rest/api/2/search", s.searchV2)
	mux.HandleFunc("GET /rest/api/2/attachment/{id}", s.attachmentMeta)
	mux.HandleFunc("GET /rest/api/2/attachment/content/{id}", s.attachmentContent)
	mux.HandleFunc("POST /rest/api/2/issue/{key}/attachments", s.upload)
	mux.HandleFunc("DELETE /rest/api/2/attachment/{id}", s.deleteAttachment)
	mux.HandleFunc("POST /rest/api/2/issue", s.createIssue)
	mux.HandleFunc("POST /rest/api/2/issue/{key}/comment", s.addComment)
	mux.HandleFunc("GET /rest/api/2/issue/{key}/transitions", s.transitions)
	mux.HandleFunc("POST /rest/api/2/issue/{key}/transitions", s.transition)
	mux.HandleFunc("PUT /rest/api/2/issue/{key}/assignee", s.assign)
	mux.HandleFunc("GET /media/file/{id}/binary", s.media)
	s.Server = httptest.NewServer(s.guard(mux))
	return s
}

// AddIssue adds an issue; attachments get ids.
func (s *Server) AddIssue(key, summary, status string, atts ...Attachment) *Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	is := &Issue{ID: strconv.Itoa(s.nextID), Key: key, Summary: summary, Status: status}
	for _, a := range atts {
		s.nextID++
		a.ID = strconv.Itoa(s.nextID)
		if a.Created.IsZero() {
			a.Created = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		}
		is.Attachments = append(is.Attachments, a)
	}
	s.issues = append(s.issues, is)
	return is
}

// AddBoard adds a board.
func (s *Server) AddBoard(b Board) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.boards = append(s.boards, b)
}

// Throttle makes the next len(after) requests answer 429 with these Retry-After values.
func (s *Server) Throttle(after ...time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle = append(s.throttle, after...)
}

// Garbage makes the next n authenticated requests answer 200 with an HTML
// page instead of JSON, as a proxy or a maintenance page does.
func (s *Server) Garbage(n int) {
	s.garbage.Add(n)
}

// FailContent makes the next n requests for an attachment's content answer
// 500 with Jira's error body, as when its media store fails mid-download.
func (s *Server) FailContent(n int) {
	s.failures.Add(n)
}

// FailNextPage makes the next n searches for a later page (carrying a
// nextPageToken, or a startAt past 0 on Data Center's REST v2) answer 500
// with Jira's error body, as when a search node fails mid-listing.
func (s *Server) FailNextPage(n int) {
	s.pageFailures.Add(n)
}

// ReplaceAttachment gives attachment id new content and a new creation
// time. Jira keeps attachments immutable (a new version is a new
// attachment); this stands in for providers whose files change in place
// (Drive, SharePoint), which a sync must notice by size and time.
func (s *Server) ReplaceAttachment(id string, content []byte, created time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.issues {
		for i := range is.Attachments {
			if is.Attachments[i].ID == id {
				is.Attachments[i].Content, is.Attachments[i].Created = content, created
				return true
			}
		}
	}
	return false
}

// Requests returns "METHOD path?query" of every request seen.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Issue returns the issue key (nil if none).
func (s *Server) Issue(key string) *Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.find(key)
}

func (s *Server) find(key string) *Issue {
	for _, is := range s.issues {
		if is.Key == key || is.ID == key {
			return is
		}
	}
	return nil
}

func jiraError(w http.ResponseWriter, status int, msgs ...string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errorMessages": msgs, "errors": map[string]string{}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

// guard records, throttles and authenticates every request but the media
// download, which carries its own token in the URL as Atlassian's does.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
		var wait time.Duration
		throttled := len(s.throttle) > 0
		if throttled {
			wait, s.throttle = s.throttle[0], s.throttle[1:]
		}
		s.mu.Unlock()
		if throttled {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
			w.Header().Set("X-RateLimit-Reason", "jira-burst-based")
			jiraError(w, http.StatusTooManyRequests, "Rate limit exceeded.")
			return
		}
		if strings.HasPrefix(r.URL.Path, "/media/") {
			next.ServeHTTP(w, r)
			return
		}
		gateway := false
		if rest, ok := strings.CutPrefix(r.URL.Path, "/ex/jira/"); ok {
			id, path, _ := strings.Cut(rest, "/")
			if id != s.CloudID {
				jiraError(w, http.StatusNotFound, "Site not found.")
				return
			}
			gateway = true
			r.URL.Path, r.URL.RawPath = "/"+path, ""
		}
		if !s.authenticated(r, gateway) {
			w.Header().Set("WWW-Authenticate", `Basic realm="protected-area"`)
			jiraError(w, http.StatusUnauthorized, "Client must be authenticated to access this resource.")
			return
		}
		if s.garbage.Take() {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><body>Service temporarily unavailable {\"isLast\": </body></html>")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticated: on the site's URL the classic API token; on the gateway
// (and for accessible-resources, which is api.atlassian.com's own) a
// scoped API token or an OAuth access token.
func (s *Server) authenticated(r *http.Request, gateway bool) bool {
	if s.dc {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && s.PAT != "" && tok == s.PAT
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return (gateway || r.URL.Path == "/oauth/token/accessible-resources") && s.Bearer != nil && s.Bearer(tok)
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != s.Email {
		return false
	}
	if gateway {
		return pass == s.ScopedToken
	}
	return pass == s.Token && r.URL.Path != "/oauth/token/accessible-resources"
}

// accessibleResources answers the sites an OAuth 2.0 (3LO) token may
// reach, as Atlassian's "OAuth 2.0 (3LO) apps" documents
// (GET https://api.atlassian.com/oauth/token/accessible-resources): each
// with its cloud id, URL, name, scopes and avatar.
func (s *Server) accessibleResources(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, []any{map[string]any{"id": s.CloudID, "url": "https://acme.atlassian.net", "name": "acme",
		"scopes": []string{"read:jira-work", "write:jira-work", "read:jira-user"}, "avatarUrl": "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png"}})
}

// isADF: v3 takes rich text only as an ADF document ({"type": "doc",
// "version": 1, "content": [...]}); a string is refused with 400 and
// "Operation value must be an Atlassian Document" (REST v3 "Create issue",
// "Add comment": the description and body are ADF).
func isADF(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || m["type"] != "doc" || m["version"] != float64(1) {
		return false
	}
	_, ok = m["content"].([]any)
	return ok
}

// richOK: rich text as the site's API takes it, ADF on Cloud's v3, a
// wiki-markup string on Data Center's v2.
func (s *Server) richOK(v any) bool {
	if s.dc {
		_, ok := v.(string)
		return ok
	}
	return isADF(v)
}

func (s *Server) richRefused(w http.ResponseWriter, field string) {
	if !s.dc {
		adfRefused(w, field)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"errorMessages": []string{}, "errors": map[string]string{field: "Operation value must be a string"}})
}

func adfRefused(w http.ResponseWriter, field string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"errorMessages": []string{}, "errors": map[string]string{field: "Operation value must be an Atlassian Document (see the Atlassian Document Format)"}})
}

// createIssue is REST v3 "Create issue": fields project (by key),
// issuetype (by name), summary and an ADF description; 201 {id, key, self}.
func (s *Server) createIssue(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fields map[string]any `json:"fields"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		jiraError(w, http.StatusBadRequest, "Unexpected character in the request body.")
		return
	}
	proj, _ := req.Fields["project"].(map[string]any)
	key, _ := proj["key"].(string)
	summary, _ := req.Fields["summary"].(string)
	if key == "" || summary == "" {
		jiraError(w, http.StatusBadRequest, "project and summary are required")
		return
	}
	if d, ok := req.Fields["description"]; ok && !s.richOK(d) {
		s.richRefused(w, "description")
		return
	}
	s.mu.Lock()
	n := 1
	for _, is := range s.issues {
		if strings.HasPrefix(is.Key, key+"-") {
			n++
		}
	}
	s.nextID++
	is := &Issue{ID: strconv.Itoa(s.nextID), Key: key + "-" + strconv.Itoa(n), Summary: summary, Status: "To Do"}
	if d, ok := req.Fields["description"].(string); ok && s.dc {
		is.Description = d
	} else {
		is.DescriptionADF = req.Fields["description"]
	}
	s.issues = append(s.issues, is)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"id": is.ID, "key": is.Key, "self": s.URL + "/rest/api/3/issue/" + is.ID})
}

// addComment is REST v3 "Add comment": an ADF body; 201 with the comment.
func (s *Server) addComment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Body any `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		jiraError(w, http.StatusBadRequest, "Unexpected character in the request body.")
		return
	}
	if !s.richOK(req.Body) {
		s.richRefused(w, "comment")
		return
	}
	s.mu.Lock()
	is := s.find(r.PathValue("key"))
	if is != nil {
		is.Comments = append(is.Comments, Comment{Author: "Test User", Body: req.Body})
	}
	n := 0
	if is != nil {
		n = len(is.Comments)
	}
	s.mu.Unlock()
	if is == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"id": strconv.Itoa(20000 + n - 1), "body": req.Body})
}

// workflow is the fake's one workflow: REST v3 "Get transitions" answers
// each transition's id, name and target status.
var workflow = []struct{ ID, Name, To string }{{"11", "To Do", "To Do"}, {"21", "Start progress", "In Progress"}, {"31", "Done", "Done"}}

func (s *Server) transitions(w http.ResponseWriter, r *http.Request) {
	if s.Issue(r.PathValue("key")) == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
		return
	}
	ts := []any{}
	for _, t := range workflow {
		ts = append(ts, map[string]any{"id": t.ID, "name": t.Name, "to": map[string]any{"name": t.To}})
	}
	writeJSON(w, map[string]any{"transitions": ts})
}

// transition is REST v3 "Transition issue": {"transition": {"id"}}; 204.
func (s *Server) transition(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Transition struct {
			ID string `json:"id"`
		} `json:"transition"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.find(r.PathValue("key"))
	if is == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
		return
	}
	for _, t := range workflow {
		if t.ID == req.Transition.ID {
			is.Status = t.To
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	jiraError(w, http.StatusBadRequest, "Transition id '"+req.Transition.ID+"' is not valid for this issue.")
}

// assign is REST v3 "Assign issue": {"accountId": "..."} (null
// unassigns; Cloud takes no user names); 204.
func (s *Server) assign(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		jiraError(w, http.StatusBadRequest, "Unexpected character in the request body.")
		return
	}
	field := "accountId"
	if s.dc {
		field = "name" // Data Center names users; it has no account ids
	}
	id, ok := req[field]
	if !ok {
		jiraError(w, http.StatusBadRequest, field+" is required.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.find(r.PathValue("key"))
	if is == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
		return
	}
	is.Assignee, _ = id.(string)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) myself(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"accountId": "5b10a2844c20165700ede21g", "emailAddress": s.Email, "displayName": "Test User", "active": true})
}

func (s *Server) issueJSON(is *Issue) map[string]any {
	atts := []map[string]any{}
	for _, a := range is.Attachments {
		atts = append(atts, s.attachmentJSON(a))
	}
	desc := is.DescriptionADF
	if desc == nil {
		desc = adf(is.Description)
	}
	if s.dc {
		// v2: the description is its wiki markup, as written.
		desc = nil
		if is.Description != "" {
			desc = is.Description
		}
	}
	comments := []any{}
	for i, c := range is.Comments {
		comments = append(comments, map[string]any{"id": strconv.Itoa(20000 + i), "author": map[string]any{"displayName": c.Author, "accountId": "5b10ac8d82e05b22cc7d4ef" + strconv.Itoa(i)},
			"body": c.Body, "created": "2026-03-02T10:00:00.000+0000"})
	}
	var assignee any
	if is.Assignee != "" {
		assignee = map[string]any{"displayName": is.Assignee}
	}
	// The issue's comment field is a page of comments (Jira REST v3 "Get issue", fields=comment).
	return map[string]any{"id": is.ID, "key": is.Key, "self": s.URL + "/rest/api/" + s.api() + "/issue/" + is.ID,
		"fields": map[string]any{"summary": is.Summary, "status": map[string]any{"name": is.Status}, "attachment": atts,
			"description": desc, "assignee": assignee,
			"comment": map[string]any{"comments": comments, "maxResults": len(comments), "total": len(comments), "startAt": 0}}}
}

// adf wraps text in an Atlassian Document Format document, as v3 answers rich text.
func adf(text string) any {
	if text == "" {
		return nil
	}
	return map[string]any{"type": "doc", "version": 1, "content": []any{map[string]any{"type": "paragraph",
		"content": []any{map[string]any{"type": "text", "text": text}}}}}
}

func (s *Server) api() string {
	if s.dc {
		return "2"
	}
	return "3"
}

func (s *Server) attachmentJSON(a Attachment) map[string]any {
	return map[string]any{"id": a.ID, "filename": a.Filename, "mimeType": a.MIMEType, "size": len(a.Content),
		"created": a.Created.Format("2006-01-02T15:04:05.000-0700"), "self": s.URL + "/rest/api/" + s.api() + "/attachment/" + a.ID,
		"content": s.URL + "/rest/api/" + s.api() + "/attachment/content/" + a.ID}
}

func (s *Server) issue(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.find(r.PathValue("key"))
	if is == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
		return
	}
	writeJSON(w, s.issueJSON(is))
}

var (
	textClause    = regexp.MustCompile(`(?i)^text\s*~\s*"((?:[^"\\]|\\.)*)"$`)
	projectClause = regexp.MustCompile(`(?i)^project\s*=\s*"?([A-Z][A-Z0-9_]*)"?$`)
	orderBy       = regexp.MustCompile(`(?i)\s*order\s+by\s+.*$`)
)

// matcher reads the JQL forms the fake knows: text ~ "..." and project =
// KEY (optionally with ORDER BY, ignored); ok false when it answered an
// error.
func matcher(w http.ResponseWriter, raw string) (match func(*Issue) bool, ok bool) {
	jql := strings.TrimSpace(orderBy.ReplaceAllString(raw, ""))
	switch {
	case jql == "":
		jiraError(w, http.StatusBadRequest, "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.")
		return nil, false
	case textClause.MatchString(jql):
		needle, err := textTerm(textClause.FindStringSubmatch(jql)[1])
		if err != nil {
			jiraError(w, http.StatusBadRequest, "Error in the JQL Query: "+err.Error())
			return nil, false
		}
		needle = strings.ToLower(needle)
		return func(is *Issue) bool {
			return strings.Contains(strings.ToLower(is.Summary+" "+is.Description), needle)
		}, true
	case projectClause.MatchString(jql):
		key := projectClause.FindStringSubmatch(jql)[1]
		return func(is *Issue) bool { return strings.HasPrefix(is.Key, key+"-") }, true
	}
	jiraError(w, http.StatusBadRequest, fmt.Sprintf("Error in the JQL Query: the query %q is not supported by this site.", jql))
	return nil, false
}

// searchV2 is Data Center's GET /rest/api/2/search: startAt and
// maxResults (default 50), answered with startAt, maxResults, total and
// the page's issues; a client pages until startAt + its issues reach
// total.
func (s *Server) searchV2(w http.ResponseWriter, r *http.Request) {
	match, ok := matcher(w, r.URL.Query().Get("jql"))
	if !ok {
		return
	}
	start, max, ok := page(w, r)
	if !ok {
		return
	}
	if s.MaxPage > 0 {
		max = min(max, s.MaxPage)
	}
	if start > 0 && s.pageFailures.Take() {
		jiraError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	s.mu.Lock()
	var hits []*Issue
	for _, is := range s.issues {
		if match(is) {
			hits = append(hits, is)
		}
	}
	out := []any{}
	for i := start; i < len(hits) && i < start+max; i++ {
		out = append(out, s.issueJSON(hits[i]))
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"expand": "schema,names", "startAt": start, "maxResults": max, "total": len(hits), "issues": out})
}

// search serves the enhanced JQL search: the JQL forms matcher knows,
// pages by nextPageToken.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	match, ok := matcher(w, q.Get("jql"))
	if !ok {
		return
	}
	max := 50
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			jiraError(w, http.StatusBadRequest, "maxResults must be a non-negative number.")
			return
		}
		max = min(n, 5000)
	}
	start := 0
	if tok := q.Get("nextPageToken"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "page-"))
		if err != nil || !strings.HasPrefix(tok, "page-") {
			jiraError(w, http.StatusBadRequest, "Invalid nextPageToken.")
			return
		}
		start = n
		if s.pageFailures.Take() {
			jiraError(w, http.StatusInternalServerError, "Internal server error")
			return
		}
	}
	if s.MaxPage > 0 {
		max = min(max, s.MaxPage)
	}
	s.mu.Lock()
	var hits []*Issue
	for _, is := range s.issues {
		if match(is) {
			hits = append(hits, is)
		}
	}
	out := map[string]any{"issues": []any{}, "isLast": true}
	page := []any{}
	for i := start; i < len(hits) && i < start+max; i++ {
		page = append(page, s.issueJSON(hits[i]))
	}
	s.mu.Unlock()
	out["issues"] = page
	if start+max < len(hits) {
		out["isLast"] = false
		out["nextPageToken"] = "page-" + strconv.Itoa(start+max)
	}
	writeJSON(w, out)
}

// luceneSpecial are the characters Jira's text search reads as operators
// (Atlassian, "Search syntax for text fields": + - & | ! ( ) { } [ ] ^ ~ * ?
// \ : and the phrase quote), to be escaped with a backslash in the search
// text, that is two in the JQL string.
const luceneSpecial = `+-&|!(){}[]^~*?\:"`

// textTerm reads the body of a JQL string given to text ~: first the JQL
// string escapes (\" \\ \n \t \r, per Atlassian's "JQL: fields, operators
// and keywords": a quote or backslash inside a string is escaped), then
// the text search's: an escaped special character is itself, an unescaped
// one an operator. The fake has no Lucene operators, so it refuses them as
// Jira refuses a query that misuses them, instead of guessing.
func textTerm(quoted string) (string, error) {
	var lit []rune
	rs := []rune(quoted)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '\\' {
			lit = append(lit, rs[i])
			continue
		}
		i++
		if i == len(rs) {
			return "", fmt.Errorf("the string ends in a lone backslash")
		}
		switch rs[i] {
		case '"', '\'', '\\', ' ':
			lit = append(lit, rs[i])
		case 'n':
			lit = append(lit, '\n')
		case 't':
			lit = append(lit, '\t')
		case 'r':
			lit = append(lit, '\r')
		default:
			return "", fmt.Errorf("'\\%c' is an illegal JQL escape sequence", rs[i])
		}
	}
	var out []rune
	for i := 0; i < len(lit); i++ {
		switch {
		case lit[i] == '\\' && i+1 < len(lit):
			i++
			out = append(out, lit[i])
		case strings.ContainsRune(luceneSpecial, lit[i]):
			return "", fmt.Errorf("the text search reads %q as an operator; escape it with two backslashes to search for it", lit[i])
		default:
			out = append(out, lit[i])
		}
	}
	return string(out), nil
}

func (s *Server) attachment(id string) (Attachment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.issues {
		for _, a := range is.Attachments {
			if a.ID == id {
				return a, true
			}
		}
	}
	return Attachment{}, false
}

func (s *Server) attachmentMeta(w http.ResponseWriter, r *http.Request) {
	a, ok := s.attachment(r.PathValue("id"))
	if !ok {
		jiraError(w, http.StatusNotFound, "The attachment with id '"+r.PathValue("id")+"' does not exist")
		return
	}
	writeJSON(w, s.attachmentJSON(a))
}

// OnContent runs f before each attachment content request is served; nil
// stops it.
func (s *Server) OnContent(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onContent = f
}

func (s *Server) attachmentContent(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	hook := s.onContent
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	if s.failures.Take() {
		jiraError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	a, ok := s.attachment(r.PathValue("id"))
	if !ok {
		jiraError(w, http.StatusNotFound, "The attachment with id '"+r.PathValue("id")+"' does not exist")
		return
	}
	if r.URL.Query().Get("redirect") != "false" {
		http.Redirect(w, r, s.URL+"/media/file/"+a.ID+"/binary?token=media-"+a.ID, http.StatusSeeOther)
		return
	}
	serveFile(w, a)
}

func (s *Server) media(w http.ResponseWriter, r *http.Request) {
	a, ok := s.attachment(r.PathValue("id"))
	if !ok || r.URL.Query().Get("token") != "media-"+a.ID {
		jiraError(w, http.StatusUnauthorized, "Invalid media token.")
		return
	}
	serveFile(w, a)
}

func serveFile(w http.ResponseWriter, a Attachment) {
	w.Header().Set("Content-Type", a.MIMEType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+a.Filename+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Content)))
	_, _ = w.Write(a.Content)
}

// SetAttachmentLimit sets the site's attachment limit in bytes.
func (s *Server) SetAttachmentLimit(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attachmentLimit = n
}

func (s *Server) limit() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attachmentLimit
}

// attachmentSettings is GET /rest/api/3/attachment/meta.
func (s *Server) attachmentSettings(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"enabled": true, "uploadLimit": s.limit()})
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Atlassian-Token") != "no-check" {
		jiraError(w, http.StatusForbidden, "XSRF check failed")
		return
	}
	if r.ContentLength > s.limit() {
		jiraError(w, http.StatusRequestEntityTooLarge, "The attachment is larger than the site's limit.")
		return
	}
	// Parts beyond 32 MiB go to temporary files, as a server would.
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		jiraError(w, http.StatusBadRequest, "The request is not multipart/form-data.")
		return
	}
	defer r.MultipartForm.RemoveAll()
	s.mu.Lock()
	is := s.find(r.PathValue("key"))
	s.mu.Unlock()
	if is == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
		return
	}
	var out []any
	for _, fh := range r.MultipartForm.File["file"] {
		f, err := fh.Open()
		if err != nil {
			jiraError(w, http.StatusBadRequest, err.Error())
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		s.mu.Lock()
		s.nextID++
		a := Attachment{ID: strconv.Itoa(s.nextID), Filename: fh.Filename, MIMEType: fh.Header.Get("Content-Type"), Content: b, Created: time.Now().UTC()}
		is.Attachments = append(is.Attachments, a)
		s.mu.Unlock()
		out = append(out, s.attachmentJSON(a))
	}
	if len(out) == 0 {
		jiraError(w, http.StatusBadRequest, "No file was attached: send the part \"file\".")
		return
	}
	writeJSON(w, out)
}

// page reads startAt and maxResults (Agile: maxResults defaults to 50).
func page(w http.ResponseWriter, r *http.Request) (int, int, bool) {
	start, max := 0, 50
	for name, dst := range map[string]*int{"startAt": &start, "maxResults": &max} {
		if v := r.URL.Query().Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				jiraError(w, http.StatusBadRequest, name+" must be a non-negative number.")
				return 0, 0, false
			}
			*dst = n
		}
	}
	return start, min(max, 50), true
}

func (s *Server) listBoards(w http.ResponseWriter, r *http.Request) {
	start, max, ok := page(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	values := []any{}
	for i := start; i < len(s.boards) && i < start+max; i++ {
		b := s.boards[i]
		values = append(values, map[string]any{"id": b.ID, "name": b.Name, "type": b.Type, "self": s.URL + "/rest/agile/1.0/board/" + strconv.Itoa(b.ID)})
	}
	total := len(s.boards)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"maxResults": max, "startAt": start, "total": total, "isLast": start+max >= total, "values": values})
}

func (s *Server) boardIssues(w http.ResponseWriter, r *http.Request) {
	start, max, ok := page(w, r)
	if !ok {
		return
	}
	id, _ := strconv.Atoi(r.PathValue("id"))
	s.mu.Lock()
	defer s.mu.Unlock()
	var b *Board
	for i := range s.boards {
		if s.boards[i].ID == id {
			b = &s.boards[i]
		}
	}
	if b == nil {
		jiraError(w, http.StatusNotFound, "Board does not exist or you do not have permission to see it.")
		return
	}
	issues := []any{}
	for i := start; i < len(b.Issues) && i < start+max; i++ {
		if is := s.find(b.Issues[i]); is != nil {
			issues = append(issues, s.issueJSON(is))
		}
	}
	writeJSON(w, map[string]any{"maxResults": max, "startAt": start, "total": len(b.Issues), "issues": issues})
}
