// Package graph is a test Microsoft Graph v1.0 written from Microsoft's
// public documentation, speaking its wire format: SharePoint sites by path
// (/sites/{hostname}:/{path}), their document libraries (drives), drive
// items by id and by path (root:/{path}:), children paged by $top and
// @odata.nextLink, content answered by 302 to a pre-authenticated download
// URL on another host name (served by the same server, needing no
// Authorization), simple upload (PUT …/{parent}:/{name}:/content),
// search(q='…'), OneDrive (/me/drive), Outlook mail folders and messages
// (paged by $top/$skip, $search), sendMail (202, then in Sent Items),
// calendar events (/me/events, /me/calendarView), Teams (joined teams,
// channels, channel messages listed and posted). Errors are Graph's
// {"error":{"code","message","innerError"}}; an unknown or revoked bearer
// token gets 401 InvalidAuthenticationToken; Throttle answers 429 with
// Retry-After; Garbage answers bodies that are not JSON.
package graph

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/connections/fakes/fault"
)

// SimpleUploadLimit is Graph's bound on a simple upload (PUT …/content):
// larger files need an upload session.
const SimpleUploadLimit = 250 << 20

// Request is one request the fake received.
type Request struct {
	Method, Host, Path, Query, Authorization string
}

// Item is a drive item: a folder or a file.
type Item struct {
	ID, Name, DriveID, ParentID string
	Folder                      bool
	MIMEType                    string
	Content                     []byte
	Modified                    time.Time
}

// Message is an Outlook message.
type Message struct {
	ID, FolderID, Subject, Body, From string
	To, Cc                            []string
	Received                          time.Time
}

// Event is a calendar event.
type Event struct {
	ID, Subject, Location, Body string
	Start, End                  time.Time
}

// ChannelMessage is a Teams channel message.
type ChannelMessage struct {
	ID, Subject, Content, From string
	Created                    time.Time
}

type site struct {
	id, host, path, name string // path "" is the host's root site
	drives               []string
}

type drive struct {
	id, name, kind, siteID, root string
}

type team struct {
	id, name string
	channels []*channel
}

type channel struct {
	id, name string
	messages []*ChannelMessage
}

// Server is the fake Graph. The API is served under /v1.0 on every host
// name but DownloadHost, which serves the pre-authenticated download URLs.
type Server struct {
	*httptest.Server
	// DownloadHost is the host name of the download URLs (default
	// contoso.sharepoint.com); the test resolves it to this server.
	DownloadHost string
	// User is the signed-in user (the mailbox owner, the drive's owner).
	User, UserName string
	// MaxPage, when set, bounds the children a page lists whatever $top
	// asks: Graph pages on the server's terms ("Paging Microsoft Graph
	// data in your app": a page may hold fewer results than $top asked,
	// and the client follows @odata.nextLink until there is none).
	MaxPage int

	valid func(string) bool
	// pageFailures: next children requests for a later page ($skiptoken)
	// answered 500.
	pageFailures fault.Countdown

	mu        sync.Mutex
	sites     []*site
	drives    map[string]*drive
	items     map[string]*Item
	order     []string // item ids in creation order
	meDrive   string
	folders   []mailFolder
	messages  []*Message
	events    []*Event
	teams     []*team
	sent      []Message
	uploads   []Item
	requests  []Request
	downloads map[string]downloadGrant
	extra     map[string][]string // parent id -> items also listed as its children
	throttle  []time.Duration
	garbage   fault.Countdown
	redirect  string
	seq       int
	// Upload sessions (upload.go).
	sessions                              map[string]*uploadSession
	expireAfter                           int
	sessionCount, fragments, failFragment int
}

type mailFolder struct{ id, wellKnown, name string }

type downloadGrant struct {
	item    string
	expires time.Time
}

// New starts a fake Graph whose bearer tokens are those valid reports
// (an OAuth server's access tokens). Its signed-in user is user.
func New(valid func(token string) bool, user, userName string) *Server {
	s := &Server{DownloadHost: "contoso.sharepoint.com", User: user, UserName: userName, valid: valid,
		drives: map[string]*drive{}, items: map[string]*Item{}, downloads: map[string]downloadGrant{}}
	for _, f := range [][2]string{{"inbox", "Inbox"}, {"sentitems", "Sent Items"}, {"drafts", "Drafts"}, {"deleteditems", "Deleted Items"}} {
		s.folders = append(s.folders, mailFolder{id: "AAMk" + f[0] + "-" + s.id(), wellKnown: f[0], name: f[1]})
	}
	s.meDrive = s.newDrive("OneDrive", "business", "")
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *Server) id() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return strings.TrimRight(base64.RawURLEncoding.EncodeToString(b), "-_")
}

func (s *Server) newDrive(name, kind, siteID string) string {
	d := &drive{id: "b!" + s.id(), name: name, kind: kind, siteID: siteID}
	root := &Item{ID: "01ROOT" + s.id(), Name: "root", DriveID: d.id, Folder: true, Modified: time.Now().UTC()}
	d.root = root.ID
	s.drives[d.id] = d
	s.items[root.ID] = root
	s.order = append(s.order, root.ID)
	return d.id
}

// AddSite adds the site at host/path ("" for the host's root site, else
// e.g. "sites/Marketing") with document libraries named libraries (the
// first is its default drive, usually "Documents"). It returns the site id.
func (s *Server) AddSite(host, path, name string, libraries ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &site{host: host, path: strings.Trim(path, "/"), name: name}
	st.id = host + "," + s.id() + "," + s.id()
	for _, l := range libraries {
		st.drives = append(st.drives, s.newDrive(l, "documentLibrary", st.id))
	}
	s.sites = append(s.sites, st)
	return st.id
}

// Drive returns the id of the library named name of the site at host/path
// ("" for the signed-in user's OneDrive).
func (s *Server) Drive(host, path, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host == "" {
		return s.meDrive
	}
	for _, st := range s.sites {
		if st.host == host && st.path == strings.Trim(path, "/") {
			for _, d := range st.drives {
				if s.drives[d].name == name {
					return d
				}
			}
		}
	}
	return ""
}

// Put creates the folders of path (slash-separated, under the drive's
// root) as needed and stores a file there when content is not nil; it
// returns the last item's id.
func (s *Server) Put(driveID, path, mimeType string, content []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	parent := s.drives[driveID].root
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		if c := s.child(parent, seg); c != nil && !(last && content != nil) {
			parent = c.ID
			continue
		}
		it := &Item{ID: "01" + s.id(), Name: seg, DriveID: driveID, ParentID: parent, Folder: !(last && content != nil), Modified: time.Now().UTC()}
		if !it.Folder {
			it.MIMEType, it.Content = mimeType, content
		}
		s.items[it.ID] = it
		s.order = append(s.order, it.ID)
		parent = it.ID
	}
	return parent
}

// SetParent makes item id a child of parent: a hostile Graph can make
// folders a cycle with it.
func (s *Server) SetParent(id, parent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[id].ParentID = parent
}

// AlsoList lists item id among parent's children as well (a hostile
// Graph listing a folder's ancestor inside it).
func (s *Server) AlsoList(parent, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.extra == nil {
		s.extra = map[string][]string{}
	}
	s.extra[parent] = append(s.extra[parent], id)
}

// Item returns a copy of the item with that id.
func (s *Server) Item(id string) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	if !ok {
		return Item{}, false
	}
	return *it, true
}

// AddMessage delivers a message to the folder with that well-known name
// (inbox, sentitems, drafts, deleteditems).
func (s *Server) AddMessage(folder string, m Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.ID = "AAMkAD" + s.id()
	m.FolderID = s.folder(folder).id
	if m.Received.IsZero() {
		m.Received = time.Now().UTC()
	}
	s.messages = append(s.messages, &m)
	return m.ID
}

// AddEvent adds a calendar event.
func (s *Server) AddEvent(e Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.ID = "AAMkEv" + s.id()
	s.events = append(s.events, &e)
	return e.ID
}

// AddTeam adds a team the user joined, with channels named channels
// ("General" first, as Teams makes it); it returns the team's id and the
// channels' ids.
func (s *Server) AddTeam(name string, channels ...string) (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &team{id: uuidLike(), name: name}
	var ids []string
	for _, c := range channels {
		ch := &channel{id: "19:" + strings.ToLower(s.id()) + "@thread.tacv2", name: c}
		t.channels = append(t.channels, ch)
		ids = append(ids, ch.id)
	}
	s.teams = append(s.teams, t)
	return t.id, ids
}

// AddChannelMessage posts a message to a channel as someone else.
func (s *Server) AddChannelMessage(teamID, channelID string, m ChannelMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch := s.channel(teamID, channelID); ch != nil {
		m.ID = strconv.FormatInt(time.Now().UnixNano()+int64(s.seq), 10)
		s.seq++
		if m.Created.IsZero() {
			m.Created = time.Now().UTC()
		}
		ch.messages = append(ch.messages, &m)
	}
}

// ChannelMessages returns the messages of a channel, oldest first.
func (s *Server) ChannelMessages(teamID, channelID string) []ChannelMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ChannelMessage
	if ch := s.channel(teamID, channelID); ch != nil {
		for _, m := range ch.messages {
			out = append(out, *m)
		}
	}
	return out
}

// Sent returns the messages sent through sendMail.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// Uploads returns the files stored by uploads.
func (s *Server) Uploads() []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Item(nil), s.uploads...)
}

// Requests returns every request received, the download host's included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Throttle answers the next API request with 429 and Retry-After d.
func (s *Server) Throttle(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle = append(s.throttle, d)
}

// Garbage answers the next n API requests with 200 and a body that is not JSON.
func (s *Server) Garbage(n int) {
	s.garbage.Add(n)
}

// FailNextPage makes the next n children listings of a later page (those
// following an @odata.nextLink, with $skiptoken) answer 500
// generalException ("Microsoft Graph error responses and resource types").
func (s *Server) FailNextPage(n int) {
	s.pageFailures.Add(n)
}

// RedirectDownloadsTo makes /content redirect to base (a hostile Graph
// sending downloads elsewhere); "" restores the download host.
func (s *Server) RedirectDownloadsTo(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect = base
}

func uuidLike() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// graphError writes Graph's error body.
func graphError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", uuidLike())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"innerError": map[string]string{"date": time.Now().UTC().Format("2006-01-02T15:04:05"), "request-id": uuidLike(), "client-request-id": uuidLike()}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Host: host, Path: r.URL.Path, Query: r.URL.RawQuery, Authorization: r.Header.Get("Authorization")})
	s.mu.Unlock()
	if host == s.DownloadHost && isSessionURL(r) {
		s.sessionAPI(w, r)
		return
	}
	if host == s.DownloadHost {
		s.download(w, r)
		return
	}
	s.mu.Lock()
	var throttle time.Duration
	if len(s.throttle) > 0 {
		throttle, s.throttle = s.throttle[0], s.throttle[1:]
	}
	s.mu.Unlock()
	if throttle > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(throttle.Seconds())))
		graphError(w, http.StatusTooManyRequests, "TooManyRequests", "Too many requests. Please retry after the time given in Retry-After.")
		return
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "Bearer ") || !s.valid(strings.TrimPrefix(auth, "Bearer ")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"`)
		graphError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "Access token has expired or is not yet valid.")
		return
	}
	if s.garbage.Take() {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "<html><body>Service Unavailable</body></html>")
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/v1.0")
	if !ok {
		graphError(w, http.StatusBadRequest, "BadRequest", "Invalid version.")
		return
	}
	if p == "/me/drive" || strings.HasPrefix(p, "/me/drive/") {
		p = "/drives/" + s.meDrive + strings.TrimPrefix(p, "/me/drive")
	}
	switch {
	case p == "/me" && r.Method == http.MethodGet:
		// "Get user" (GET /me): the signed-in user, by User.Read.
		writeJSON(w, http.StatusOK, map[string]any{"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
			"id": "87d349ed-44d7-43e1-9a83-5f2406dee5bd", "displayName": s.UserName, "mail": s.User, "userPrincipalName": s.User})
	case strings.HasPrefix(p, "/sites/") || p == "/me/followedSites":
		s.sitesAPI(w, r, p)
	case strings.HasPrefix(p, "/drives/"):
		s.drivesAPI(w, r, p)
	case p == "/me/sendMail":
		s.sendMail(w, r)
	case strings.HasPrefix(p, "/me/mailFolders") || strings.HasPrefix(p, "/me/messages"):
		s.mailAPI(w, r, p)
	case p == "/me/events" || p == "/me/calendarView":
		s.calendarAPI(w, r, p)
	case p == "/me/joinedTeams" || strings.HasPrefix(p, "/teams/"):
		s.teamsAPI(w, r, p)
	default:
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Trim(p, "/")+"'.")
	}
}

// page cuts a collection by $top (default def, at most max) and the
// offset in $skip or $skiptoken; it returns the slice bounds and the
// @odata.nextLink ("" on the last page).
func page(r *http.Request, n, def, maxTop int, skipParam string) (int, int, string, error) {
	q := r.URL.Query()
	top := def
	if v := q.Get("$top"); v != "" {
		t, err := strconv.Atoi(v)
		if err != nil || t < 1 {
			return 0, 0, "", fmt.Errorf("invalid $top %q", v)
		}
		top = min(t, maxTop)
	}
	start := 0
	if v := q.Get(skipParam); v != "" {
		raw := v
		if skipParam == "$skiptoken" {
			b, err := base64.RawURLEncoding.DecodeString(v)
			if err != nil {
				return 0, 0, "", fmt.Errorf("invalid $skiptoken")
			}
			raw = strings.TrimPrefix(string(b), "Paged=TRUE&p_ID=")
		}
		st, err := strconv.Atoi(raw)
		if err != nil || st < 0 {
			return 0, 0, "", fmt.Errorf("invalid %s", skipParam)
		}
		start = min(st, n)
	}
	end := min(start+top, n)
	next := ""
	if end < n {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("$top", strconv.Itoa(top))
		if skipParam == "$skiptoken" {
			nq.Set(skipParam, base64.RawURLEncoding.EncodeToString([]byte("Paged=TRUE&p_ID="+strconv.Itoa(end))))
		} else {
			nq.Set(skipParam, strconv.Itoa(end))
		}
		next = "http://" + r.Host + r.URL.EscapedPath() + "?" + nq.Encode()
	}
	return start, end, next, nil
}

func collection(w http.ResponseWriter, values any, next string) {
	body := map[string]any{"value": values}
	if next != "" {
		body["@odata.nextLink"] = next
	}
	writeJSON(w, http.StatusOK, body)
}

// ---- SharePoint sites ----

func (s *Server) siteJSON(st *site) map[string]any {
	web := "https://" + st.host
	if st.path != "" {
		web += "/" + st.path
	}
	return map[string]any{"id": st.id, "name": st.name, "displayName": st.name, "webUrl": web,
		"siteCollection": map[string]string{"hostname": st.host}, "createdDateTime": "2024-01-01T00:00:00Z"}
}

func (s *Server) driveJSON(d *drive) map[string]any {
	web := ""
	for _, st := range s.sites {
		if st.id == d.siteID {
			web = s.siteJSON(st)["webUrl"].(string) + "/" + strings.ReplaceAll(d.name, " ", "%20")
		}
	}
	return map[string]any{"id": d.id, "name": d.name, "driveType": d.kind, "webUrl": web,
		"owner": map[string]any{"user": map[string]string{"displayName": s.UserName}}}
}

func (s *Server) sitesAPI(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		graphError(w, http.StatusMethodNotAllowed, "BadRequest", "Method not allowed.")
		return
	}
	if p == "/me/followedSites" {
		var out []map[string]any
		for _, st := range s.sites {
			out = append(out, s.siteJSON(st))
		}
		collection(w, out, "")
		return
	}
	rest := strings.TrimPrefix(p, "/sites/")
	var st *site
	switch {
	case rest == "root" || strings.HasPrefix(rest, "root/"):
		for _, x := range s.sites {
			if x.path == "" {
				st = x
				break
			}
		}
		rest = strings.TrimPrefix(rest, "root")
	case strings.Contains(rest, ":/"):
		// /sites/{hostname}:/{server-relative-path}[:/drives]
		host, sp, _ := strings.Cut(rest, ":/")
		sp, tail, _ := strings.Cut(sp, ":")
		for _, x := range s.sites {
			if strings.EqualFold(x.host, host) && strings.EqualFold(x.path, strings.Trim(sp, "/")) {
				st = x
			}
		}
		rest = tail
	default:
		id, tail, _ := strings.Cut(rest, "/")
		for _, x := range s.sites {
			if x.id == id || x.host == id && x.path == "" {
				st = x
			}
		}
		if tail != "" {
			tail = "/" + tail
		}
		rest = tail
	}
	if st == nil {
		graphError(w, http.StatusNotFound, "itemNotFound", "Requested site could not be found")
		return
	}
	switch rest {
	case "":
		writeJSON(w, http.StatusOK, s.siteJSON(st))
	case "/drives":
		var out []map[string]any
		for _, d := range st.drives {
			out = append(out, s.driveJSON(s.drives[d]))
		}
		collection(w, out, "")
	case "/drive":
		if len(st.drives) == 0 {
			graphError(w, http.StatusNotFound, "itemNotFound", "The site has no default document library.")
			return
		}
		writeJSON(w, http.StatusOK, s.driveJSON(s.drives[st.drives[0]]))
	default:
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Trim(rest, "/")+"'.")
	}
}

// ---- drives ----

func (s *Server) child(parent, name string) *Item {
	for _, id := range s.order {
		it := s.items[id]
		if it.ParentID == parent && strings.EqualFold(it.Name, name) {
			return it
		}
	}
	return nil
}

func (s *Server) children(parent string) []*Item {
	var out []*Item
	for _, id := range s.order {
		if it := s.items[id]; it.ParentID == parent && it.ID != parent {
			out = append(out, it)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	for _, id := range s.extra[parent] {
		out = append(out, s.items[id])
	}
	return out
}

// pathOf is the item's parentReference path ("/drives/{id}/root:/A/B"),
// bounded so that a cycle made by SetParent does not hang the fake.
func (s *Server) pathOf(it *Item) string {
	var segs []string
	for cur, n := s.items[it.ParentID], 0; cur != nil && cur.ParentID != "" && n < 64; cur, n = s.items[cur.ParentID], n+1 {
		segs = append([]string{cur.Name}, segs...)
	}
	p := "/drives/" + it.DriveID + "/root:"
	if len(segs) > 0 {
		p += "/" + strings.Join(segs, "/")
	}
	return p
}

func (s *Server) itemJSON(r *http.Request, it *Item, withPath bool) map[string]any {
	d := s.drives[it.DriveID]
	m := map[string]any{"id": it.ID, "name": it.Name, "eTag": `"{` + it.ID + `},1"`, "cTag": `"c:{` + it.ID + `},1"`,
		"createdDateTime": it.Modified.Format(time.RFC3339), "lastModifiedDateTime": it.Modified.Format(time.RFC3339),
		"webUrl": "https://" + s.DownloadHost + "/" + url.PathEscape(d.name) + "/" + url.PathEscape(it.Name), "size": len(it.Content)}
	if it.ParentID == "" {
		m["root"] = map[string]any{}
	} else {
		ref := map[string]any{"driveId": d.id, "driveType": d.kind, "id": it.ParentID}
		if withPath {
			ref["path"] = s.pathOf(it)
		}
		if d.siteID != "" {
			ref["siteId"] = d.siteID
		}
		m["parentReference"] = ref
	}
	if it.Folder {
		m["folder"] = map[string]int{"childCount": len(s.children(it.ID))}
		size := 0
		for _, c := range s.children(it.ID) {
			size += len(c.Content)
		}
		m["size"] = size
	} else {
		m["file"] = map[string]any{"mimeType": it.MIMEType}
		m["@microsoft.graph.downloadUrl"] = s.grant(r, it.ID)
	}
	return m
}

// grant makes a pre-authenticated download URL valid for a few minutes.
func (s *Server) grant(r *http.Request, id string) string {
	tok := s.id() + s.id()
	s.downloads[tok] = downloadGrant{item: id, expires: time.Now().Add(5 * time.Minute)}
	_, port, _ := net.SplitHostPort(r.Host)
	base := "http://" + s.DownloadHost
	if port != "" {
		base += ":" + port
	}
	if s.redirect != "" {
		base = s.redirect
	}
	return base + "/_layouts/15/download.aspx?UniqueId=" + url.QueryEscape(id) + "&tempauth=" + tok
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.downloads[r.URL.Query().Get("tempauth")]
	if r.URL.Path != "/_layouts/15/download.aspx" || !ok || time.Now().After(g.expires) || g.item != r.URL.Query().Get("UniqueId") {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error_description":"Invalid tempauth"}`)
		return
	}
	it := s.items[g.item]
	if it == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", it.MIMEType)
	w.Header().Set("Content-Length", strconv.Itoa(len(it.Content)))
	_, _ = w.Write(it.Content)
}

// resolve walks the drive from base (root or an item) down path.
func (s *Server) resolve(base *Item, path string) *Item {
	cur := base
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if seg == "" {
			continue
		}
		if cur = s.child(cur.ID, seg); cur == nil {
			return nil
		}
	}
	return cur
}

func (s *Server) drivesAPI(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest := strings.TrimPrefix(p, "/drives/")
	id, rest, _ := strings.Cut(rest, "/")
	d := s.drives[id]
	if d == nil {
		graphError(w, http.StatusNotFound, "itemNotFound", "The drive could not be found.")
		return
	}
	if rest == "" {
		writeJSON(w, http.StatusOK, s.driveJSON(d))
		return
	}
	var base *Item
	switch {
	case rest == "root" || strings.HasPrefix(rest, "root/") || strings.HasPrefix(rest, "root:"):
		base, rest = s.items[d.root], strings.TrimPrefix(rest, "root")
	case strings.HasPrefix(rest, "items/"):
		iid, tail, _ := strings.Cut(strings.TrimPrefix(rest, "items/"), "/")
		iid, colon, hasColon := strings.Cut(iid, ":")
		base = s.items[iid]
		if base == nil || base.DriveID != d.id {
			graphError(w, http.StatusNotFound, "itemNotFound", "The resource could not be found.")
			return
		}
		rest = ""
		if hasColon {
			rest = ":" + colon
			if tail != "" {
				rest += "/" + tail
			}
		} else if tail != "" {
			rest = "/" + tail
		}
	default:
		graphError(w, http.StatusBadRequest, "invalidRequest", "Invalid request.")
		return
	}
	// Path addressing: {base}:/{path}:[/{action}] or {base}:/{path}
	if strings.HasPrefix(rest, ":/") {
		inner, tail, closed := strings.Cut(rest[2:], ":")
		if !closed {
			tail = ""
		}
		if r.Method == http.MethodPut && tail == "/content" {
			s.upload(w, r, base, inner)
			return
		}
		if r.Method == http.MethodPost && tail == "/createUploadSession" {
			s.createUploadSession(w, r, base, inner)
			return
		}
		base = s.resolve(base, inner)
		if base == nil {
			graphError(w, http.StatusNotFound, "itemNotFound", "The resource could not be found.")
			return
		}
		rest = tail
	}
	switch {
	case rest == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.itemJSON(r, base, true))
	case rest == "/children" && r.Method == http.MethodGet:
		if !base.Folder {
			collection(w, []any{}, "")
			return
		}
		if r.URL.Query().Get("$skiptoken") != "" && s.pageFailures.Take() {
			graphError(w, http.StatusInternalServerError, "generalException", "An unspecified error has occurred.")
			return
		}
		kids := s.children(base.ID)
		maxTop := 1000
		if s.MaxPage > 0 {
			maxTop = s.MaxPage
		}
		start, end, next, err := page(r, len(kids), min(200, maxTop), maxTop, "$skiptoken")
		if err != nil {
			graphError(w, http.StatusBadRequest, "invalidRequest", err.Error())
			return
		}
		if next != "" {
			// A next link is opaque and need not repeat the request's path:
			// listing by path (root:/Test:/children) Graph has answered a
			// nextLink without the folder path
			// (OneDrive/onedrive-api-docs#620 and #774,
			// microsoftgraph/microsoft-graph-docs#3341). This fake's names the
			// folder by id instead, so following it still lists that folder.
			nu, _ := url.Parse(next)
			nu.Path = "/v1.0/drives/" + d.id + "/items/" + base.ID + "/children"
			nu.RawPath = ""
			next = nu.String()
		}
		out := []map[string]any{}
		for _, it := range kids[start:end] {
			out = append(out, s.itemJSON(r, it, true))
		}
		collection(w, out, next)
	case rest == "/content" && r.Method == http.MethodGet:
		if base.Folder {
			graphError(w, http.StatusBadRequest, "invalidRequest", "The item is a folder and has no content.")
			return
		}
		w.Header().Set("Location", s.grant(r, base.ID))
		w.WriteHeader(http.StatusFound)
	case strings.HasPrefix(rest, "/search(q=") && strings.HasSuffix(rest, ")") && r.Method == http.MethodGet:
		q := strings.TrimSuffix(strings.TrimPrefix(rest, "/search(q="), ")")
		if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
			graphError(w, http.StatusBadRequest, "invalidRequest", "Syntax error: search text must be quoted.")
			return
		}
		q = strings.ToLower(strings.ReplaceAll(q[1:len(q)-1], "''", "'"))
		var hits []*Item
		for _, id := range s.order {
			it := s.items[id]
			if it.DriveID == d.id && it.ParentID != "" && (strings.Contains(strings.ToLower(it.Name), q) ||
				!it.Folder && strings.HasPrefix(it.MIMEType, "text/") && strings.Contains(strings.ToLower(string(it.Content)), q)) {
				hits = append(hits, it)
			}
		}
		start, end, next, err := page(r, len(hits), 200, 1000, "$skiptoken")
		if err != nil {
			graphError(w, http.StatusBadRequest, "invalidRequest", err.Error())
			return
		}
		out := []map[string]any{}
		for _, it := range hits[start:end] {
			out = append(out, s.itemJSON(r, it, false)) // search results carry no parent path
		}
		collection(w, out, next)
	default:
		graphError(w, http.StatusBadRequest, "invalidRequest", "Invalid request.")
	}
}

// upload is the simple upload: PUT {parent}:/{name}:/content.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, base *Item, inner string) {
	parent, name, ok := s.uploadTarget(w, base, inner)
	if !ok {
		return
	}
	if r.ContentLength > SimpleUploadLimit {
		graphError(w, http.StatusRequestEntityTooLarge, "requestEntityTooLarge", "Simple upload is limited to 250 MB; use an upload session.")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, SimpleUploadLimit+1))
	if err != nil || len(data) > SimpleUploadLimit {
		graphError(w, http.StatusRequestEntityTooLarge, "requestEntityTooLarge", "Simple upload is limited to 250 MB; use an upload session.")
		return
	}
	// A simple upload replaces by default ("Upload or replace the contents
	// of a driveItem"); @microsoft.graph.conflictBehavior says otherwise.
	behavior := behaviorOf(r)
	switch behavior {
	case "":
		behavior = "replace"
	case "fail", "replace", "rename":
	default:
		graphError(w, http.StatusBadRequest, "invalidRequest", "Invalid conflictBehavior.")
		return
	}
	s.store(w, r, base.DriveID, parent, name, behavior, r.Header.Get("Content-Type"), data)
}

// ---- Outlook mail ----

func (s *Server) folder(idOrName string) *mailFolder {
	for i := range s.folders {
		f := &s.folders[i]
		if f.id == idOrName || strings.EqualFold(f.wellKnown, idOrName) {
			return f
		}
	}
	return nil
}

func recipients(addrs []string) []map[string]any {
	out := []map[string]any{}
	for _, a := range addrs {
		out = append(out, map[string]any{"emailAddress": map[string]string{"name": a, "address": a}})
	}
	return out
}

func (s *Server) messageJSON(m *Message) map[string]any {
	preview := m.Body
	if len(preview) > 255 {
		preview = preview[:255]
	}
	from := map[string]any{"emailAddress": map[string]string{"name": m.From, "address": m.From}}
	return map[string]any{"id": m.ID, "subject": m.Subject, "bodyPreview": preview, "parentFolderId": m.FolderID,
		"body": map[string]string{"contentType": "text", "content": m.Body}, "from": from, "sender": from,
		"toRecipients": recipients(m.To), "ccRecipients": recipients(m.Cc), "isRead": false,
		"receivedDateTime": m.Received.Format(time.RFC3339), "sentDateTime": m.Received.Format(time.RFC3339),
		"webLink": "https://outlook.office365.com/owa/?ItemID=" + url.QueryEscape(m.ID)}
}

func (s *Server) mailAPI(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		graphError(w, http.StatusMethodNotAllowed, "ErrorInvalidRequest", "The OData request is not supported.")
		return
	}
	if p == "/me/mailFolders" {
		out := []map[string]any{}
		for _, f := range s.folders {
			n := 0
			for _, m := range s.messages {
				if m.FolderID == f.id {
					n++
				}
			}
			out = append(out, map[string]any{"id": f.id, "displayName": f.name, "parentFolderId": "AAMkroot", "childFolderCount": 0,
				"unreadItemCount": n, "totalItemCount": n, "isHidden": false})
		}
		collection(w, out, "")
		return
	}
	var list []*Message
	switch {
	case p == "/me/messages":
		list = append(list, s.messages...)
	case strings.HasPrefix(p, "/me/messages/"):
		id := strings.TrimPrefix(p, "/me/messages/")
		id, value := strings.CutSuffix(id, "/$value")
		for _, m := range s.messages {
			if m.ID == id {
				if value {
					w.Header().Set("Content-Type", "text/plain")
					_, _ = fmt.Fprintf(w, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s",
						m.From, strings.Join(m.To, ", "), m.Subject, m.Received.Format(time.RFC1123Z), m.Body)
					return
				}
				writeJSON(w, http.StatusOK, s.messageJSON(m))
				return
			}
		}
		graphError(w, http.StatusNotFound, "ErrorItemNotFound", "The specified object was not found in the store.")
		return
	default:
		fid, tail, _ := strings.Cut(strings.TrimPrefix(p, "/me/mailFolders/"), "/")
		f := s.folder(fid)
		if f == nil {
			graphError(w, http.StatusNotFound, "ErrorInvalidIdMalformed", "Id is malformed.")
			return
		}
		if tail == "" {
			writeJSON(w, http.StatusOK, map[string]any{"id": f.id, "displayName": f.name})
			return
		}
		if tail != "messages" {
			graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+tail+"'.")
			return
		}
		for _, m := range s.messages {
			if m.FolderID == f.id {
				list = append(list, m)
			}
		}
	}
	if q := r.URL.Query().Get("$search"); q != "" {
		q = strings.ToLower(strings.Trim(q, `"`))
		var hits []*Message
		for _, m := range list {
			if strings.Contains(strings.ToLower(m.Subject+" "+m.Body+" "+m.From), q) {
				hits = append(hits, m)
			}
		}
		list = hits
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Received.After(list[j].Received) })
	start, end, next, err := page(r, len(list), 10, 1000, "$skip")
	if err != nil {
		graphError(w, http.StatusBadRequest, "ErrorInvalidParameter", err.Error())
		return
	}
	out := []map[string]any{}
	for _, m := range list[start:end] {
		out = append(out, s.messageJSON(m))
	}
	collection(w, out, next)
}

func (s *Server) sendMail(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		graphError(w, http.StatusMethodNotAllowed, "ErrorInvalidRequest", "The OData request is not supported.")
		return
	}
	var req struct {
		Message struct {
			Subject string `json:"subject"`
			Body    struct {
				ContentType string `json:"contentType"`
				Content     string `json:"content"`
			} `json:"body"`
			ToRecipients []struct {
				EmailAddress struct {
					Address string `json:"address"`
				} `json:"emailAddress"`
			} `json:"toRecipients"`
			CcRecipients []struct {
				EmailAddress struct {
					Address string `json:"address"`
				} `json:"emailAddress"`
			} `json:"ccRecipients"`
		} `json:"message"`
		SaveToSentItems *bool `json:"saveToSentItems"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		graphError(w, http.StatusBadRequest, "ErrorInvalidRequest", "Cannot read the request body.")
		return
	}
	m := Message{Subject: req.Message.Subject, Body: req.Message.Body.Content, From: s.User, Received: time.Now().UTC()}
	for _, t := range req.Message.ToRecipients {
		m.To = append(m.To, t.EmailAddress.Address)
	}
	for _, t := range req.Message.CcRecipients {
		m.Cc = append(m.Cc, t.EmailAddress.Address)
	}
	if len(m.To)+len(m.Cc) == 0 {
		graphError(w, http.StatusBadRequest, "ErrorInvalidRecipients", "At least one recipient is not valid., Recipient is missing.")
		return
	}
	for _, a := range append(append([]string{}, m.To...), m.Cc...) {
		if !strings.Contains(a, "@") {
			graphError(w, http.StatusBadRequest, "ErrorInvalidRecipients", "At least one recipient is not valid., Recipient '"+a+"' is not resolved.")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m.ID = "AAMkAD" + s.id()
	s.sent = append(s.sent, m)
	if req.SaveToSentItems == nil || *req.SaveToSentItems {
		m.FolderID = s.folder("sentitems").id
		s.messages = append(s.messages, &m)
	}
	w.WriteHeader(http.StatusAccepted)
}

// ---- calendar ----

func graphTime(t time.Time) map[string]string {
	return map[string]string{"dateTime": t.UTC().Format("2006-01-02T15:04:05.0000000"), "timeZone": "UTC"}
}

func (s *Server) calendarAPI(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := append([]*Event(nil), s.events...)
	if p == "/me/calendarView" {
		q := r.URL.Query()
		from, err1 := time.Parse(time.RFC3339, q.Get("startDateTime"))
		to, err2 := time.Parse(time.RFC3339, q.Get("endDateTime"))
		if q.Get("startDateTime") == "" || q.Get("endDateTime") == "" {
			graphError(w, http.StatusBadRequest, "ErrorInvalidParameter", "This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.")
			return
		}
		if err1 != nil || err2 != nil {
			graphError(w, http.StatusBadRequest, "ErrorInvalidParameter", "The value of the parameter 'StartDateTime' or 'EndDateTime' is invalid.")
			return
		}
		list = nil
		for _, e := range s.events {
			if e.End.After(from) && e.Start.Before(to) {
				list = append(list, e)
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Start.Before(list[j].Start) })
	start, end, next, err := page(r, len(list), 10, 1000, "$skip")
	if err != nil {
		graphError(w, http.StatusBadRequest, "ErrorInvalidParameter", err.Error())
		return
	}
	out := []map[string]any{}
	for _, e := range list[start:end] {
		out = append(out, map[string]any{"id": e.ID, "subject": e.Subject, "bodyPreview": e.Body, "start": graphTime(e.Start), "end": graphTime(e.End),
			"location":  map[string]string{"displayName": e.Location},
			"organizer": map[string]any{"emailAddress": map[string]string{"name": s.UserName, "address": s.User}},
			"webLink":   "https://outlook.office365.com/owa/?itemid=" + url.QueryEscape(e.ID), "isAllDay": false})
	}
	collection(w, out, next)
}

// ---- Teams ----

func (s *Server) channel(teamID, channelID string) *channel {
	for _, t := range s.teams {
		if t.id == teamID {
			for _, c := range t.channels {
				if c.id == channelID {
					return c
				}
			}
		}
	}
	return nil
}

func (s *Server) teamsAPI(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == "/me/joinedTeams" {
		out := []map[string]any{}
		for _, t := range s.teams {
			out = append(out, map[string]any{"id": t.id, "displayName": t.name, "description": t.name + " team", "isArchived": false})
		}
		collection(w, out, "")
		return
	}
	segs := strings.Split(strings.TrimPrefix(p, "/teams/"), "/")
	var t *team
	for _, x := range s.teams {
		if x.id == segs[0] {
			t = x
		}
	}
	if t == nil {
		graphError(w, http.StatusNotFound, "NotFound", "No team found with Group Id "+segs[0])
		return
	}
	switch {
	case len(segs) == 2 && segs[1] == "channels" && r.Method == http.MethodGet:
		out := []map[string]any{}
		for _, c := range t.channels {
			out = append(out, map[string]any{"id": c.id, "displayName": c.name, "description": c.name, "membershipType": "standard",
				"webUrl": "https://teams.microsoft.com/l/channel/" + url.PathEscape(c.id) + "/" + url.PathEscape(c.name)})
		}
		collection(w, out, "")
	case len(segs) == 4 && segs[1] == "channels" && segs[3] == "messages":
		c := s.channel(t.id, segs[2])
		if c == nil {
			graphError(w, http.StatusNotFound, "NotFound", "Channel not found.")
			return
		}
		if r.Method == http.MethodPost {
			var req struct {
				Subject string `json:"subject"`
				Body    struct {
					ContentType string `json:"contentType"`
					Content     string `json:"content"`
				} `json:"body"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || strings.TrimSpace(req.Body.Content) == "" {
				graphError(w, http.StatusBadRequest, "BadRequest", "Message body cannot be empty.")
				return
			}
			m := &ChannelMessage{ID: strconv.FormatInt(time.Now().UnixNano(), 10), Subject: req.Subject, Content: req.Body.Content, From: s.UserName, Created: time.Now().UTC()}
			c.messages = append(c.messages, m)
			writeJSON(w, http.StatusCreated, s.chatMessageJSON(t, c, m))
			return
		}
		// Newest first, 20 a page by default, at most 50 (Graph refuses more).
		if n, err := strconv.Atoi(r.URL.Query().Get("$top")); err == nil && n > 50 {
			graphError(w, http.StatusBadRequest, "BadRequest", "Limit of '50' for Top Query has been exceeded.")
			return
		}
		list := make([]*ChannelMessage, len(c.messages))
		for i, m := range c.messages {
			list[len(list)-1-i] = m
		}
		start, end, next, err := page(r, len(list), 20, 50, "$skiptoken")
		if err != nil {
			graphError(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		out := []map[string]any{}
		for _, m := range list[start:end] {
			out = append(out, s.chatMessageJSON(t, c, m))
		}
		collection(w, out, next)
	default:
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Join(segs[1:], "/")+"'.")
	}
}

func (s *Server) chatMessageJSON(t *team, c *channel, m *ChannelMessage) map[string]any {
	return map[string]any{"id": m.ID, "messageType": "message", "createdDateTime": m.Created.Format(time.RFC3339), "subject": m.Subject,
		"body":            map[string]string{"contentType": contentType(m.Content), "content": m.Content},
		"from":            map[string]any{"user": map[string]string{"id": uuidLike(), "displayName": m.From}},
		"channelIdentity": map[string]string{"teamId": t.id, "channelId": c.id},
		"webUrl":          "https://teams.microsoft.com/l/message/" + url.PathEscape(c.id) + "/" + m.ID}
}

// contentType is "html" for markup (what Teams clients post), else "text".
func contentType(s string) string {
	if strings.HasPrefix(strings.TrimSpace(s), "<") {
		return "html"
	}
	return "text"
}
