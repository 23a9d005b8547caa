package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/jira"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

type jiraEnv struct {
	*env
	site     *jira.Server
	resolver *connections.Resolver
	base     string // the site as the connection names it
	conn     connections.Connection
	pdf      []byte
}

// newJiraEnv: the built-in Jira connector (plugins/jira) loaded with the
// connection capability, a fake Jira Cloud site reached as
// acme.atlassian.net, and alice's basic (e-mail + API token) connection.
func newJiraEnv(t testing.TB) *jiraEnv { return newJiraEnvWith(t, nil) }

// newJiraEnvWith: as newJiraEnv; with as, the jira provider is also
// connected by OAuth 2.0 (3LO) at that authorisation server, with
// Atlassian's defaults but for its endpoints, and its API root (the
// gateway and accessible-resources) on the fake as api.atlassian.com.
func newJiraEnvWith(t testing.TB, as *oauth.Server) *jiraEnv {
	t.Helper()
	ctx := context.Background()
	site := jira.New("alice@acme.example", "jira-api-token-1")
	t.Cleanup(site.Close)
	u, _ := url.Parse(site.URL)
	port := u.Port()
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"acme.atlassian.net:" + port, "api.atlassian.com:" + port, "down.atlassian.net"},
		Resolver: connectionstest.DNS{"acme.atlassian.net": "127.0.0.1", "api.atlassian.com": "127.0.0.1", "down.atlassian.net": "127.0.0.1"}}
	e := newEnv(t, func(o *connections.Options) {
		// Connections are tried when made, through the same egress rules.
		o.Check = connections.CheckOptions{AllowPrivateHosts: opts.AllowPrivateHosts, Resolver: opts.Resolver}
		if as == nil {
			return
		}
		for i, p := range o.Providers {
			if p.Name == "jira" {
				o.Providers[i] = connections.JiraOAuth("http://api.atlassian.com:"+port, connections.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret,
					AuthURL: as.AuthURL(), TokenURL: as.TokenURL(), RedirectURL: as.RedirectURI})
			}
		}
	})
	pdf, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "deb-camlidl-1.04.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	site.AddIssue("PROJ-1", "Invoice for the camlidl port", "In Progress", jira.Attachment{Filename: "camlidl.pdf", MIMEType: "application/pdf", Content: pdf})
	site.AddIssue("PROJ-2", "Second issue", "To Do")
	site.AddIssue("PROJ-3", "Third issue", "Done")
	site.AddIssue("OPS-1", "Operations", "To Do")
	for i, name := range []string{"PROJ board", "OPS board", "Release board"} {
		site.AddBoard(jira.Board{ID: i + 1, Name: name, Type: "scrum", Issues: []string{"PROJ-1", "PROJ-2", "PROJ-3"}})
	}
	capab := &connections.Capability{Service: e.svc, Egress: opts}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{capab.Wasm()}}, "jira")
	je := &jiraEnv{env: e, site: site, resolver: &connections.Resolver{Plugins: h, Service: e.svc}, base: "http://acme.atlassian.net:" + port, pdf: pdf}
	je.conn, err = e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "acme", Auth: "basic", BaseURL: je.base,
		Account: "alice@acme.example", Token: "jira-api-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	return je
}

func target(c connections.Connection, service string) wire.Target {
	return wire.Target{Connection: c.ID, Service: service}
}

func TestJiraIssuesAndAttachments(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	tg := target(je.conn, "issues")
	// A project's issues, one page at a time (enhanced search's nextPageToken).
	first, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Entries) != 2 || first.Entries[0].Name != "PROJ-1" || first.Next == "" || !strings.Contains(first.Entries[0].Summary, "In Progress") {
		t.Fatalf("first page %+v", first)
	}
	second, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ", Limit: 2, Cursor: first.Next})
	if err != nil || len(second.Entries) != 1 || second.Entries[0].Name != "PROJ-3" || second.Next != "" {
		t.Fatalf("second page %+v %v", second, err)
	}
	// The issue's attachment, downloaded byte for byte.
	atts, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1"})
	if err != nil || len(atts.Entries) != 1 || atts.Entries[0].Name != "camlidl.pdf" || atts.Entries[0].Size != int64(len(je.pdf)) {
		t.Fatalf("attachments %+v %v", atts, err)
	}
	f, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: tg.Connection, Service: tg.Service, Path: atts.Entries[0].Path})
	if err != nil || f.Name != "camlidl.pdf" || f.MIMEType != "application/pdf" || !bytes.Equal(f.Data, je.pdf) {
		t.Fatalf("download %q %q %d bytes, %v", f.Name, f.MIMEType, len(f.Data), err)
	}
	// Over the caller's size limit: refused, clearly.
	if _, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: tg.Connection, Service: tg.Service, Path: atts.Entries[0].Path, MaxBytes: 1000}); err == nil || !strings.Contains(err.Error(), "too_large") {
		t.Fatalf("over the limit: %v", err)
	}
	// Search by text.
	hits, err := je.resolver.Search(ctx, je.alice, wire.SearchRequest{Connection: tg.Connection, Service: tg.Service, Query: `invoice`})
	if err != nil || len(hits.Entries) != 1 || hits.Entries[0].Name != "PROJ-1" {
		t.Fatalf("search %+v %v", hits, err)
	}
	// Upload an attachment (Jira's XSRF header and multipart part "file").
	up, err := je.resolver.Upload(ctx, je.alice, wire.UploadRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-2", Name: "notes.txt", MIMEType: "text/plain", Data: []byte("hello")})
	if err != nil || up.Name != "notes.txt" || len(je.site.Issue("PROJ-2").Attachments) != 1 {
		t.Fatalf("upload %+v %v", up, err)
	}
	// Bad input and missing things: clear errors.
	for name, tc := range map[string]struct {
		req  wire.BrowseRequest
		code string
	}{
		"unknown issue":  {wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-99"}, "not_found"},
		"traversal":      {wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "../../admin"}, "invalid_path"},
		"root":           {wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service}, "invalid_path"},
		"unknown svc":    {wire.BrowseRequest{Connection: je.conn.ID, Service: "mail"}, "no connector"},
		"bob's use":      {wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ"}, "not found"},
		"forged cursor":  {wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ", Cursor: "x"}, "invalid"},
		"bad attachment": {wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1/../../x"}, "invalid_path"},
	} {
		who := je.alice
		if name == "bob's use" {
			who = je.bob
		}
		_, err := je.resolver.Browse(ctx, who, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A site answering garbage: a clear error, nothing made of it.
	je.site.Garbage(1)
	if _, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ"}); err == nil || !strings.Contains(err.Error(), "bad_response") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1/../../etc/passwd"}); err == nil || !strings.Contains(err.Error(), "invalid_path") {
		t.Errorf("download traversal: %v", err)
	}
}

func TestJiraBoardsPaging(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	tg := target(je.conn, "boards")
	var names []string
	cursor := ""
	for range 5 {
		page, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			names = append(names, e.Name)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if strings.Join(names, ",") != "PROJ board,OPS board,Release board" {
		t.Fatalf("boards %v", names)
	}
	issues, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "2"})
	if err != nil || len(issues.Entries) != 3 {
		t.Fatalf("board issues %+v %v", issues, err)
	}
	if _, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: tg.Connection, Service: tg.Service, ID: "1"}); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("download from boards: %v", err)
	}
}

// TestJiraThrottledAndRejected: a 429 is waited out for its Retry-After (on
// the injected clock) and retried once; a token Jira refuses is a clear
// "connection rejected" without a retry; a revoked connection is refused
// before any request.
func TestJiraThrottledAndRejected(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	tg := target(je.conn, "issues")
	je.site.Throttle(3 * time.Second)
	if _, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1"}); err != nil {
		t.Fatal(err)
	}
	if slept := je.clock.Slept(); len(slept) != 1 || slept[0] != 3*time.Second {
		t.Fatalf("slept %v", slept)
	}
	// Throttled for longer than the host waits: the connector says so.
	je.site.Throttle(time.Hour)
	_, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1"})
	if err == nil || !strings.Contains(err.Error(), "rate_limited") || !strings.Contains(err.Error(), "3600") {
		t.Fatalf("long throttle: %v", err)
	}
	stale, err := je.svc.AddToken(ctx, je.alice, connections.NewToken{Provider: "jira", Label: "stale", Auth: "basic", BaseURL: je.base,
		Account: "alice@acme.example", Token: "an-old-token"})
	if err != nil {
		t.Fatal(err)
	}
	before := len(je.site.Requests())
	_, err = je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: stale.ID, Service: "issues", Path: "PROJ-1"})
	if err == nil || !strings.Contains(err.Error(), "connection_rejected") || strings.Contains(err.Error(), "an-old-token") {
		t.Fatalf("rejected token: %v", err)
	}
	if n := len(je.site.Requests()) - before; n != 1 {
		t.Fatalf("%d requests for a rejected token, want 1 (no retry)", n)
	}
	if err := je.svc.Revoke(ctx, je.alice, je.conn.ID); err != nil {
		t.Fatal(err)
	}
	before = len(je.site.Requests())
	_, err = je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1"})
	if !errors.Is(err, connections.ErrRevoked) || len(je.site.Requests()) != before {
		t.Fatalf("revoked: %v", err)
	}
}

// TestJiraScopedTokenGateway: a scoped API token (a user's or a service
// account's) reaches the site only through Atlassian's gateway,
// https://api.atlassian.com/ex/jira/{cloudId} (Atlassian, "Manage API
// tokens for your Atlassian account"); the connection names that URL and
// the connector speaks to it like to the site. Before, the connector's
// hosts held only *.atlassian.net and the request was host_refused.
func TestJiraScopedTokenGateway(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	gw := strings.Replace(je.base, "acme.atlassian.net", "api.atlassian.com", 1) + "/ex/jira/" + je.site.CloudID
	conn, err := je.svc.AddToken(ctx, je.alice, connections.NewToken{Provider: "jira", Label: "scoped", Auth: "basic", BaseURL: gw,
		Account: "alice@acme.example", Token: je.site.ScopedToken})
	if err != nil {
		t.Fatal(err)
	}
	page, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: conn.ID, Service: "issues", Path: "PROJ", Limit: 2})
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Name != "PROJ-1" {
		t.Fatalf("through the gateway: %+v %v", page, err)
	}
	if page.Entries[0].WebURL != "" {
		t.Errorf("web URL %q: the gateway is no site people open", page.Entries[0].WebURL)
	}
	last := je.site.Requests()[len(je.site.Requests())-1]
	if !strings.HasPrefix(last, "GET /ex/jira/"+je.site.CloudID+"/rest/api/3/search/jql?") {
		t.Fatalf("request %q is not the gateway's", last)
	}
	// The same scoped token on the site's own URL is refused (401), as
	// reported in sooperset/mcp-atlassian#968.
	onSite, err := je.svc.AddToken(ctx, je.alice, connections.NewToken{Provider: "jira", Label: "scoped-on-site", Auth: "basic", BaseURL: je.base,
		Account: "alice@acme.example", Token: je.site.ScopedToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: onSite.ID, Service: "issues", Path: "PROJ"}); err == nil || !strings.Contains(err.Error(), "connection_rejected") {
		t.Fatalf("scoped token on the site: %v", err)
	}
}

// TestJiraSearchTextEscaped: the user's text is searched for as itself.
// Atlassian's "Search syntax for text fields" reads + - & | ! ( ) { } [ ]
// ^ ~ * ? \ : as operators and says to escape them with two backslashes
// in JQL; a quote or backslash inside a JQL string is escaped with one.
func TestJiraSearchTextEscaped(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	je.site.AddIssue("PROJ-7", `Crash in parse("a[0]") on C:\temp + more`, "To Do")
	for _, q := range []string{`parse("a[0]")`, `C:\temp`, `[0]`, `+ more`, `"a`} {
		hits, err := je.resolver.Search(ctx, je.alice, wire.SearchRequest{Connection: je.conn.ID, Service: "issues", Query: q})
		if err != nil || len(hits.Entries) != 1 || hits.Entries[0].Name != "PROJ-7" {
			t.Errorf("search %q: %+v %v", q, hits, err)
		}
	}
}

// TestConnectionCheckedWhenMade: a connection is tried as it is made
// (Jira's "Get current user", GET /rest/api/3/myself): one that works is
// checked; a token Jira refuses (401) and a site that does not answer are
// kept but listed failed with the error (issue 28 saw such a connection
// listed active), and no message carries the token.
func TestConnectionCheckedWhenMade(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	if je.conn.Status != connections.StatusChecked || je.conn.LastError != "" || je.conn.CheckedAt.IsZero() {
		t.Fatalf("a working connection: %q %q %v", je.conn.Status, je.conn.LastError, je.conn.CheckedAt)
	}
	if last := je.site.Requests()[len(je.site.Requests())-1]; last != "GET /rest/api/3/myself" {
		t.Fatalf("the check was %q", last)
	}
	refused, err := je.svc.AddToken(ctx, je.alice, connections.NewToken{Provider: "jira", Label: "refused", Auth: "basic", BaseURL: je.base,
		Account: "alice@acme.example", Token: "made-up-token-123"})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing listens on a port just closed: the site does not answer.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	down, err := je.svc.AddToken(ctx, je.alice, connections.NewToken{Provider: "jira", Label: "down", Auth: "basic",
		BaseURL: "http://down.atlassian.net:" + strconv.Itoa(downPort), Account: "alice@acme.example", Token: "made-up-token-456"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    connections.Connection
		want string
	}{{refused, "401"}, {down, "down.atlassian.net"}} {
		if tc.c.Status != connections.StatusFailed || !strings.Contains(tc.c.LastError, tc.want) || strings.Contains(tc.c.LastError, "made-up-token") {
			t.Errorf("%s: %q %q", tc.c.Label, tc.c.Status, tc.c.LastError)
		}
	}
	listed, err := je.svc.List(ctx, je.alice)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, c := range listed {
		status[c.Label] = c.Status
	}
	if status["acme"] != connections.StatusChecked || status["refused"] != connections.StatusFailed || status["down"] != connections.StatusFailed {
		t.Fatalf("listed %v", status)
	}
	// Checked again once the site answers the token: failed no more.
	je.site.Token = "made-up-token-123"
	again, err := je.svc.Check(ctx, je.alice, refused.ID)
	if err != nil || again.Status != connections.StatusChecked || again.LastError != "" {
		t.Fatalf("checked again: %+v %v", again, err)
	}
}

// TestJiraOAuth3LO: Atlassian's OAuth 2.0 (3LO) as its "OAuth 2.0 (3LO)
// apps" documents: the consent URL carries audience=api.atlassian.com and
// prompt=consent (the server refuses it otherwise); the grant names no
// site, so the cloud id comes from accessible-resources and requests go
// to api.atlassian.com/ex/jira/{cloudId}; refresh tokens rotate (each
// refresh answers a new one and the old one is refused after use), so the
// second refresh must use the refresh token the first one answered.
func TestJiraOAuth3LO(t *testing.T) {
	as := oauth.New("jira-client", "jira-secret", redirect)
	as.Require = map[string]string{"audience": "api.atlassian.com", "prompt": "consent"}
	t.Cleanup(as.Close)
	je := newJiraEnvWith(t, as)
	je.site.Bearer = as.Valid
	ctx := context.Background()
	authURL, err := je.svc.StartAuthorization(ctx, je.alice, "jira", "acme 3LO")
	if err != nil {
		t.Fatal(err)
	}
	code := as.Consent(authURL)
	if code == "" {
		t.Fatalf("the authorisation server refused %s", authURL)
	}
	q, _ := url.ParseQuery(authURL[strings.Index(authURL, "?")+1:])
	c, err := je.svc.CompleteAuthorization(ctx, je.alice, q.Get("state"), code)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(c.BaseURL, "/ex/jira/"+je.site.CloudID) || c.Status != connections.StatusChecked {
		t.Fatalf("3LO connection %+v", c)
	}
	browse := func() {
		t.Helper()
		page, err := je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: c.ID, Service: "issues", Path: "PROJ", Limit: 2})
		if err != nil || len(page.Entries) != 2 {
			t.Fatalf("browse with 3LO: %+v %v", page, err)
		}
	}
	browse()
	// The access token ends early (401): refreshed once, with rotation.
	for i := 1; i <= 2; i++ {
		as.RevokeAccess()
		browse()
		if as.Refreshes() != i {
			t.Fatalf("%d refreshes after %d expiries", as.Refreshes(), i)
		}
	}
}

// adfText, adfNode and friends build ADF documents as Atlassian's
// "Atlassian Document Format" structure reference describes the nodes
// (doc, paragraph, heading, bulletList, orderedList, listItem, codeBlock,
// table, tableRow, tableHeader, tableCell, blockquote, text with marks,
// mention, hardBreak, inlineCard).
func adfText(t string, marks ...map[string]any) map[string]any {
	n := map[string]any{"type": "text", "text": t}
	if len(marks) > 0 {
		ms := []any{}
		for _, m := range marks {
			ms = append(ms, m)
		}
		n["marks"] = ms
	}
	return n
}

func adfNode(typ string, attrs map[string]any, content ...any) map[string]any {
	n := map[string]any{"type": typ, "content": content}
	if attrs != nil {
		n["attrs"] = attrs
	}
	return n
}

// TestJiraIssueRichText: downloading an issue's path (PROJ-8) answers the
// issue as Markdown: the v3 description and comments, which Jira Cloud
// answers only as ADF, read with their structure, not as the empty or
// flattened text a reader of plain strings would make of them.
func TestJiraIssueRichText(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	p := func(c ...any) map[string]any { return adfNode("paragraph", nil, c...) }
	li := func(c ...any) map[string]any { return adfNode("listItem", nil, c...) }
	cell := func(typ, text string) map[string]any { return adfNode(typ, nil, p(adfText(text))) }
	desc := map[string]any{"type": "doc", "version": 1, "content": []any{
		adfNode("heading", map[string]any{"level": 2}, adfText("Steps")),
		adfNode("orderedList", map[string]any{"order": 1}, li(p(adfText("Open the "), adfText("settings", map[string]any{"type": "strong"}))),
			li(p(adfText("Run "), adfText("make test", map[string]any{"type": "code"})),
				adfNode("bulletList", nil, li(p(adfText("on SQLite")))))),
		adfNode("codeBlock", map[string]any{"language": "go"}, adfText("func main() {\n\tpanic(1)\n}")),
		p(adfText("Ask "), map[string]any{"type": "mention", "attrs": map[string]any{"id": "5b10a2844c20165700ede21g", "text": "@Ada Lovelace"}},
			adfText(" or read "), adfText("the guide", map[string]any{"type": "link", "attrs": map[string]any{"href": "https://example.com/guide"}}),
			map[string]any{"type": "hardBreak"}, adfText("second line")),
		adfNode("table", nil, adfNode("tableRow", nil, cell("tableHeader", "Backend"), cell("tableHeader", "Result")),
			adfNode("tableRow", nil, cell("tableCell", "PostgreSQL"), cell("tableCell", "fails"))),
		adfNode("blockquote", nil, p(adfText("quoted"))),
	}}
	is := je.site.AddIssue("PROJ-8", "Rich issue", "To Do")
	is.DescriptionADF = desc
	is.Assignee = "Ada Lovelace"
	is.Comments = []jira.Comment{{Author: "Bob", Body: map[string]any{"type": "doc", "version": 1, "content": []any{
		adfNode("bulletList", nil, li(p(adfText("first"))), li(p(adfText("second")))),
	}}}}
	f, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: je.conn.ID, Service: "issues", Path: "PROJ-8"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(f.Data)
	if f.Name != "PROJ-8.md" || f.MIMEType != "text/markdown" {
		t.Errorf("file %q %q", f.Name, f.MIMEType)
	}
	for _, want := range []string{
		"# PROJ-8: Rich issue", "Status: To Do", "Assignee: Ada Lovelace",
		"## Steps", "1. Open the **settings**", "2. Run `make test`", "  - on SQLite",
		"```go\nfunc main() {\n\tpanic(1)\n}\n```",
		"Ask @Ada Lovelace or read [the guide](https://example.com/guide)\nsecond line",
		"| Backend | Result |\n| --- | --- |\n| PostgreSQL | fails |",
		"> quoted",
		"### Bob, ", "- first\n- second",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

// TestJiraIssueActions: the connector's own actions, which change the
// site and are not read-only: an issue created with its description
// written as ADF (v3 refuses a plain string), a comment as ADF, a
// transition found by the status it leads to, an assignment by account
// id. A read-only or standard tool is no action.
func TestJiraIssueActions(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	tg := target(je.conn, "issues")
	var made struct{ ID, Key, WebURL string }
	err := je.resolver.Act(ctx, je.alice, tg, "createIssue", map[string]any{"connection": tg.Connection, "service": tg.Service,
		"project": "PROJ", "issueType": "Bug", "summary": "Crash on start", "description": "It crashes.\n\nSteps:\nrun it"}, &made)
	if err != nil || made.Key != "PROJ-4" || made.WebURL != je.base+"/browse/PROJ-4" {
		t.Fatalf("create: %+v %v", made, err)
	}
	f, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-4"})
	if err != nil || !strings.Contains(string(f.Data), "It crashes.\n\nSteps:\nrun it") {
		t.Fatalf("the description as written: %q %v", f.Data, err)
	}
	var ref struct{ ID, Key string }
	if err := je.resolver.Act(ctx, je.alice, tg, "addComment", map[string]any{"connection": tg.Connection, "service": tg.Service,
		"issue": "PROJ-4", "body": "Seen on **1.2**"}, &ref); err != nil || ref.ID == "" {
		t.Fatalf("comment: %+v %v", ref, err)
	}
	if err := je.resolver.Act(ctx, je.alice, tg, "transitionIssue", map[string]any{"connection": tg.Connection, "service": tg.Service,
		"issue": "PROJ-4", "to": "In Progress"}, &ref); err != nil || je.site.Issue("PROJ-4").Status != "In Progress" {
		t.Fatalf("transition: %v", err)
	}
	err = je.resolver.Act(ctx, je.alice, tg, "transitionIssue", map[string]any{"connection": tg.Connection, "service": tg.Service,
		"issue": "PROJ-4", "to": "Shipped"}, &ref)
	if err == nil || !strings.Contains(err.Error(), "Start progress") {
		t.Fatalf("unknown transition: %v", err)
	}
	if err := je.resolver.Act(ctx, je.alice, tg, "assignIssue", map[string]any{"connection": tg.Connection, "service": tg.Service,
		"issue": "PROJ-4", "accountId": "5b10a2844c20165700ede21g"}, &ref); err != nil || je.site.Issue("PROJ-4").Assignee != "5b10a2844c20165700ede21g" {
		t.Fatalf("assign: %v", err)
	}
	f, _ = je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-4"})
	if !strings.Contains(string(f.Data), "Seen on **1.2**") || !strings.Contains(string(f.Data), "Status: In Progress") {
		t.Fatalf("after the actions:\n%s", f.Data)
	}
	for _, tool := range []string{"externalBrowse", "browse", "nope"} {
		if err := je.resolver.Act(ctx, je.alice, tg, tool, map[string]any{}, &ref); err == nil || !strings.Contains(err.Error(), "unsupported") {
			t.Errorf("Act(%s): %v", tool, err)
		}
	}
}

// TestJiraActionsAreExternalAndReachable (issue 29, item 2): the Jira
// connector's write tools declare their side effect in the manifest
// (createIssue create, addComment post, transitionIssue and assignIssue
// update), so the approval policy holds them; the agent reaches them
// through the connection tools' externalAction, itself declared external
// (asked for by default), with the user's connection; a read or an
// undeclared tool is no action.
func TestJiraActionsAreExternalAndReachable(t *testing.T) {
	je := newJiraEnv(t)
	var jiraPlugin *wasm.Plugin
	for _, pl := range je.resolver.Plugins.Plugins() {
		if pl.Name() == "jira" {
			jiraPlugin = pl
		}
	}
	for tool, want := range map[string]string{"createIssue": "create", "addComment": "post", "transitionIssue": "update", "assignIssue": "update"} {
		d, ok := jiraPlugin.Manifest().Tool(tool)
		if !ok || d.External != want || d.ReadOnly {
			t.Errorf("%s: external %q, want %q (%+v)", tool, d.External, want, d)
		}
	}

	w := connectionstest.NewAgent(t, "jira")
	u, _ := url.Parse(je.site.URL)
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"acme.atlassian.net:" + u.Port()}, Resolver: connectionstest.DNS{"acme.atlassian.net": "127.0.0.1"}}
	svc, err := connections.New(connections.Options{Check: connections.CheckOptions{Off: true}, Store: w.DB, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := svc.AddToken(w.Context(), w.P, connections.NewToken{Provider: "jira", Label: "acme", Auth: "basic", BaseURL: je.base,
		Account: "alice@acme.example", Token: "jira-api-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	toolsCap := &connections.ToolsCapability{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{w.FileBridge(), (&connections.Capability{Service: svc, Egress: opts}).Wasm(), toolsCap.Wasm()}},
		"jira", "connections")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}
	var act *wasm.ToolInfo
	for _, ti := range h.Tools() {
		if ti.Name == "externalAction" {
			act = &ti
		}
	}
	if act == nil || act.External == "" || act.ReadOnly {
		t.Fatalf("externalAction among the agent's tools, external: %+v", act)
	}
	call := func(args map[string]any) wasm.Result {
		b, _ := json.Marshal(args)
		return h.Call(w.Context(), "externalAction", b, &wasm.CallOptions{Tenant: w.P.TenantID})
	}
	r := call(map[string]any{"connection": conn.ID, "service": "issues", "action": "createIssue",
		"arguments": map[string]any{"project": "PROJ", "summary": "Made by the agent", "description": "From a tool call."}})
	if !r.OK || !strings.Contains(r.Text, "PROJ-4") || je.site.Issue("PROJ-4") == nil || je.site.Issue("PROJ-4").Summary != "Made by the agent" {
		t.Fatalf("createIssue through externalAction: %+v", r)
	}
	for _, action := range []string{"browse", "externalBrowse", "nope"} {
		if r := call(map[string]any{"connection": conn.ID, "service": "issues", "action": action, "arguments": map[string]any{}}); r.OK || !strings.Contains(r.Error.Error(), "unsupported") {
			t.Errorf("externalAction %s: %+v", action, r)
		}
	}
}

// TestJiraDataCenter (issue 29, item 2): a connection whose deployment is
// datacenter speaks Data Center's REST v2 to a site that follows
// Atlassian's Data Center REST documentation (fakes/jira NewDataCenter):
// the personal access token as a bearer token, the check by
// /rest/api/2/myself, a project's issues paged by startAt over
// /rest/api/2/search (never Cloud's search/jql), the description as the
// wiki markup it is, attachments by v2, and the actions writing text as
// text and assigning by user name. The site is named under the
// connector's hosts (*.atlassian.net; a server elsewhere needs a copy of
// the connector naming it, docs/connectors.md), so it is the deployment,
// not the name, that makes it Data Center. An unknown deployment is
// refused.
func TestJiraDataCenter(t *testing.T) {
	site := jira.NewDataCenter("dc-pat-1")
	t.Cleanup(site.Close)
	site.MaxPage = 2
	u, _ := url.Parse(site.URL)
	port := u.Port()
	host := "jira-dc.atlassian.net"
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{host + ":" + port}, Resolver: connectionstest.DNS{host: "127.0.0.1"}}
	e := newEnv(t, func(o *connections.Options) {
		o.Check = connections.CheckOptions{AllowPrivateHosts: opts.AllowPrivateHosts, Resolver: opts.Resolver}
	})
	site.AddIssue("PROJ-1", "Port camlidl", "In Progress", jira.Attachment{Filename: "notes.txt", MIMEType: "text/plain", Content: []byte("notes")})
	site.Issue("PROJ-1").Description = "h2. Steps\n* build it\n* run *it*"
	site.AddIssue("PROJ-2", "Second", "To Do")
	site.AddIssue("PROJ-3", "Third", "Done")
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{(&connections.Capability{Service: e.svc, Egress: opts}).Wasm()}}, "jira")
	res := &connections.Resolver{Plugins: h, Service: e.svc}
	ctx := context.Background()
	base := "http://" + host + ":" + port
	if _, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "bad", Auth: "token", BaseURL: base, Deployment: "server", Token: "dc-pat-1"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("an unknown deployment: %v", err)
	}
	conn, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "dc", Auth: "token", BaseURL: base, Deployment: connections.DeploymentDataCenter, Token: "dc-pat-1"})
	if err != nil {
		t.Fatal(err)
	}
	if conn.Status != connections.StatusChecked || conn.Deployment != connections.DeploymentDataCenter {
		t.Fatalf("the Data Center connection: %+v", conn)
	}
	tg := target(conn, "issues")
	var keys []string
	cursor, pages := "", 0
	for {
		l, err := res.Browse(ctx, e.alice, wire.BrowseRequest{Connection: conn.ID, Service: "issues", Path: "PROJ", Cursor: cursor, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, en := range l.Entries {
			keys = append(keys, en.Name)
		}
		if cursor = l.Next; cursor == "" || pages > 5 {
			break
		}
	}
	if strings.Join(keys, ",") != "PROJ-1,PROJ-2,PROJ-3" || pages != 2 {
		t.Fatalf("issues %v in %d pages", keys, pages)
	}
	f, err := res.Download(ctx, e.alice, wire.DownloadRequest{Connection: conn.ID, Service: "issues", Path: "PROJ-1"})
	if err != nil || !strings.Contains(string(f.Data), "h2. Steps\n* build it\n* run *it*") {
		t.Fatalf("the issue as text: %q %v", f.Data, err)
	}
	atts, err := res.Browse(ctx, e.alice, wire.BrowseRequest{Connection: conn.ID, Service: "issues", Path: "PROJ-1"})
	if err != nil || len(atts.Entries) != 1 {
		t.Fatalf("attachments %+v %v", atts, err)
	}
	if f, err := res.Download(ctx, e.alice, wire.DownloadRequest{Connection: conn.ID, Service: "issues", Path: atts.Entries[0].Path}); err != nil || string(f.Data) != "notes" {
		t.Fatalf("attachment %q %v", f.Data, err)
	}
	var made struct{ Key string }
	if err := res.Act(ctx, e.alice, tg, "createIssue", map[string]any{"connection": conn.ID, "service": "issues", "project": "PROJ",
		"summary": "Crash", "description": "It *crashes*."}, &made); err != nil || made.Key != "PROJ-4" || site.Issue("PROJ-4").Description != "It *crashes*." {
		t.Fatalf("create on Data Center: %+v %v", made, err)
	}
	if err := res.Act(ctx, e.alice, tg, "assignIssue", map[string]any{"connection": conn.ID, "service": "issues", "issue": "PROJ-4", "accountId": "alice"}, &made); err != nil ||
		site.Issue("PROJ-4").Assignee != "alice" {
		t.Fatalf("assign by name: %v", err)
	}
	for _, r := range site.Requests() {
		if strings.Contains(r, "/rest/api/3/") {
			t.Fatalf("Cloud's API asked of Data Center: %s", r)
		}
	}
}

// TestConnectorErrorNamesTheRequest (issue 29, item 6): a connector call
// that fails after a provider request the provider refused names that
// request as the host sent it: method, host, path and status, never the
// query (Jira's redirect=false here; elsewhere tokens). A failure that
// follows an answered request (a page that is not JSON) names none.
func TestConnectorErrorNamesTheRequest(t *testing.T) {
	je := newJiraEnv(t)
	ctx := context.Background()
	id := je.site.Issue("PROJ-1").Attachments[0].ID
	je.site.FailContent(1)
	_, err := je.resolver.Download(ctx, je.alice, wire.DownloadRequest{Connection: je.conn.ID, Service: "issues", Path: "PROJ-1/" + id})
	var ce *connections.ConnectorError
	if !errors.As(err, &ce) || ce.Request == nil {
		t.Fatalf("a refused download: %v", err)
	}
	u, _ := url.Parse(je.base)
	want := connections.ProviderRequest{Method: "GET", Host: u.Host, Path: "/rest/api/3/attachment/content/" + id, Status: 500}
	if *ce.Request != want || !strings.Contains(err.Error(), "GET "+u.Host+"/rest/api/3/attachment/content/"+id+" answered HTTP 500") || strings.Contains(err.Error(), "redirect=") {
		t.Fatalf("the request named: %+v in %v", ce.Request, err)
	}
	je.site.Garbage(1)
	_, err = je.resolver.Browse(ctx, je.alice, wire.BrowseRequest{Connection: je.conn.ID, Service: "issues", Path: "PROJ"})
	if !errors.As(err, &ce) || ce.Code != "bad_response" || ce.Request != nil {
		t.Fatalf("a garbage answer: %+v %v", ce, err)
	}
}
