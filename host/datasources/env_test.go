package datasources_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/jira"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

// claims is a datasources.Queue that keeps what it was asked to run, for
// tests that run the sync themselves (attempt by attempt).
type claims struct {
	mu   sync.Mutex
	jobs []claim
}

type claim struct {
	id  string
	seq int64
}

func (q *claims) EnqueueSync(_ context.Context, id string, seq int64) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, claim{id, seq})
	return int64(len(q.jobs)), nil
}

func (q *claims) all() []claim {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]claim(nil), q.jobs...)
}

// env: a store, alice and bob (members of one workspace) and carol of
// another tenant; the built-in Jira connector (plugins/jira) and the PDF
// extractor loaded; a fake Jira Cloud site reached as acme.atlassian.net
// with PROJ-1 (a PDF and a note), PROJ-2 (nothing) and PROJ-3 (a text);
// alice's connection to it.
type env struct {
	w             *worldtest.World
	alice, bob    tenancy.Principal
	carol         tenancy.Principal
	site          *jira.Server
	conns         *connections.Service
	resolver      *connections.Resolver
	host          *wasm.Host
	files         *files.Service
	index         *connectionstest.Recorder
	conn          connections.Connection
	base          string
	pdf, note     []byte
	clock         *connectionstest.Clock
	queue         *claims
	svc           *datasources.Service
	noteID, pdfID string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, worldtest.Options{})
}

// newEnvWith is newEnv in the world o describes (PostgreSQL, say).
func newEnvWith(t *testing.T, o worldtest.Options) *env {
	t.Helper()
	ctx := context.Background()
	w := worldtest.New(t, o)
	e := &env{w: w, alice: w.P, clock: connectionstest.NewClock(time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)), queue: &claims{}, index: &connectionstest.Recorder{}}
	bob, err := w.DB.CreateUser(ctx, tenancy.User{TenantID: w.Tenant.ID, Email: "bob@t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.Workspace, UserID: bob.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	e.bob = tenancy.Principal{TenantID: w.Tenant.ID, UserID: bob.ID}
	t2, err := w.DB.CreateTenant(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	carol, err := w.DB.CreateUser(ctx, tenancy.User{TenantID: t2.ID, Email: "carol@other", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	e.carol = tenancy.Principal{TenantID: t2.ID, UserID: carol.ID, Admin: true}

	e.conns, err = connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: w.DB, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	e.site = jira.New("alice@acme.example", "jira-api-token-1")
	t.Cleanup(e.site.Close)
	e.pdf, err = os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "deb-camlidl-1.04.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	e.note = []byte("Release notes: camlidl 1.04 builds on amd64.\n")
	p1 := e.site.AddIssue("PROJ-1", "Port camlidl", "In Progress",
		jira.Attachment{Filename: "camlidl.pdf", MIMEType: "application/pdf", Content: e.pdf},
		jira.Attachment{Filename: "notes.txt", MIMEType: "text/plain", Content: e.note})
	e.pdfID, e.noteID = p1.Attachments[0].ID, p1.Attachments[1].ID
	e.site.AddIssue("PROJ-2", "Nothing attached", "To Do")
	e.site.AddIssue("PROJ-3", "Checklist", "Done", jira.Attachment{Filename: "checklist.txt", MIMEType: "text/plain", Content: []byte("- build\n- test\n")})
	e.site.AddIssue("OPS-1", "Not in the project", "To Do", jira.Attachment{Filename: "ops.txt", MIMEType: "text/plain", Content: []byte("ops")})

	u, _ := url.Parse(e.site.URL)
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"acme.atlassian.net:" + u.Port()}, Resolver: connectionstest.DNS{"acme.atlassian.net": "127.0.0.1"}}
	e.host = wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{(&connections.Capability{Service: e.conns, Egress: opts}).Wasm()}}, "jira", "pdf", "office")
	e.resolver = &connections.Resolver{Plugins: e.host, Service: e.conns}
	e.base = "http://acme.atlassian.net:" + u.Port()
	e.conn, err = e.conns.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "acme", Auth: "basic", BaseURL: e.base,
		Account: "alice@acme.example", Token: "jira-api-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	e.files = w.Files.WithIndexer(e.index, nil)
	e.svc = e.service(e.queue)
	return e
}

// service is a data source service on the env's store, connectors, files
// and clock, enqueueing to q (another host's service when called twice).
func (e *env) service(q datasources.Queue) *datasources.Service {
	return datasources.New(e.w.DB, e.resolver, e.files, q, datasources.Config{Now: e.clock.Now}, nil).WithNotifier(notifications.New(e.w.DB, nil))
}

// contentRequests counts the attachment downloads the site served.
func (e *env) contentRequests() int {
	n := 0
	for _, r := range e.site.Requests() {
		if strings.Contains(r, "/attachment/content/") {
			n++
		}
	}
	return n
}

// filesNamed lists the workspace's files named name.
func (e *env) filesNamed(t *testing.T, name string) []filemeta.Item {
	t.Helper()
	page, err := e.files.List(context.Background(), e.alice, filemeta.Filter{WorkspaceID: e.w.Workspace, Name: name, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []filemeta.Item
	for _, f := range page.Items {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// project makes alice's data source of the Jira project PROJ.
func (e *env) project(t *testing.T, auto bool) datasources.DataSource {
	t.Helper()
	d, err := e.svc.Create(context.Background(), e.alice, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID,
		Service: "issues", Path: "PROJ", Label: "Jira PROJ", SourceType: "jiraProject", AutoSync: auto, IntervalSeconds: 3600})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
