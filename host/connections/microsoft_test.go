package connections_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/graph"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

const (
	graphHost = "graph.microsoft.com"
	spHost    = "contoso.sharepoint.com"
)

// msWorld is a fake Microsoft Graph (fakes/graph) reached as
// graph.microsoft.com, its download host contoso.sharepoint.com, a fake
// Microsoft identity platform (fakes/oauth) whose access tokens Graph
// accepts, and a connections service with the provider "microsoft".
type msWorld struct {
	as    *oauth.Server
	graph *graph.Server
	svc   *connections.Service
	port  string
	opts  wasm.EgressOptions
	clock *connectionstest.Clock

	// Seeded content.
	pdf                    []byte
	reports, old           string // folder ids in Marketing's Documents
	teamID, general, plans string
}

func newMSWorld(t testing.TB, db connections.Store) *msWorld {
	t.Helper()
	m := &msWorld{clock: connectionstest.NewClock(time.Now())}
	m.as = oauth.New("ms-client", "ms-secret", redirect)
	t.Cleanup(m.as.Close)
	m.graph = graph.New(m.as.Valid, "alice@contoso.com", "Alice")
	t.Cleanup(m.graph.Close)
	u, _ := url.Parse(m.graph.URL)
	m.port = u.Port()
	m.opts = wasm.EgressOptions{AllowPrivateHosts: []string{graphHost + ":" + m.port, spHost + ":" + m.port, "evil.test:" + m.port},
		Resolver: connectionstest.DNS{graphHost: "127.0.0.1", spHost: "127.0.0.1", "evil.test": "127.0.0.1"}}
	var err error
	m.svc, err = connections.New(connections.Options{Store: db, Sealer: connectionstest.Sealer(t),
		// Connections are tried when made, against the fake Graph only.
		Check: connections.CheckOptions{AllowPrivateHosts: m.opts.AllowPrivateHosts, Resolver: m.opts.Resolver},
		Providers: []connections.Provider{{Name: "microsoft", Hosts: []string{graphHost}, DownloadHosts: []string{"*.sharepoint.com"}, BaseURL: "http://" + graphHost + ":" + m.port + "/v1.0",
			OAuth: &connections.OAuth{ClientID: "ms-client", ClientSecret: "ms-secret", AuthURL: m.as.AuthURL(), TokenURL: m.as.TokenURL(),
				RedirectURL: redirect, Scopes: []string{"offline_access", "Files.ReadWrite.All"}}}},
		TokenClient: m.as.Client(),
		Now:         m.clock.Now,
		Sleep:       m.clock.Sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.pdf, err = os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "deb-camlidl-1.04.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	g := m.graph
	g.AddSite(spHost, "", "Contoso", "Documents")
	g.AddSite(spHost, "sites/Marketing", "Marketing", "Documents", "Archive")
	docs := g.Drive(spHost, "sites/Marketing", "Documents")
	m.reports = g.Put(docs, "Reports", "", nil)
	for _, f := range []string{"a-notes.txt", "b-plan.txt", "d-budget.txt"} {
		g.Put(docs, "Reports/"+f, "text/plain", []byte("text of "+f))
	}
	g.Put(docs, "Reports/camlidl.pdf", "application/pdf", m.pdf)
	m.old = g.Put(docs, "Reports/Old", "", nil)
	g.Put(docs, "Reports/Old/2019.txt", "text/plain", []byte("the 2019 invoice"))
	g.Put(g.Drive("", "", ""), "Personal/cv.txt", "text/plain", []byte("Alice's CV"))
	for i, s := range []string{"Invoice March", "Lunch?", "Quarterly numbers"} {
		g.AddMessage("inbox", graph.Message{Subject: s, Body: "body of " + s, From: "bob@contoso.com", To: []string{"alice@contoso.com"},
			Received: time.Date(2026, 3, 1+i, 9, 0, 0, 0, time.UTC)})
	}
	g.AddEvent(graph.Event{Subject: "Board meeting", Location: "Room 1", Start: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)})
	g.AddEvent(graph.Event{Subject: "Retro", Start: time.Date(2026, 12, 15, 14, 0, 0, 0, time.UTC), End: time.Date(2026, 12, 15, 15, 0, 0, 0, time.UTC)})
	var chans []string
	m.teamID, chans = g.AddTeam("Marketing", "General", "Plans")
	m.general, m.plans = chans[0], chans[1]
	for _, s := range []string{"hello team", "launch is on Monday", "<p>see the <b>plan</b></p>"} {
		g.AddChannelMessage(m.teamID, m.general, graph.ChannelMessage{Content: s, From: "Bob"})
	}
	return m
}

// connect runs the authorisation code grant for p.
func (m *msWorld) connect(t testing.TB, p tenancy.Principal, label string) connections.Connection {
	t.Helper()
	ctx := context.Background()
	authURL, err := m.svc.StartAuthorization(ctx, p, "microsoft", label)
	if err != nil {
		t.Fatal(err)
	}
	code := m.as.Consent(authURL)
	if code == "" {
		t.Fatalf("consent refused %s", authURL)
	}
	c, err := m.svc.CompleteAuthorization(ctx, p, mustQuery(t, authURL).Get("state"), code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// host loads the microsoft connector (and the other plugins named) with
// the connection capability and caps; logs, when not nil, gets the host's
// logs.
func (m *msWorld) host(t testing.TB, logs io.Writer, caps []wasm.Capability, plugins ...string) *wasm.Host {
	t.Helper()
	caps = append([]wasm.Capability{(&connections.Capability{Service: m.svc, Egress: m.opts}).Wasm()}, caps...)
	return wasmtest.NewHost(t, wasmtest.Options{Egress: m.opts, Capabilities: caps, Logs: logs}, append([]string{"microsoft"}, plugins...)...)
}

type msEnv struct {
	*msWorld
	alice, bob tenancy.Principal
	res        *connections.Resolver
	conn       connections.Connection
	logs       *connectionstest.LogSink
}

func newMSEnv(t *testing.T) *msEnv {
	t.Helper()
	e := newEnv(t)
	m := newMSWorld(t, e.db)
	logs := &connectionstest.LogSink{}
	h := m.host(t, logs, nil)
	return &msEnv{msWorld: m, alice: e.alice, bob: e.bob, res: &connections.Resolver{Plugins: h, Service: m.svc}, conn: m.connect(t, e.alice, "work"), logs: logs}
}

func (m *msEnv) browse(t *testing.T, service, path, cursor string, limit int) wire.Listing {
	t.Helper()
	l, err := m.res.Browse(context.Background(), m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: service, Path: path, Cursor: cursor, Limit: limit})
	if err != nil {
		t.Fatalf("browse %s %q: %v", service, path, err)
	}
	return l
}

func msNames(l wire.Listing) string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Name)
	}
	return strings.Join(out, ",")
}

func entry(t *testing.T, l wire.Listing, name string) wire.Entry {
	t.Helper()
	for _, e := range l.Entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no %q in %s", name, msNames(l))
	return wire.Entry{}
}

// TestMicrosoftSharePoint: sites, libraries, a folder paged by $top and
// @odata.nextLink, a PDF downloaded through Graph's 302 to the download
// host (which gets no Authorization header), an upload, a search whose
// hits' paths are found by walking up their parents.
func TestMicrosoftSharePoint(t *testing.T) {
	m := newMSEnv(t)
	ctx := context.Background()
	sites := m.browse(t, "sharepoint", "", "", 0)
	if mk := entry(t, sites, "Marketing"); mk.Path != spHost+"/sites/Marketing" || !mk.Folder {
		t.Fatalf("site %+v", mk)
	}
	libs := m.browse(t, "sharepoint", spHost+"/sites/Marketing", "", 0)
	if msNames(libs) != "Documents,Archive" || entry(t, libs, "Archive").Path != spHost+"/sites/Marketing/Archive" {
		t.Fatalf("libraries %+v", libs)
	}
	// The site-path form (/sites/…, the tenant's host) pages two at a time.
	var all []string
	cursor, pages := "", 0
	for {
		l := m.browse(t, "sharepoint", "/sites/Marketing/Documents/Reports", cursor, 2)
		pages++
		if len(l.Entries) > 2 {
			t.Fatalf("page of %d", len(l.Entries))
		}
		all = append(all, msNames(l))
		if cursor = l.Next; cursor == "" {
			break
		}
	}
	if pages != 3 || strings.Join(all, ",") != "a-notes.txt,b-plan.txt,camlidl.pdf,d-budget.txt,Old" {
		t.Fatalf("%d pages: %v", pages, all)
	}
	reports := m.browse(t, "sharepoint", spHost+"/sites/Marketing/Documents/Reports", "", 0)
	pdf := entry(t, reports, "camlidl.pdf")
	if pdf.Path != spHost+"/sites/Marketing/Documents/Reports/camlidl.pdf" || pdf.Size != int64(len(m.pdf)) || pdf.MIMEType != "application/pdf" || !entry(t, reports, "Old").Folder {
		t.Fatalf("entries %+v", reports.Entries)
	}
	before := len(m.graph.Requests())
	f, err := m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: "sharepoint", Path: pdf.Path})
	if err != nil || f.Name != "camlidl.pdf" || f.MIMEType != "application/pdf" || !bytes.Equal(f.Data, m.pdf) {
		t.Fatalf("download %q %q %d bytes: %v", f.Name, f.MIMEType, len(f.Data), err)
	}
	var sawDownload bool
	for _, r := range m.graph.Requests()[before:] {
		switch r.Host {
		case spHost:
			sawDownload = true
			if r.Authorization != "" {
				t.Fatalf("the bearer token followed the redirect to the download host: %q", r.Authorization)
			}
		case graphHost:
			if !strings.HasPrefix(r.Authorization, "Bearer ") {
				t.Fatalf("Graph request without the token: %+v", r)
			}
		}
	}
	if !sawDownload {
		t.Fatal("the content did not come from the download host")
	}
	// Upload into a library's folder (Graph's simple upload).
	up, err := m.res.Upload(ctx, m.alice, wire.UploadRequest{Connection: m.conn.ID, Service: "sharepoint", Path: spHost + "/sites/Marketing/Archive",
		Name: "summary.txt", MIMEType: "text/plain", Data: []byte("the summary")})
	if err != nil || up.Path != spHost+"/sites/Marketing/Archive/summary.txt" {
		t.Fatalf("upload %+v %v", up, err)
	}
	if ups := m.graph.Uploads(); len(ups) != 1 || ups[0].Name != "summary.txt" || string(ups[0].Content) != "the summary" || ups[0].DriveID != m.graph.Drive(spHost, "sites/Marketing", "Archive") {
		t.Fatalf("uploads %+v", ups)
	}
	// Search a site's library; the hit's path is walked up from its parents.
	hits, err := m.res.Search(ctx, m.alice, wire.SearchRequest{Connection: m.conn.ID, Service: "sharepoint", Query: spHost + "/sites/Marketing: invoice"})
	if err != nil || len(hits.Entries) != 1 || hits.Entries[0].Path != spHost+"/sites/Marketing/Documents/Reports/Old/2019.txt" {
		t.Fatalf("search %+v %v", hits, err)
	}
	if f, err := m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: "sharepoint", Path: hits.Entries[0].Path}); err != nil || string(f.Data) != "the 2019 invoice" {
		t.Fatalf("download a hit: %q %v", f.Data, err)
	}
}

// TestMicrosoftOneDriveOutlookTeams: the user's drive, mail (folders,
// listMail paged, search, sendMail landing in the fake and in Sent Items),
// calendar events, Teams channels and messages (listed and posted).
func TestMicrosoftOneDriveOutlookTeams(t *testing.T) {
	m := newMSEnv(t)
	ctx := context.Background()
	tg := func(service string) wire.Target { return wire.Target{Connection: m.conn.ID, Service: service} }
	// OneDrive.
	if l := m.browse(t, "onedrive", "", "", 0); msNames(l) != "Personal" {
		t.Fatalf("onedrive root %+v", l)
	}
	if _, err := m.res.Upload(ctx, m.alice, wire.UploadRequest{Connection: m.conn.ID, Service: "onedrive", Path: "Personal", Name: "notes.md", Data: []byte("# notes")}); err != nil {
		t.Fatal(err)
	}
	if l := m.browse(t, "onedrive", "/Personal/", "", 0); msNames(l) != "cv.txt,notes.md" {
		t.Fatalf("onedrive folder %+v", l)
	}
	if f, err := m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: "onedrive", Path: "Personal/cv.txt"}); err != nil || string(f.Data) != "Alice's CV" {
		t.Fatalf("onedrive download %q %v", f.Data, err)
	}
	if hits, err := m.res.Search(ctx, m.alice, wire.SearchRequest{Connection: m.conn.ID, Service: "onedrive", Query: "notes"}); err != nil || len(hits.Entries) != 1 || hits.Entries[0].Path != "Personal/notes.md" {
		t.Fatalf("onedrive search %+v %v", hits, err)
	}
	// Mail: the inbox, newest first, two at a time.
	o := tg("outlook")
	first, err := m.res.ListMail(ctx, m.alice, wire.ListMailRequest{Connection: o.Connection, Service: o.Service, Limit: 2})
	if err != nil || len(first.Messages) != 2 || first.Messages[0].Subject != "Quarterly numbers" || first.Messages[0].From != "bob@contoso.com" || first.Next == "" {
		t.Fatalf("inbox %+v %v", first, err)
	}
	second, err := m.res.ListMail(ctx, m.alice, wire.ListMailRequest{Connection: o.Connection, Service: o.Service, Limit: 2, Cursor: first.Next})
	if err != nil || len(second.Messages) != 1 || second.Messages[0].Subject != "Invoice March" || second.Next != "" {
		t.Fatalf("inbox page 2 %+v %v", second, err)
	}
	folders := m.browse(t, "outlook", "mail", "", 0)
	if !strings.Contains(msNames(folders), "Inbox") || !strings.Contains(msNames(folders), "Sent Items") {
		t.Fatalf("mail folders %+v", folders)
	}
	inbox := m.browse(t, "outlook", entry(t, folders, "Inbox").Path, "", 0)
	if len(inbox.Entries) != 3 || !strings.Contains(inbox.Entries[0].Summary, "bob@contoso.com") {
		t.Fatalf("inbox browse %+v", inbox)
	}
	eml, err := m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: "outlook", Path: inbox.Entries[0].Path})
	if err != nil || !strings.Contains(string(eml.Data), "Subject: Quarterly numbers") || eml.MIMEType != "message/rfc822" {
		t.Fatalf("message download %q %v", eml.Data, err)
	}
	if hits, err := m.res.Search(ctx, m.alice, wire.SearchRequest{Connection: m.conn.ID, Service: "outlook", Query: "invoice"}); err != nil || len(hits.Entries) != 1 || hits.Entries[0].Name != "Invoice March" {
		t.Fatalf("mail search %+v %v", hits, err)
	}
	sent, err := m.res.SendMail(ctx, m.alice, wire.SendMailRequest{Connection: o.Connection, Service: o.Service,
		Mail: wire.Mail{To: []string{"carol@contoso.com"}, Cc: []string{"dan@contoso.com"}, Subject: "Summary", Body: "The report says hello."}})
	if err != nil || sent.Subject != "Summary" {
		t.Fatalf("sendMail %+v %v", sent, err)
	}
	if s := m.graph.Sent(); len(s) != 1 || s[0].To[0] != "carol@contoso.com" || s[0].Cc[0] != "dan@contoso.com" || s[0].Body != "The report says hello." || s[0].From != "alice@contoso.com" {
		t.Fatalf("the fake received %+v", s)
	}
	if l, err := m.res.ListMail(ctx, m.alice, wire.ListMailRequest{Connection: o.Connection, Service: o.Service, Folder: "sentitems"}); err != nil || len(l.Messages) != 1 || l.Messages[0].Subject != "Summary" {
		t.Fatalf("sent items %+v %v", l, err)
	}
	for name, mail := range map[string]wire.Mail{"no recipient": {Subject: "x", Body: "y"}, "not an address": {To: []string{"carol"}, Body: "y"},
		"header injection": {To: []string{"a@b.c\r\nBcc: evil@x.y"}, Body: "y"}} {
		if _, err := m.res.SendMail(ctx, m.alice, wire.SendMailRequest{Connection: o.Connection, Service: o.Service, Mail: mail}); err == nil || !strings.Contains(err.Error(), "invalid") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(m.graph.Sent()) != 1 {
		t.Fatal("a refused message was sent")
	}
	// Calendar: all events, and a window through calendarView.
	if l := m.browse(t, "outlook", "calendar", "", 0); msNames(l) != "Board meeting,Retro" || !strings.Contains(l.Entries[0].Summary, "Room 1") {
		t.Fatalf("events %+v", l)
	}
	if l := m.browse(t, "outlook", "calendar/2026-12-01/2026-12-31", "", 0); msNames(l) != "Retro" {
		t.Fatalf("calendarView %+v", l)
	}
	// Teams: teams, channels, messages newest first; posting.
	if l := m.browse(t, "teams", "", "", 0); msNames(l) != "Marketing" || l.Entries[0].Path != m.teamID {
		t.Fatalf("teams %+v", l)
	}
	if l := m.browse(t, "teams", m.teamID, "", 0); msNames(l) != "General,Plans" || l.Entries[1].Path != m.teamID+"/"+m.plans {
		t.Fatalf("channels %+v", l)
	}
	msgs := m.browse(t, "teams", m.teamID+"/"+m.general, "", 2)
	if len(msgs.Entries) != 2 || !strings.Contains(msgs.Entries[0].Summary, "Bob: see the plan") || msgs.Next == "" {
		t.Fatalf("channel messages %+v", msgs)
	}
	if more := m.browse(t, "teams", m.teamID+"/"+m.general, msgs.Next, 2); len(more.Entries) != 1 || !strings.Contains(more.Entries[0].Summary, "hello team") {
		t.Fatalf("channel messages page 2 %+v", more)
	}
	if all := m.browse(t, "teams", m.teamID+"/"+m.general, "", 200); len(all.Entries) != 3 { // $top capped at Graph's 50
		t.Fatalf("channel messages, limit 200: %+v", all)
	}
	posted, err := m.res.SendMail(ctx, m.alice, wire.SendMailRequest{Connection: m.conn.ID, Service: "teams",
		Mail: wire.Mail{To: []string{m.teamID + "/" + m.plans}, Subject: "Launch", Body: "We launch Monday."}})
	if err != nil || posted.ID == "" {
		t.Fatalf("post %+v %v", posted, err)
	}
	if got := m.graph.ChannelMessages(m.teamID, m.plans); len(got) != 1 || got[0].Content != "We launch Monday." || got[0].Subject != "Launch" {
		t.Fatalf("the channel holds %+v", got)
	}
	if l, err := m.res.ListMail(ctx, m.alice, wire.ListMailRequest{Connection: m.conn.ID, Service: "teams", Folder: m.teamID + "/" + m.plans}); err != nil || len(l.Messages) != 1 || l.Messages[0].Body != "We launch Monday." {
		t.Fatalf("teams listMail %+v %v", l, err)
	}
	if _, err := m.res.Search(ctx, m.alice, wire.SearchRequest{Connection: m.conn.ID, Service: "teams", Query: "x"}); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("teams search: %v", err)
	}
}

// TestMicrosoftBadInput: traversal in every form, forged cursors, sizes
// over the limit, unknown items, another user: clear errors, and nothing
// reaches Graph (or is stored there) for what the connector refuses.
func TestMicrosoftBadInput(t *testing.T) {
	m := newMSEnv(t)
	ctx := context.Background()
	lib := spHost + "/sites/Marketing/Documents"
	before := len(m.graph.Requests())
	for name, p := range map[string]string{
		"dot-dot":             "../../etc/passwd",
		"inside":              lib + "/Reports/../../Archive",
		"encoded":             lib + "/%2e%2e/%2e%2e/x",
		"double encoded":      lib + "/%252e%252e/x",
		"encoded slash":       lib + "/Reports%2f..%2fx",
		"backslash":           lib + `/Reports\..\x`,
		"NUL":                 lib + "/Reports\x00.txt",
		"empty segment":       lib + "//Reports",
		"dot":                 lib + "/./Reports",
		"not a host":          "evil host/sites/x",
		"invalid name":        lib + "/Re:ports",
		"site without a name": spHost + "/sites",
	} {
		for _, svc := range []string{"sharepoint", "onedrive"} {
			if svc == "onedrive" && strings.HasPrefix(name, "not a host") || svc == "onedrive" && name == "site without a name" {
				continue
			}
			_, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: svc, Path: p})
			if err == nil || !strings.Contains(err.Error(), "invalid_path") {
				t.Errorf("%s browse %s: %v", svc, name, err)
			}
			_, err = m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: svc, Path: p})
			if err == nil || !strings.Contains(err.Error(), "invalid_path") {
				t.Errorf("%s download %s: %v", svc, name, err)
			}
		}
	}
	for name, p := range map[string]string{"teams traversal": "../x", "teams bad id": "not-a-team", "outlook traversal": "mail/../../x", "outlook bad folder": "mail/in box"} {
		svc := strings.Fields(name)[0]
		if _, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: svc, Path: p}); err == nil || !strings.Contains(err.Error(), "invalid_path") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := m.res.Upload(ctx, m.alice, wire.UploadRequest{Connection: m.conn.ID, Service: "sharepoint", Path: lib + "/Reports", Name: "../x.txt", Data: []byte("x")}); err == nil || !strings.Contains(err.Error(), "invalid_path") {
		t.Errorf("upload name traversal: %v", err)
	}
	if n := len(m.graph.Requests()) - before; n != 0 {
		t.Fatalf("%d refused paths reached Graph: %+v", n, m.graph.Requests()[before:])
	}
	// Forged cursors: another host, version or scheme, a user in the URL.
	// (A next link on Graph's host and version is opaque and followed:
	// TestMicrosoftOpaqueNextLink.)
	for name, cur := range map[string]string{
		"another host":    "http://evil.test:" + m.port + "/v1.0/drives/x/root/children?$skiptoken=x",
		"another version": "http://" + graphHost + ":" + m.port + "/beta/me/messages?$skip=1",
		"dot segments":    "http://" + graphHost + ":" + m.port + "/v1.0/../beta/me/messages",
		"user in URL":     "http://evil@" + graphHost + ":" + m.port + "/v1.0/drives/x/root/children",
		"another scheme":  "https://" + graphHost + ":" + m.port + "/v1.0/drives/x/root/children",
		"garbage":         "::",
	} {
		_, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: "sharepoint", Path: lib + "/Reports", Cursor: cur})
		if err == nil || !strings.Contains(err.Error(), "invalid_cursor") {
			t.Errorf("cursor %s: %v", name, err)
		}
	}
	for _, r := range m.graph.Requests() {
		if r.Host == "evil.test" || strings.Contains(r.Path, "/beta/") {
			t.Fatalf("a forged cursor was followed: %+v", r)
		}
	}
	// Over the caller's limit: refused from the item's size, before its content.
	before = len(m.graph.Requests())
	_, err := m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: "sharepoint", Path: lib + "/Reports/camlidl.pdf", MaxBytes: 1000})
	if err == nil || !strings.Contains(err.Error(), "too_large") {
		t.Fatalf("over the limit: %v", err)
	}
	for _, r := range m.graph.Requests()[before:] {
		if strings.HasSuffix(r.Path, "/content") || r.Host == spHost {
			t.Fatalf("the content of a file over the limit was fetched: %+v", r)
		}
	}
	// An upload over Graph's file size limit (250 GB) is refused before
	// any request: the connector sees the size, not the bytes.
	before = len(m.graph.Requests())
	b, _ := json.Marshal(wire.UploadRequest{Connection: m.conn.ID, Service: "onedrive", Path: "Personal", Name: "big.bin", Size: 250_000_000_001})
	uctx := connections.WithUpload(toolcall.With(ctx, toolcall.Caller{Principal: m.alice}), connections.BytesSource("big.bin", "", nil))
	res := wasmtest.Plugin(t, m.res.Plugins.(*wasm.Host), "microsoft").Call(uctx, wire.ToolUpload, b, &wasm.CallOptions{Tenant: m.alice.TenantID})
	if res.OK || res.Error == nil || res.Error.Code != "too_large" || len(m.graph.Requests()) != before {
		t.Fatalf("oversize upload: %+v %+v, %d requests", res, res.Error, len(m.graph.Requests())-before)
	}
	// Missing things, folders and files confused, another user.
	for name, tc := range map[string]struct {
		who  tenancy.Principal
		svc  string
		path string
		code string
		dl   bool
	}{
		"unknown file":     {m.alice, "sharepoint", lib + "/Reports/nope.pdf", "not_found", true},
		"unknown library":  {m.alice, "sharepoint", spHost + "/sites/Marketing/Nope", "not_found", false},
		"unknown site":     {m.alice, "sharepoint", spHost + "/sites/Nope/Documents", "not_found", false},
		"folder as file":   {m.alice, "sharepoint", lib + "/Reports", "invalid_path", true},
		"file as folder":   {m.alice, "sharepoint", lib + "/Reports/camlidl.pdf", "invalid_path", false},
		"bob's use":        {m.bob, "sharepoint", lib + "/Reports", "not found", false},
		"unknown service":  {m.alice, "calendar", "", "no connector", false},
		"site as download": {m.alice, "sharepoint", spHost + "/sites/Marketing", "invalid_path", true},
	} {
		var err error
		if tc.dl {
			_, err = m.res.Download(ctx, tc.who, wire.DownloadRequest{Connection: m.conn.ID, Service: tc.svc, Path: tc.path})
		} else {
			_, err = m.res.Browse(ctx, tc.who, wire.BrowseRequest{Connection: m.conn.ID, Service: tc.svc, Path: tc.path})
		}
		if err == nil || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMicrosoftHostileGraph: an expired token is refreshed once after
// Graph's 401 and the request retried; a 429's Retry-After is waited out;
// a long one is the connector's rate_limited; garbage is bad_response; a
// folder cycle ends; a redirect to a host outside the connector is refused.
func TestMicrosoftHostileGraph(t *testing.T) {
	m := newMSEnv(t)
	ctx := context.Background()
	lib := spHost + "/sites/Marketing/Documents"
	// The identity platform no longer takes the access token: 401, one refresh, a retry.
	m.as.RevokeAccess()
	before := len(m.graph.Requests())
	if l := m.browse(t, "onedrive", "Personal", "", 0); msNames(l) != "cv.txt" {
		t.Fatalf("after refresh %+v", l)
	}
	if m.as.Refreshes() != 1 {
		t.Fatalf("%d refreshes, want 1", m.as.Refreshes())
	}
	reqs := m.graph.Requests()[before:]
	if len(reqs) < 2 || reqs[0].Authorization == reqs[1].Authorization || reqs[0].Path != reqs[1].Path {
		t.Fatalf("not retried with a new token: %+v", reqs)
	}
	// The grant revoked: a clear error, connect again.
	m.as.RevokeAccess()
	m.as.RevokeRefresh()
	if _, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: "onedrive"}); err == nil || !strings.Contains(err.Error(), "connection_expired") {
		t.Fatalf("revoked grant: %v", err)
	}
	m.conn = m.connect(t, m.alice, "again")
	// Throttled: Retry-After honoured (on the injected clock), once.
	m.graph.Throttle(4 * time.Second)
	if l := m.browse(t, "onedrive", "Personal", "", 0); msNames(l) != "cv.txt" {
		t.Fatalf("after throttling %+v", l)
	}
	if s := m.clock.Slept(); len(s) != 1 || s[0] != 4*time.Second {
		t.Fatalf("slept %v", s)
	}
	m.graph.Throttle(2 * time.Hour)
	if _, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: "onedrive"}); err == nil || !strings.Contains(err.Error(), "rate_limited") || !strings.Contains(err.Error(), "7200") {
		t.Fatalf("long throttle: %v", err)
	}
	// Garbage in place of JSON.
	for _, op := range []func() error{
		func() error {
			_, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: "sharepoint", Path: lib})
			return err
		},
		func() error {
			_, err := m.res.ListMail(ctx, m.alice, wire.ListMailRequest{Connection: m.conn.ID, Service: "outlook"})
			return err
		},
		func() error {
			_, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: "teams"})
			return err
		},
	} {
		m.graph.Garbage(1)
		if err := op(); err == nil || !strings.Contains(err.Error(), "bad_response") {
			t.Errorf("garbage: %v", err)
		}
	}
	// A folder cycle: Reports' parent made its own child Old.
	orig, _ := m.graph.Item(m.reports)
	m.graph.SetParent(m.reports, m.old)
	done := make(chan error, 1)
	go func() {
		_, err := m.res.Search(ctx, m.alice, wire.SearchRequest{Connection: m.conn.ID, Service: "sharepoint", Query: spHost + "/sites/Marketing: 2019"})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "bad_response") || !strings.Contains(err.Error(), "cycle") {
			t.Fatalf("folder cycle: %v", err)
		}
	case <-time.After(time.Minute): // the plugin's own timeout is 60 s; a loop would hit it
		t.Fatal("the folder cycle did not end")
	}
	// A folder listing its own parent: refused, not offered as a path to follow.
	m.graph.SetParent(m.reports, orig.ParentID)
	m.graph.AlsoList(m.old, m.reports)
	_, err := m.res.Browse(ctx, m.alice, wire.BrowseRequest{Connection: m.conn.ID, Service: "sharepoint", Path: lib + "/Reports/Old"})
	if err == nil || !strings.Contains(err.Error(), "bad_response") || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("a folder listing its parent: %v", err)
	}
	// A download redirected to a host outside the connector's: refused, never reached.
	m.graph.RedirectDownloadsTo("http://evil.test:" + m.port)
	_, err = m.res.Download(ctx, m.alice, wire.DownloadRequest{Connection: m.conn.ID, Service: "onedrive", Path: "Personal/cv.txt"})
	if err == nil || !strings.Contains(err.Error(), "host") {
		t.Fatalf("redirect to another host: %v", err)
	}
	for _, r := range m.graph.Requests() {
		if r.Host == "evil.test" {
			t.Fatalf("a request reached the host outside the connector: %+v", r)
		}
	}
	// No token anywhere the plugin wrote: its logs.
	for _, tok := range m.as.Issued() {
		if strings.Contains(m.logs.String(), tok) {
			t.Fatal("a token is in the connector's logs")
		}
	}
}

// TestMicrosoftTokenNeverEntersTheSandbox: a hostile connector of the
// microsoft provider (msprobe: connprobe's code) lists a folder and
// downloads a file through Graph and its 302 to the download host; its
// result, variables, logs and whole memory hold none of the tokens the
// identity platform issued, while the scan finds what Graph did answer.
func TestMicrosoftTokenNeverEntersTheSandbox(t *testing.T) {
	e := newEnv(t)
	m := newMSWorld(t, e.db)
	c := m.connect(t, e.alice, "work")
	logs := &connectionstest.LogSink{}
	h := m.host(t, logs, nil, "msprobe")
	p := wasmtest.Plugin(t, h, "msprobe")
	base := "http://" + graphHost + ":" + m.port + "/v1.0"
	var results []string
	for _, u := range []string{base + "/me/drive/root:/Personal:/children", base + "/me/drive/root:/Personal/cv.txt:/content"} {
		res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": u})
		if !res.OK {
			t.Fatalf("fetch %s: %+v", u, res.Error)
		}
		results = append(results, res.Text+string(res.Data))
	}
	if !strings.Contains(results[0], "cv.txt") || !strings.Contains(results[1], "Alice") {
		t.Fatalf("fetched %v", results)
	}
	// The token goes to Graph only: not to a download host the connector
	// may reach (redirects, without credentials), nor to any other host.
	before := len(m.graph.Requests())
	for _, u := range []string{"http://" + spHost + ":" + m.port + "/_layouts/15/download.aspx", "http://evil.test:" + m.port + "/"} {
		if res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": u}); res.OK || !strings.Contains(res.Error.Error(), "host_refused") {
			t.Errorf("fetch %s with the connection: %+v %+v", u, res, res.Error)
		}
	}
	if n := len(m.graph.Requests()) - before; n != 0 {
		t.Fatalf("%d refused requests were sent", n)
	}
	vars := call(t, p, e.alice, "getVar", map[string]any{})
	if marker := call(t, p, e.alice, "scan", map[string]any{"masked": mask("Alice's CV")}); !marker.OK || strings.TrimSpace(string(marker.Data)) == "0" {
		t.Fatalf("the scan does not find what Graph answered: %+v", marker)
	}
	toks := m.as.Issued()
	if len(toks) == 0 {
		t.Fatal("no token issued")
	}
	for _, tok := range toks {
		for where, text := range map[string]string{"result": strings.Join(results, ""), "variables": vars.Text + string(vars.Data), "logs": logs.String()} {
			if strings.Contains(text, tok) || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(tok))) {
				t.Errorf("a token is in the plugin's %s", where)
			}
		}
		if scan := call(t, p, e.alice, "scan", map[string]any{"masked": mask(tok)}); !scan.OK || strings.TrimSpace(string(scan.Data)) != "0" {
			t.Errorf("a token is in the plugin's memory: %+v", scan)
		}
	}
}

// TestMicrosoftProviderDefaults: AGENTHOST_OAUTH_PROVIDERS=microsoft needs
// only the app registration (client id, secret, redirect URL): the
// endpoints of the tenant's identity platform, Graph and its scopes are
// defaults the operator may override.
func TestMicrosoftProviderDefaults(t *testing.T) {
	ctx := context.Background()
	us := connectionstest.NewUsers(t)
	db, p := us.DB, us.Alice
	env := map[string]string{"AGENTHOST_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("k"), 32)), "AGENTHOST_OAUTH_PROVIDERS": "microsoft",
		"AGENTHOST_OAUTH_MICROSOFT_CLIENT_ID": "app-id", "AGENTHOST_OAUTH_MICROSOFT_CLIENT_SECRET": "s", "AGENTHOST_OAUTH_MICROSOFT_REDIRECT_URL": redirect}
	ordinary := oauth.New("app-id", "s", redirect)
	defer ordinary.Close()
	ordinary.AdminConsent = []string{"ChannelMessage.Read.All", "Group.Read.All", "Sites.FullControl.All"}
	// The defaults need no administrator's consent: ChannelMessage.Read.All
	// does (Graph permissions reference, "Admin consent required: Yes"), so
	// it is asked for only when the user chooses Teams (incremental consent).
	for name, tc := range map[string]struct {
		tenant, scopes, want  string
		services              []string
		wantScopes, notScopes []string
	}{
		"common":         {"", "", "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?", nil, []string{"offline_access", "Files.ReadWrite.All", "Mail.Send"}, []string{"ChannelMessage.Read.All"}},
		"one tenant":     {"contoso.onmicrosoft.com", "", "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize?", nil, []string{"Sites.ReadWrite.All"}, nil},
		"fewer scopes":   {"", "offline_access Files.Read", "https://login.microsoftonline.com/common/", nil, []string{"Files.Read"}, nil},
		"tenant escaped": {"a/../b", "", "https://login.microsoftonline.com/a%2F..%2Fb/oauth2/v2.0/authorize?", nil, nil, nil},
		"files only":     {"", "", "https://login.microsoftonline.com/common/", []string{"files"}, []string{"offline_access", "Files.ReadWrite.All"}, []string{"Mail.Send", "ChannelMessage.Read.All"}},
		"teams chosen":   {"", "", "https://login.microsoftonline.com/common/", []string{"files", "teams"}, []string{"Files.ReadWrite.All", "ChannelMessage.Read.All", "ChannelMessage.Send"}, []string{"Mail.Send"}},
	} {
		env["AGENTHOST_OAUTH_MICROSOFT_TENANT"], env["AGENTHOST_OAUTH_MICROSOFT_SCOPES"] = tc.tenant, tc.scopes
		svc, err := connections.FromEnv(func(k string) string { return env[k] }, db)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		authURL, err := svc.StartAuthorization(ctx, p, "microsoft", "work", tc.services...)
		if err != nil || !strings.HasPrefix(authURL, tc.want) {
			t.Errorf("%s: %s %v", name, authURL, err)
			continue
		}
		scope := " " + mustQuery(t, authURL).Get("scope") + " "
		for _, s := range tc.wantScopes {
			if !strings.Contains(scope, " "+s+" ") {
				t.Errorf("%s: scope %q lacks %s", name, scope, s)
			}
		}
		for _, s := range tc.notScopes {
			if strings.Contains(scope, " "+s+" ") {
				t.Errorf("%s: scope %q asks for %s", name, scope, s)
			}
		}
		// An ordinary user (no administrator's consent) can connect with
		// the defaults and with any choice but Teams.
		if !slices.Contains(tc.services, "teams") && tc.scopes == "" && ordinary.Consent(authURL) == "" {
			t.Errorf("%s: an ordinary user cannot consent to %q", name, scope)
		}
		if q := mustQuery(t, authURL); q.Has("access_type") {
			t.Errorf("%s: access_type sent to Microsoft: %s", name, authURL)
		}
		if tc.scopes != "" && strings.Contains(scope, "Mail.Send") {
			t.Errorf("%s: the operator's scopes were not kept: %q", name, scope)
		}
	}
	// Without the app registration there is no provider.
	delete(env, "AGENTHOST_OAUTH_MICROSOFT_CLIENT_ID")
	if _, err := connections.FromEnv(func(k string) string { return env[k] }, db); err == nil || !strings.Contains(err.Error(), "client id") {
		t.Fatalf("no client id: %v", err)
	}
}

// TestMicrosoftOpaqueNextLink: a folder listed by path gets a next link
// that names it by id, without the folder path (the shape reported in
// OneDrive/onedrive-api-docs#774 and microsoftgraph/microsoft-graph-docs#3341;
// "Paging Microsoft Graph data": use the next link as is), and the
// connector follows it to the folder's next page.
func TestMicrosoftOpaqueNextLink(t *testing.T) {
	m := newMSEnv(t)
	l := m.browse(t, "sharepoint", "/sites/Marketing/Documents/Reports", "", 2)
	if l.Next == "" || strings.Contains(l.Next, "Reports") {
		t.Fatalf("the fake's next link %q should drop the folder path", l.Next)
	}
	l2 := m.browse(t, "sharepoint", "/sites/Marketing/Documents/Reports", l.Next, 2)
	if got := msNames(l2); got != "camlidl.pdf,d-budget.txt" {
		t.Fatalf("second page %q", got)
	}
}
