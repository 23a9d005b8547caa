package datasources_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/google"
	"github.com/agenthost/agenthost/host/connections/fakes/graph"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

const callback = "https://agenthost.example/api/connections/callback"

// pagedSource is a data source over a fake provider whose listing of the
// source pages by two entries and can be told to fail its next later page.
type pagedSource struct {
	remote  datasources.Remote
	connID  string
	service string
	path    string
	// failNextPage makes the provider's next request for a later page fail.
	failNextPage func()
	// firstPages counts the provider's requests for the source's first page.
	firstPages func() int
	// host and listing name the failing request as the status must: the
	// provider's host and a part of the listing's path.
	host, listing string
	// first are the files the first page leads to, with a word each
	// holds; rest the files of the page after.
	first, rest map[string]string
	content     map[string][]byte
}

// addOAuthConnection makes alice's OAuth connection to provider prov
// reached at hosts (each resolved to the fakes' loopback port), with the
// connector plugin loaded; it returns the resolver and the connection.
func addOAuthConnection(t *testing.T, e *env, as *oauth.Server, prov connections.Provider, port string, hosts []string, plugin string) (*connections.Resolver, connections.Connection) {
	t.Helper()
	dns := connectionstest.DNS{}
	opts := wasm.EgressOptions{Resolver: dns}
	for _, h := range hosts {
		opts.AllowPrivateHosts = append(opts.AllowPrivateHosts, h+":"+port)
		dns[h] = "127.0.0.1"
	}
	svc, err := connections.New(connections.Options{Store: e.w.DB, Sealer: connectionstest.Sealer(t),
		Check:     connections.CheckOptions{AllowPrivateHosts: opts.AllowPrivateHosts, Resolver: dns},
		Providers: []connections.Provider{prov}, TokenClient: as.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{(&connections.Capability{Service: svc, Egress: opts}).Wasm()}}, plugin)
	ctx := context.Background()
	authURL, err := svc.StartAuthorization(ctx, e.alice, prov.Name, "work")
	if err != nil {
		t.Fatal(err)
	}
	code := as.Consent(authURL)
	if code == "" {
		t.Fatalf("consent refused %s", authURL)
	}
	u, _ := url.Parse(authURL)
	c, err := svc.CompleteAuthorization(ctx, e.alice, u.Query().Get("state"), code)
	if err != nil {
		t.Fatal(err)
	}
	return &connections.Resolver{Plugins: h, Service: svc}, c
}

// jiraSource: the env's project PROJ, two issues a page: PROJ-1 (a PDF and
// a note) and PROJ-2 (nothing) first, PROJ-3 (a checklist) after.
func jiraSource(t *testing.T, e *env) pagedSource {
	e.site.MaxPage = 2
	return pagedSource{remote: e.resolver, connID: e.conn.ID, service: "issues", path: "PROJ",
		failNextPage: func() { e.site.FailNextPage(1) },
		firstPages: func() int {
			n := 0
			for _, r := range e.site.Requests() {
				if strings.Contains(r, "/search/jql?") && !strings.Contains(r, "nextPageToken") {
					n++
				}
			}
			return n
		},
		host: "acme.atlassian.net", listing: "/rest/api/3/search/jql",
		first:   map[string]string{"notes.txt": "amd64", "camlidl.pdf": "camlidl"},
		rest:    map[string]string{"checklist.txt": "checklist"},
		content: map[string][]byte{"notes.txt": e.note, "camlidl.pdf": e.pdf, "checklist.txt": []byte("- build\n- test\n")},
	}
}

// texts are three text files and a word of each, by name.
var texts = map[string]string{"a-minutes.txt": "aardvark", "b-plan.txt": "bumblebee", "c-budget.txt": "capybara"}

func textOf(name string) []byte { return []byte("The " + texts[name] + " file, " + name + ".\n") }

// graphSource: alice's OneDrive folder Personal (Microsoft Graph) with
// three files, children paged by two.
func graphSource(t *testing.T, e *env) pagedSource {
	as := oauth.New("ms-client", "ms-secret", callback)
	t.Cleanup(as.Close)
	g := graph.New(as.Valid, "alice@contoso.com", "Alice")
	t.Cleanup(g.Close)
	g.MaxPage = 2
	u, _ := url.Parse(g.URL)
	content := map[string][]byte{}
	for name := range texts {
		content[name] = textOf(name)
		g.Put(g.Drive("", "", ""), "Personal/"+name, "text/plain", content[name])
	}
	prov := connections.Provider{Name: "microsoft", Hosts: []string{"graph.microsoft.com"}, DownloadHosts: []string{"*.sharepoint.com"},
		BaseURL: "http://graph.microsoft.com:" + u.Port() + "/v1.0",
		OAuth: &connections.OAuth{ClientID: "ms-client", ClientSecret: "ms-secret", AuthURL: as.AuthURL(), TokenURL: as.TokenURL(),
			RedirectURL: callback, Scopes: []string{"offline_access", "Files.Read"}}}
	res, c := addOAuthConnection(t, e, as, prov, u.Port(), []string{"graph.microsoft.com", "contoso.sharepoint.com"}, "microsoft")
	return pagedSource{remote: res, connID: c.ID, service: "onedrive", path: "Personal",
		failNextPage: func() { g.FailNextPage(1) },
		firstPages: func() int {
			n := 0
			for _, r := range g.Requests() {
				if strings.HasSuffix(r.Path, "/children") && !strings.Contains(r.Query, "skiptoken") {
					n++
				}
			}
			return n
		},
		host: "graph.microsoft.com", listing: "/children",
		first:   map[string]string{"a-minutes.txt": texts["a-minutes.txt"], "b-plan.txt": texts["b-plan.txt"]},
		rest:    map[string]string{"c-budget.txt": texts["c-budget.txt"]},
		content: content,
	}
}

// driveSource: alice's Google Drive folder Projekte with three files,
// files.list paged by two.
func driveSource(t *testing.T, e *env) pagedSource {
	as := oauth.New("g-client", "g-secret", callback)
	t.Cleanup(as.Close)
	g := google.New(as.Valid, "alice@acme.example")
	t.Cleanup(g.Close)
	g.MaxPage = 2
	u, _ := url.Parse(g.URL)
	folder := g.AddFolder("Projekte", "")
	content := map[string][]byte{}
	for name := range texts {
		content[name] = textOf(name)
		g.Add(google.File{Name: name, MIMEType: "text/plain", Parents: []string{folder}, Content: content[name]})
	}
	base := "http://www.googleapis.com:" + u.Port()
	prov := connections.Provider{Name: "google", Hosts: []string{"www.googleapis.com:" + u.Port()}, BaseURL: base,
		OAuth: &connections.OAuth{ClientID: "g-client", ClientSecret: "g-secret", AuthURL: as.AuthURL(), TokenURL: as.TokenURL(),
			RedirectURL: callback, Scopes: []string{"https://www.googleapis.com/auth/drive.readonly"}}}
	res, c := addOAuthConnection(t, e, as, prov, u.Port(), []string{"www.googleapis.com"}, "google")
	return pagedSource{remote: res, connID: c.ID, service: "drive", path: "Projekte",
		failNextPage: func() { g.FailNextPage(1) },
		firstPages: func() int {
			n := 0
			for _, r := range g.Requests() {
				// The folder's listing, not a lookup of a name in it
				// (a download resolving its path).
				q, _ := url.ParseQuery(r.Query)
				if r.Path == "/drive/v3/files" && q.Get("q") == "'"+folder+"' in parents and trashed = false" && q.Get("pageToken") == "" {
					n++
				}
			}
			return n
		},
		host: "www.googleapis.com", listing: "/drive/v3/files",
		first:   map[string]string{"a-minutes.txt": texts["a-minutes.txt"], "b-plan.txt": texts["b-plan.txt"]},
		rest:    map[string]string{"c-budget.txt": texts["c-budget.txt"]},
		content: content,
	}
}

// TestSyncKeepsWhatItGot (issue 29, item 6): for Jira, Microsoft Graph
// and Google Drive, on SQLite and PostgreSQL, a sync whose listing fails
// on its second page keeps the files the first page led to, stored and
// searchable; its status names the failing request (method, host, path,
// the provider's status; no query, which may carry tokens). The next
// attempt resumes from the stored cursor: the first page is not asked for
// again, the rest is stored and the source ends idle. The sync after
// that lists from the top.
func TestSyncKeepsWhatItGot(t *testing.T) {
	providers := map[string]func(*testing.T, *env) pagedSource{"jira": jiraSource, "graph": graphSource, "drive": driveSource}
	for _, db := range []string{"sqlite", "postgres"} {
		for name, source := range providers {
			t.Run(db+"/"+name, func(t *testing.T) {
				o := worldtest.Options{}
				if db == "postgres" {
					o.DatabaseURL = testenv.Postgres(t)
				}
				e := newEnvWith(t, o)
				ps := source(t, e)
				testKeepsWhatItGot(t, e, ps)
			})
		}
	}
}

func testKeepsWhatItGot(t *testing.T, e *env, ps pagedSource) {
	ctx := context.Background()
	svc := datasources.New(e.w.DB, ps.remote, e.files, e.queue, datasources.Config{Now: e.clock.Now}, nil)
	d, err := svc.Create(ctx, e.alice, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: ps.connID, Service: ps.service, Path: ps.path, Label: "Source"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c := e.queue.all()[0]
	ps.failNextPage()
	res, err := svc.Sync(ctx, c.id, c.seq, 1, 3)
	if err == nil || res.New != len(ps.first) || res.Failed != 1 {
		t.Fatalf("sync failing on page 2: %+v %v", res, err)
	}
	got, _ := svc.Get(ctx, e.alice, d.ID)
	if got.State != dsrecord.SyncRetrying || !strings.Contains(got.LastError, "GET "+ps.host) || !strings.Contains(got.LastError, ps.listing) ||
		!strings.Contains(got.LastError, "HTTP 500") || strings.Contains(got.LastError, "?") {
		t.Fatalf("the status does not name the failing request: %+v", got)
	}
	ing := ingest.New(e.w.DB, e.w.Blobs, extract.New(e.host), nil)
	searcher := search.New(e.w.DB, nil, nil)
	for name, word := range ps.first {
		fs := e.filesNamed(t, name)
		if len(fs) != 1 || !bytes.Equal(e.read(t, fs[0].ID), ps.content[name]) {
			t.Fatalf("%s of the first page: %+v", name, fs)
		}
		if _, err := ing.Ingest(ctx, fs[0].ID, false); err != nil {
			t.Fatal(err)
		}
		hits, err := searcher.Search(ctx, e.alice, kindex.Query{Text: word, WorkspaceID: e.w.Workspace, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			found = found || h.FileID == fs[0].ID
		}
		if !found {
			t.Fatalf("%s is not found by %q: %+v", name, word, hits)
		}
	}
	for name := range ps.rest {
		if len(e.filesNamed(t, name)) != 0 {
			t.Fatalf("%s of the failed page was stored", name)
		}
	}

	// The retry resumes at the page that failed.
	firsts := ps.firstPages()
	res, err = svc.Sync(ctx, c.id, c.seq, 2, 3)
	if err != nil || res.New != len(ps.rest) {
		t.Fatalf("resumed sync: %+v %v", res, err)
	}
	if n := ps.firstPages() - firsts; n != 0 {
		t.Fatalf("the resumed sync asked for the first page %d times; %s", n, got.Resume)
	}
	for name := range ps.rest {
		if fs := e.filesNamed(t, name); len(fs) != 1 || !bytes.Equal(e.read(t, fs[0].ID), ps.content[name]) {
			t.Fatalf("%s after the resumed sync: %+v", name, fs)
		}
	}
	if got, _ := svc.Get(ctx, e.alice, d.ID); got.State != dsrecord.SyncIdle || got.LastError != "" || got.LastSynced == nil {
		t.Fatalf("after the resumed sync: %+v", got)
	}

	// Whole again: the next sync lists from the top and finds nothing new.
	e.clock.Add(time.Minute)
	if _, err := svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c = e.queue.all()[1]
	res, err = svc.Sync(ctx, c.id, c.seq, 1, 3)
	if err != nil || res.New != 0 || res.Unchanged != len(ps.first)+len(ps.rest) || ps.firstPages()-firsts != 1 {
		t.Fatalf("the sync after: %+v %v, first page asked %d times", res, err, ps.firstPages()-firsts)
	}
}
