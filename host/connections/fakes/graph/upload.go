package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// Upload sessions, as Microsoft documents them in "Upload large files with
// an upload session" (learn.microsoft.com/graph/api/driveitem-createuploadsession):
//   - POST …/{parent}:/{name}:/createUploadSession with an optional
//     {"item":{"@microsoft.graph.conflictBehavior":…}} answers 200 with
//     uploadUrl, expirationDateTime and nextExpectedRanges ["0-"];
//   - the uploadUrl is pre-authenticated (on the SharePoint host, not
//     graph.microsoft.com) and takes PUTs with Content-Length and
//     Content-Range "bytes {start}-{end}/{total}";
//   - every fragment but the last is a multiple of 320 KiB (327,680
//     bytes) and under 60 MiB; a fragment that is not, or that does not
//     start at the next expected byte, is refused;
//   - an interim fragment answers 202 with nextExpectedRanges; the last
//     answers 201 Created (or 200 OK when it replaced a file) with the
//     driveItem; a name conflict shows at the last fragment as 409
//     nameAlreadyExists when the behaviour is fail;
//   - GET on the uploadUrl answers the session's state (its
//     nextExpectedRanges), which is how a client resumes after a failed
//     fragment; DELETE cancels it (204);
//   - the uploadUrl is pre-authenticated: "If you include the
//     Authorization header when issuing the PUT call, it may result in
//     an HTTP 401 Unauthorized response" — this fake always answers 401
//     to a request carrying one;
//   - a session expires (expirationDateTime; each fragment extends it):
//     its uploadUrl then answers 404 itemNotFound and the upload starts
//     over with a new session (ExpireSessions).
const (
	// FragmentMultiple is the 320 KiB every fragment but the last is a
	// multiple of.
	FragmentMultiple = 320 << 10
	// FragmentMax is the 60 MiB bound on one fragment.
	FragmentMax = 60 << 20
)

type uploadSession struct {
	driveID, parentID, name, behavior string
	total                             int64 // -1 until the first fragment
	data                              []byte
	expires                           time.Time
}

// SessionUploads reports how many upload sessions were created and how
// many fragments their uploadUrls received (a refused or failed one
// included).
func (s *Server) SessionUploads() (sessions, fragments int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionCount, s.fragments
}

// FailFragment makes the n-th fragment PUT from now (1 for the next) fail
// as a connection cut halfway would: the session keeps the first part of
// it (a whole number of 320 KiB) and the answer is a 500, so the client
// has to ask the session where to resume.
func (s *Server) FailFragment(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failFragment = s.fragments + n
}

// ExpireSessions ends every open upload session now, as their
// expirationDateTime passing would.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.sessions {
		u.expires = time.Time{}
	}
}

// ExpireSessionAfter makes the open session expire after its n-th
// fragment from now (1: right after the next one).
func (s *Server) ExpireSessionAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireAfter = s.fragments + n
}

// behaviorOf is a request's @microsoft.graph.conflictBehavior (the query
// parameter of a simple upload); "" when it sets none.
func behaviorOf(r *http.Request) string {
	return r.URL.Query().Get("@microsoft.graph.conflictBehavior")
}

// createUploadSession opens a session for parent/name. Called with s.mu
// held.
func (s *Server) createUploadSession(w http.ResponseWriter, r *http.Request, base *Item, inner string) {
	parent, name, ok := s.uploadTarget(w, base, inner)
	if !ok {
		return
	}
	var body struct {
		Item map[string]any `json:"item"`
	}
	if b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20)); len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			graphError(w, http.StatusBadRequest, "invalidRequest", "The request body is not valid JSON.")
			return
		}
	}
	behavior, _ := body.Item["@microsoft.graph.conflictBehavior"].(string)
	switch behavior {
	case "":
		// Graph's default for a session is replace.
		behavior = "replace"
	case "fail", "replace", "rename":
	default:
		graphError(w, http.StatusBadRequest, "invalidRequest", "Invalid conflictBehavior.")
		return
	}
	if s.sessions == nil {
		s.sessions = map[string]*uploadSession{}
	}
	id := s.id() + s.id()
	s.sessions[id] = &uploadSession{driveID: base.DriveID, parentID: parent.ID, name: name, behavior: behavior, total: -1,
		expires: time.Now().Add(time.Hour)}
	s.sessionCount++
	host := s.DownloadHost
	if _, port, _ := net.SplitHostPort(r.Host); port != "" {
		host += ":" + port
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"uploadUrl":          "http://" + host + "/_api/v2.0/drives/" + url.PathEscape(base.DriveID) + "/items/" + url.PathEscape(parent.ID) + "/uploadSession?guid=" + id + "&tempauth=" + s.id(),
		"expirationDateTime": s.sessions[id].expires.UTC().Format(time.RFC3339),
		"nextExpectedRanges": []string{"0-"},
	})
}

// uploadTarget resolves an upload's parent folder and checks the name.
func (s *Server) uploadTarget(w http.ResponseWriter, base *Item, inner string) (*Item, string, bool) {
	inner = strings.Trim(inner, "/")
	dir, name := "", inner
	if i := strings.LastIndex(inner, "/"); i >= 0 {
		dir, name = inner[:i], inner[i+1:]
	}
	if name == "" || strings.ContainsAny(name, `"*:<>?\|`) {
		graphError(w, http.StatusBadRequest, "invalidRequest", "The provided name contains invalid characters.")
		return nil, "", false
	}
	parent := s.resolve(base, dir)
	if parent == nil || !parent.Folder {
		graphError(w, http.StatusNotFound, "itemNotFound", "The parent folder could not be found.")
		return nil, "", false
	}
	return parent, name, true
}

// isSessionURL says whether a request on DownloadHost is for an uploadUrl.
func isSessionURL(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/_api/v2.0/drives/") && strings.HasSuffix(r.URL.Path, "/uploadSession")
}

// sessionAPI serves the uploadUrls.
func (s *Server) sessionAPI(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "" {
		graphError(w, http.StatusUnauthorized, "unauthenticated", "The upload URL is pre-authenticated; do not send an Authorization header.")
		return
	}
	id := r.URL.Query().Get("guid")
	u := s.sessions[id]
	if u == nil || time.Now().After(u.expires) {
		graphError(w, http.StatusNotFound, "itemNotFound", "The upload session was not found or has expired.")
		return
	}
	state := func(status int) {
		writeJSON(w, status, map[string]any{"expirationDateTime": u.expires.UTC().Format(time.RFC3339),
			"nextExpectedRanges": []string{strconv.Itoa(len(u.data)) + "-"}})
	}
	switch r.Method {
	case http.MethodGet:
		state(http.StatusOK)
		return
	case http.MethodDelete:
		delete(s.sessions, id)
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPut:
	default:
		graphError(w, http.StatusMethodNotAllowed, "invalidRequest", "Method not allowed.")
		return
	}
	s.fragments++
	var start, end, total int64
	if _, err := fmt.Sscanf(r.Header.Get("Content-Range"), "bytes %d-%d/%d", &start, &end, &total); err != nil || start < 0 || end < start || end >= total {
		graphError(w, http.StatusBadRequest, "invalidRequest", "Content-Range is not bytes {start}-{end}/{total}.")
		return
	}
	size := end - start + 1
	if r.ContentLength != size {
		graphError(w, http.StatusBadRequest, "invalidRequest", "Content-Length does not match Content-Range.")
		return
	}
	if size > FragmentMax {
		graphError(w, http.StatusRequestEntityTooLarge, "requestEntityTooLarge", "A fragment must be smaller than 60 MiB.")
		return
	}
	if end+1 < total && size%FragmentMultiple != 0 {
		graphError(w, http.StatusBadRequest, "invalidRequest", "The fragment size must be a multiple of 320 KiB (327,680 bytes).")
		return
	}
	if u.total >= 0 && total != u.total {
		graphError(w, http.StatusBadRequest, "invalidRequest", "The total size differs from the session's.")
		return
	}
	if start != int64(len(u.data)) {
		// Bytes already received, or a gap.
		graphError(w, http.StatusRequestedRangeNotSatisfiable, "invalidRange", "The uploaded fragment overlaps data that has already been received or is not the next expected range.")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, size+1))
	if err != nil || int64(len(data)) != size {
		graphError(w, http.StatusBadRequest, "invalidRequest", "The fragment's body is not Content-Length long.")
		return
	}
	if u.total < 0 {
		u.total, u.data = total, make([]byte, 0, total)
	}
	if s.failFragment > 0 && s.fragments == s.failFragment {
		s.failFragment = 0
		keep := size / 2 / FragmentMultiple * FragmentMultiple
		u.data = append(u.data, data[:keep]...)
		graphError(w, http.StatusInternalServerError, "generalException", "An unspecified error has occurred.")
		return
	}
	u.data = append(u.data, data...)
	if s.expireAfter > 0 && s.fragments == s.expireAfter {
		s.expireAfter = 0
		u.expires = time.Time{}
	} else {
		// Each fragment extends the session ("uploadSession resource type").
		u.expires = time.Now().Add(time.Hour)
	}
	if int64(len(u.data)) < u.total {
		state(http.StatusAccepted)
		return
	}
	delete(s.sessions, id)
	s.store(w, r, u.driveID, s.items[u.parentID], u.name, u.behavior, "", u.data)
}

// store puts data under parent/name with a conflict behaviour (fail,
// replace, rename) and answers the driveItem: 201 for a new file, 200 for
// one replaced, 409 nameAlreadyExists for fail on an existing name.
// Called with s.mu held.
func (s *Server) store(w http.ResponseWriter, r *http.Request, driveID string, parent *Item, name, behavior, mimeType string, data []byte) {
	it := s.child(parent.ID, name)
	if it != nil && behavior == "rename" {
		// The docs do not give the pattern of the new name; OneDrive's web
		// client numbers it "name 1.ext".
		ext := ""
		stem := name
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			stem, ext = name[:i], name[i:]
		}
		for n := 1; it != nil; n++ {
			name = stem + " " + strconv.Itoa(n) + ext
			it = s.child(parent.ID, name)
		}
	}
	status := http.StatusOK
	switch {
	case it == nil:
		it = &Item{ID: "01" + s.id(), Name: name, DriveID: driveID, ParentID: parent.ID}
		s.items[it.ID] = it
		s.order = append(s.order, it.ID)
		status = http.StatusCreated
	case it.Folder || behavior == "fail":
		graphError(w, http.StatusConflict, "nameAlreadyExists", "The specified item name already exists.")
		return
	}
	it.Content, it.Modified = data, time.Now().UTC()
	if mimeType == "" {
		// A session carries no Content-Type: Graph types the file by its
		// name.
		mimeType = mime.TypeByExtension(path.Ext(name))
	}
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	it.MIMEType = mimeType
	s.uploads = append(s.uploads, *it)
	writeJSON(w, status, s.itemJSON(r, it, true))
}
