// Package jira is a fake Jira Cloud site for tests, written from
// Atlassian's public REST documentation (platform REST v3 and Agile 1.0):
// basic authentication with an account's e-mail and API token (401
// otherwise), error bodies {"errorMessages": [...], "errors": {...}},
// enhanced JQL search paged by nextPageToken and isLast, Agile lists paged
// by startAt, maxResults and isLast, attachment content answered by a 303
// to a media URL unless redirect=false, uploads guarded by
// X-Atlassian-Token: no-check, and throttling with 429 and Retry-After.
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
	Email, Token string

	mu       sync.Mutex
	issues   []*Issue
	boards   []Board
	nextID   int
	throttle []time.Duration // Retry-After of the next requests to refuse
	garbage  fault.Countdown // next authenticated requests answered with an HTML error page
	failures fault.Countdown // next attachment content requests answered 500
	requests []string
	// onContent, when set, runs before an attachment's content is served
	// (a test's moment to act mid-download: cut a database, say).
	onContent func()
}

// New starts a site accepting email and token.
func New(email, token string) *Server {
	s := &Server{Email: email, Token: token, nextID: 10000}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rest/api/3/myself", s.myself)
	mux.HandleFunc("GET /rest/api/3/issue/{key}", s.issue)
	mux.HandleFunc("GET /rest/api/3/search/jql", s.search)
	mux.HandleFunc("GET /rest/api/3/attachment/{id}", s.attachmentMeta)
	mux.HandleFunc("GET /rest/api/3/attachment/content/{id}", s.attachmentContent)
	mux.HandleFunc("GET /media/file/{id}/binary", s.media)
	mux.HandleFunc("POST /rest/api/3/issue/{key}/attachments", s.upload)
	mux.HandleFunc("DELETE /rest/api/3/attachment/{id}", s.deleteAttachment)
	mux.HandleFunc("GET /rest/agile/1.0/board", s.listBoards)
	mux.HandleFunc("GET /rest/agile/1.0/board/{id}/issue", s.boardIssues)
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
		user, pass, ok := r.BasicAuth()
		if !ok || user != s.Email || pass != s.Token {
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

func (s *Server) myself(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"accountId": "5b10a2844c20165700ede21g", "emailAddress": s.Email, "displayName": "Test User", "active": true})
}

func (s *Server) issueJSON(is *Issue) map[string]any {
	atts := []map[string]any{}
	for _, a := range is.Attachments {
		atts = append(atts, s.attachmentJSON(a))
	}
	return map[string]any{"id": is.ID, "key": is.Key, "self": s.URL + "/rest/api/3/issue/" + is.ID,
		"fields": map[string]any{"summary": is.Summary, "status": map[string]any{"name": is.Status}, "attachment": atts,
			"description": adf(is.Description)}}
}

// adf wraps text in an Atlassian Document Format document, as v3 answers rich text.
func adf(text string) any {
	if text == "" {
		return nil
	}
	return map[string]any{"type": "doc", "version": 1, "content": []any{map[string]any{"type": "paragraph",
		"content": []any{map[string]any{"type": "text", "text": text}}}}}
}

func (s *Server) attachmentJSON(a Attachment) map[string]any {
	return map[string]any{"id": a.ID, "filename": a.Filename, "mimeType": a.MIMEType, "size": len(a.Content),
		"created": a.Created.Format("2006-01-02T15:04:05.000-0700"), "self": s.URL + "/rest/api/3/attachment/" + a.ID,
		"content": s.URL + "/rest/api/3/attachment/content/" + a.ID}
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

// search serves the enhanced JQL search: the JQL forms text ~ "..." and
// project = KEY (optionally with ORDER BY, ignored), pages by nextPageToken.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	jql := strings.TrimSpace(orderBy.ReplaceAllString(q.Get("jql"), ""))
	var match func(*Issue) bool
	switch {
	case jql == "":
		jiraError(w, http.StatusBadRequest, "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.")
		return
	case textClause.MatchString(jql):
		needle := strings.ToLower(strings.ReplaceAll(textClause.FindStringSubmatch(jql)[1], `\"`, `"`))
		match = func(is *Issue) bool {
			return strings.Contains(strings.ToLower(is.Summary+" "+is.Description), needle)
		}
	case projectClause.MatchString(jql):
		key := projectClause.FindStringSubmatch(jql)[1]
		match = func(is *Issue) bool { return strings.HasPrefix(is.Key, key+"-") }
	default:
		jiraError(w, http.StatusBadRequest, fmt.Sprintf("Error in the JQL Query: the query %q is not supported by this site.", jql))
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

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Atlassian-Token") != "no-check" {
		jiraError(w, http.StatusForbidden, "XSRF check failed")
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		jiraError(w, http.StatusBadRequest, "The request is not multipart/form-data.")
		return
	}
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
