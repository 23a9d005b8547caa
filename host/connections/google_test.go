package connections_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/host/egress"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/google"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
	"golang.org/x/text/encoding/japanese"
)

const (
	docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// corpus reads a file of testdata/corpus.
func corpus(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// googleProvider is the provider "google" as an operator would configure
// it, with the fake OAuth server's endpoints and the fake API reached as
// www.googleapis.com and gmail.googleapis.com on the test port.
func googleProvider(as *oauth.Server, port, base string) connections.Provider {
	return connections.Provider{Name: "google", Hosts: []string{"www.googleapis.com:" + port, "gmail.googleapis.com:" + port}, BaseURL: base,
		OAuth: &connections.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret, AuthURL: as.AuthURL(), TokenURL: as.TokenURL(),
			RedirectURL: as.RedirectURI, Scopes: []string{"https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/gmail.send"}}}
}

// connectGoogle runs the authorisation code grant for p against as.
func connectGoogle(t testing.TB, svc *connections.Service, as *oauth.Server, p tenancy.Principal) connections.Connection {
	t.Helper()
	ctx := context.Background()
	authURL, err := svc.StartAuthorization(ctx, p, "google", "work")
	if err != nil {
		t.Fatal(err)
	}
	code := as.Consent(authURL)
	if code == "" {
		t.Fatalf("the provider refused %s", authURL)
	}
	c, err := svc.CompleteAuthorization(ctx, p, mustQuery(t, authURL).Get("state"), code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type googleEnv struct {
	*env
	g        *google.Server
	gsvc     *connections.Service
	resolver *connections.Resolver
	conn     connections.Connection
	logs     *connectionstest.LogSink
	port     string
	// seeded drive
	finanzen, planID string
	pdf, docx, xlsx  []byte
}

// newGoogleEnv: the built-in Google connector (plugins/google) with the
// connection capability, the fake Drive and Gmail reached as Google's
// hosts, and alice's OAuth connection. apiHost names the provider's API
// root host ("" for www.googleapis.com).
func newGoogleEnv(t testing.TB, apiHost string) *googleEnv {
	t.Helper()
	e := newEnv(t)
	g := google.New(e.as.Valid, "alice@acme.example")
	t.Cleanup(g.Close)
	u, _ := url.Parse(g.URL)
	port := u.Port()
	if apiHost == "" {
		apiHost = "www.googleapis.com"
	}
	base := "http://" + apiHost + ":" + port
	gsvc, err := connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: e.db, Sealer: connectionstest.Sealer(t), Providers: []connections.Provider{googleProvider(e.as, port, base)},
		TokenClient: e.as.Client(), Now: e.clock.Now, Sleep: e.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"www.googleapis.com", "gmail.googleapis.com", "evil.example"}
	dns := connectionstest.DNS{}
	opts := wasm.EgressOptions{Resolver: dns}
	for _, h := range hosts {
		opts.AllowPrivateHosts = append(opts.AllowPrivateHosts, h+":"+port)
		dns[h] = "127.0.0.1"
	}
	capab := &connections.Capability{Service: gsvc, Egress: opts}
	logs := &connectionstest.LogSink{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{capab.Wasm()}, Logs: logs}, "google")
	ge := &googleEnv{env: e, g: g, gsvc: gsvc, resolver: &connections.Resolver{Plugins: h, Service: gsvc}, logs: logs, port: port,
		pdf: corpus(t, "pdf/deb-camlidl-1.04.pdf"), docx: corpus(t, "office/docx/textract-raw_text.docx"), xlsx: corpus(t, "office/xlsx/textract-raw_text.xlsx")}
	ge.conn = connectGoogle(t, gsvc, e.as, e.alice)
	ge.seed()
	return ge
}

// seed fills My Drive: /Finanzen with a PDF, an .xlsx, a Google Doc, a
// Google Sheet and notes; /Archiv.
func (ge *googleEnv) seed() {
	g := ge.g
	ge.finanzen = g.AddFolder("Finanzen", "")
	g.AddFolder("Archiv", "")
	g.Add(google.File{Name: "Report.pdf", MIMEType: "application/pdf", Parents: []string{ge.finanzen}, Content: ge.pdf})
	g.Add(google.File{Name: "Budget-2026.xlsx", MIMEType: xlsxType, Parents: []string{ge.finanzen}, Content: ge.xlsx})
	ge.planID = g.Add(google.File{Name: "Plan", MIMEType: google.DocumentType, Parents: []string{ge.finanzen},
		Exports: map[string][]byte{docxType: ge.docx}, Text: "The quarterly plan for the camlidl port."})
	g.Add(google.File{Name: "Forecast", MIMEType: google.SpreadsheetType, Parents: []string{ge.finanzen}, Exports: map[string][]byte{xlsxType: ge.xlsx}})
	for _, n := range []string{"note-1.txt", "note-2.txt", "note-3.txt"} {
		g.Add(google.File{Name: n, MIMEType: "text/plain", Parents: []string{ge.finanzen}, Content: []byte("note " + n)})
	}
	g.Add(google.File{Name: "old.txt", MIMEType: "text/plain", Parents: []string{ge.finanzen}, Content: []byte("gone"), Trashed: true})
}

func (ge *googleEnv) browse(p string, limit int, cursor string) (wire.Listing, error) {
	return ge.resolver.Browse(context.Background(), ge.alice, wire.BrowseRequest{Connection: ge.conn.ID, Service: "drive", Path: p, Limit: limit, Cursor: cursor})
}

func (ge *googleEnv) download(p string, max int64) (wire.File, error) {
	return ge.resolver.Download(context.Background(), ge.alice, wire.DownloadRequest{Connection: ge.conn.ID, Service: "drive", Path: p, MaxBytes: max})
}

func names(l wire.Listing) []string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Name)
	}
	return out
}

// TestGoogleDrive: browse My Drive and a folder page by page, download a
// PDF byte for byte and Google documents exported (a Doc to DOCX, a Sheet
// addressed by its export name), upload small (multipart) and large
// (resumable) files, search by text.
func TestGoogleDrive(t *testing.T) {
	ge := newGoogleEnv(t, "")
	ctx := context.Background()
	root, err := ge.browse("", 0, "")
	if err != nil || strings.Join(names(root), ",") != "Archiv,Finanzen" || !root.Entries[1].Folder || root.Entries[1].Path != "/Finanzen" {
		t.Fatalf("My Drive: %+v %v", root, err)
	}
	// /Finanzen three at a time, folders first then by name; trashed left out.
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		l, err := ge.browse("/Finanzen", 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Entries) > 3 {
			t.Fatalf("page of %d", len(l.Entries))
		}
		all = append(all, names(l)...)
		if cursor = l.Next; cursor == "" {
			break
		}
	}
	if got := strings.Join(all, ","); got != "Budget-2026.xlsx,Forecast,note-1.txt,note-2.txt,note-3.txt,Plan,Report.pdf" {
		t.Fatalf("/Finanzen: %s", got)
	}
	// A PDF, byte for byte.
	f, err := ge.download("/Finanzen/Report.pdf", 0)
	if err != nil || f.Name != "Report.pdf" || f.MIMEType != "application/pdf" || !bytes.Equal(f.Data, ge.pdf) {
		t.Fatalf("pdf: %q %q %d bytes %v", f.Name, f.MIMEType, len(f.Data), err)
	}
	// A Google Doc: exported to DOCX.
	f, err = ge.download("/Finanzen/Plan", 0)
	if err != nil || f.Name != "Plan.docx" || f.MIMEType != docxType || !bytes.Equal(f.Data, ge.docx) {
		t.Fatalf("doc: %q %q %d bytes %v", f.Name, f.MIMEType, len(f.Data), err)
	}
	// A Google Sheet named by its export name; a real .xlsx by its name.
	for _, p := range []string{"/Finanzen/Forecast.xlsx", "/Finanzen/Budget-2026.xlsx"} {
		f, err = ge.download(p, 0)
		if err != nil || f.MIMEType != xlsxType || !bytes.Equal(f.Data, ge.xlsx) || !strings.HasSuffix(f.Name, ".xlsx") {
			t.Fatalf("%s: %q %q %v", p, f.Name, f.MIMEType, err)
		}
	}
	var exported bool
	for _, r := range ge.g.Requests() {
		if r.Path == "/drive/v3/files/"+ge.planID+"/export" && strings.Contains(r.Query, url.QueryEscape(docxType)) && r.Host == "www.googleapis.com:"+ge.port {
			exported = true
		}
	}
	if !exported {
		t.Fatal("no export request for the Doc")
	}
	// Upload: small by multipart, large by a resumable session.
	up, err := ge.resolver.Upload(ctx, ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: "summary.txt",
		MIMEType: "text/plain", Data: []byte("Q3 revenue rose.")})
	if err != nil || up.Path != "/Finanzen/summary.txt" || up.ID == "" {
		t.Fatalf("upload: %+v %v", up, err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 6<<20/16)
	upBig, err := ge.resolver.Upload(ctx, ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: "big.bin", Data: big})
	if err != nil || upBig.Size != int64(len(big)) {
		t.Fatalf("large upload: %+v %v", upBig, err)
	}
	// A session whose bytes Google refuses, and whose status query fails
	// too, creates nothing (one failed chunk alone is resumed:
	// TestUploadDriveResumed; the host retries a 503 three times,
	// TestServerBusyRetried).
	ge.g.FailUploads(8)
	if _, err := ge.resolver.Upload(ctx, ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: "lost.bin", Data: big}); err == nil ||
		!strings.Contains(err.Error(), "google_error") {
		t.Fatalf("failed session: %v", err)
	}
	ups := ge.g.Uploads()
	if len(ups) != 2 || ups[0].Name != "summary.txt" || string(ups[0].Content) != "Q3 revenue rose." || ups[0].Parents[0] != ge.finanzen ||
		ups[1].Name != "big.bin" || !bytes.Equal(ups[1].Content, big) || ups[1].Parents[0] != ge.finanzen {
		t.Fatalf("uploads %+v", ups)
	}
	var kinds []string
	for _, r := range ge.g.Requests() {
		if strings.HasPrefix(r.Path, "/upload/") {
			kinds = append(kinds, r.Method+" "+mustQuery(t, "?"+r.Query).Get("uploadType"))
		}
	}
	// The failed session: its chunk four times (the first try and three
	// retries of a 503), then its status query four times.
	if strings.Join(kinds, ",") != "POST multipart,POST resumable,PUT resumable,POST resumable"+strings.Repeat(",PUT resumable", 8) {
		t.Fatalf("upload requests %v", kinds)
	}
	// Search by text: hits carry the id form, which downloads.
	hits, err := ge.resolver.Search(ctx, ge.alice, wire.SearchRequest{Connection: ge.conn.ID, Service: "drive", Query: "quarterly"})
	if err != nil || len(hits.Entries) != 1 || hits.Entries[0].Name != "Plan" || hits.Entries[0].Path != "id:"+ge.planID {
		t.Fatalf("search %+v %v", hits, err)
	}
	if f, err := ge.download(hits.Entries[0].Path, 0); err != nil || f.Name != "Plan.docx" {
		t.Fatalf("download a hit: %v", err)
	}
	// A quote in the query is escaped, not a way out of the string.
	if _, err := ge.resolver.Search(ctx, ge.alice, wire.SearchRequest{Connection: ge.conn.ID, Service: "drive", Query: `x' or name contains '`}); err != nil {
		t.Fatalf("quoted search: %v", err)
	}
	// Every request went to Drive's host with the connection's token.
	for _, r := range ge.g.Requests() {
		if r.Host != "www.googleapis.com:"+ge.port || !ge.as.Valid(strings.TrimPrefix(r.Authorization, "Bearer ")) {
			t.Fatalf("request %+v", r)
		}
	}
}

// TestGoogleDriveRefusals: traversal and encoded traversal, over-size,
// an ambiguous name, a folder cycle, garbage, another user's connection,
// a file where a folder is needed; none sends what it should not.
func TestGoogleDriveRefusals(t *testing.T) {
	ge := newGoogleEnv(t, "")
	ctx := context.Background()
	before := len(ge.g.Requests())
	for _, p := range []string{"/Finanzen/../Archiv", "/Finanzen/%2e%2e/x", "/Finanzen/%252e%252e/x", "/Finanzen/a%2Fb", "/Fin\x00anzen",
		`..\..\etc`, "id:../../gmail/v1/users/me/messages/send", "/Finanzen//x", "/./Finanzen", "id:a%2Fb"} {
		if _, err := ge.browse(p, 0, ""); err == nil || !strings.Contains(err.Error(), "invalid_path") {
			t.Errorf("browse %q: %v", p, err)
		}
		if _, err := ge.download(p, 0); err == nil || !strings.Contains(err.Error(), "invalid_path") {
			t.Errorf("download %q: %v", p, err)
		}
	}
	if _, err := ge.resolver.Download(ctx, ge.alice, wire.DownloadRequest{Connection: ge.conn.ID, Service: "drive", ID: "x/../y"}); err == nil || !strings.Contains(err.Error(), "invalid_path") {
		t.Errorf("download id with a slash: %v", err)
	}
	for _, name := range []string{"../x.txt", "a/b.txt", "..", "x\x00.txt", "%2e%2e"} {
		_, err := ge.resolver.Upload(ctx, ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: name, Data: []byte("x")})
		if err == nil || !strings.Contains(err.Error(), "invalid_name") {
			t.Errorf("upload name %q: %v", name, err)
		}
	}
	if n := len(ge.g.Requests()) - before; n != 0 {
		t.Fatalf("refused paths sent %d requests", n)
	}
	// Over the size limit: refused by the file's size, before its content is asked for.
	_, err := ge.download("/Finanzen/Report.pdf", 1000)
	if err == nil || !strings.Contains(err.Error(), "too_large") {
		t.Fatalf("over-size: %v", err)
	}
	// An export is sized only by its bytes: refused after, and Google's own
	// 10 MB export limit is a clear too_large.
	if _, err := ge.download("/Finanzen/Plan", 1000); err == nil || !(strings.Contains(err.Error(), "too_large") || strings.Contains(err.Error(), "over the limit")) {
		t.Fatalf("over-size export: %v", err)
	}
	ge.g.SetExportLimit(100)
	if _, err := ge.download("/Finanzen/Plan", 0); err == nil || !strings.Contains(err.Error(), "too_large") {
		t.Fatalf("over Google's export limit: %v", err)
	}
	ge.g.SetExportLimit(10 << 20)
	for _, r := range ge.g.Requests() {
		if strings.Contains(r.Query, "alt=media") {
			t.Fatalf("content of an over-size file requested: %+v", r)
		}
	}
	// Drive allows one name twice in a folder: the path is refused naming both ids.
	d1 := ge.g.Add(google.File{Name: "dup.txt", MIMEType: "text/plain", Parents: []string{ge.finanzen}, Content: []byte("one")})
	d2 := ge.g.Add(google.File{Name: "dup.txt", MIMEType: "text/plain", Parents: []string{ge.finanzen}, Content: []byte("two")})
	_, err = ge.download("/Finanzen/dup.txt", 0)
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), d1) || !strings.Contains(err.Error(), d2) {
		t.Fatalf("ambiguous: %v", err)
	}
	l, err := ge.browse("/Finanzen", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.Name == "dup.txt" && e.Path != "id:"+e.ID {
			t.Fatalf("a duplicate's path %q is not its id form", e.Path)
		}
	}
	if f, err := ge.download("id:"+d2, 0); err != nil || string(f.Data) != "two" {
		t.Fatalf("by id: %q %v", f.Data, err)
	}
	// A folder cycle (a hostile drive: A in B and B in A): paths resolve one
	// folder per request and are bounded in depth, so nothing loops.
	a := ge.g.AddFolder("A", "")
	b := ge.g.AddFolder("B", a)
	ge.g.SetParents(a, google.RootID, b)
	before = len(ge.g.Requests())
	l, err = ge.browse("/A/B/A/B", 0, "")
	if err != nil || strings.Join(names(l), ",") != "A" || l.Entries[0].Path != "/A/B/A/B/A" {
		t.Fatalf("cycle: %+v %v", l, err)
	}
	if n := len(ge.g.Requests()) - before; n != 5 {
		t.Fatalf("/A/B/A/B took %d requests, want 4 lookups and a listing", n)
	}
	deep := strings.Repeat("/A/B", 20)
	before = len(ge.g.Requests())
	if _, err := ge.browse(deep, 0, ""); err == nil || !strings.Contains(err.Error(), "deep") || len(ge.g.Requests()) != before {
		t.Fatalf("a 40-deep path: %v", err)
	}
	// Shortcuts are followed once: a shortcut to a shortcut is refused, a
	// shortcut into its own folder is bounded like any cycle.
	link := ge.g.Add(google.File{Name: "Link", MIMEType: google.ShortcutType, Target: ge.finanzen})
	ge.g.Add(google.File{Name: "Loop", MIMEType: google.ShortcutType, Target: link})
	s := ge.g.AddFolder("S", "")
	ge.g.Add(google.File{Name: "Self", MIMEType: google.ShortcutType, Target: s, Parents: []string{s}})
	if f, err := ge.download("/Link/Report.pdf", 0); err != nil || !bytes.Equal(f.Data, ge.pdf) {
		t.Fatalf("through a shortcut: %v", err)
	}
	if _, err := ge.browse("/Loop", 0, ""); err == nil || !strings.Contains(err.Error(), "another shortcut") {
		t.Fatalf("shortcut to a shortcut: %v", err)
	}
	if l, err := ge.browse("/S/Self/Self/Self", 0, ""); err != nil || strings.Join(names(l), ",") != "Self" {
		t.Fatalf("shortcut into its folder: %+v %v", l, err)
	}
	if _, err := ge.browse(strings.Repeat("/Self", 33), 0, ""); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Fatalf("a 33-deep shortcut path: %v", err)
	}
	// A file where a folder is needed, a folder where a file is.
	if _, err := ge.browse("/Finanzen/Report.pdf/x", 0, ""); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("file as folder: %v", err)
	}
	if _, err := ge.download("/Finanzen", 0); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Fatalf("download a folder: %v", err)
	}
	if _, err := ge.download("/Finanzen/missing.pdf", 0); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("missing: %v", err)
	}
	// Garbage: a clear error.
	ge.g.Garbage(1)
	if _, err := ge.browse("/Finanzen", 0, ""); err == nil || !strings.Contains(err.Error(), "bad_response") {
		t.Fatalf("garbage: %v", err)
	}
	// A hostile drive answering an id that is a path: refused, never put in a URL.
	hostile := ge.g.AddFolder("Hostile", "")
	ge.g.Add(google.File{ID: "../../gmail/v1/users/me/messages/send", Name: "x.pdf", MIMEType: "application/pdf", Parents: []string{hostile}})
	before = len(ge.g.Requests())
	if _, err := ge.browse("/Hostile", 0, ""); err == nil || !strings.Contains(err.Error(), "bad_response") {
		t.Fatalf("hostile id in a listing: %v", err)
	}
	if _, err := ge.download("/Hostile/x.pdf", 0); err == nil || !strings.Contains(err.Error(), "bad_response") {
		t.Fatalf("hostile id on the way: %v", err)
	}
	for _, r := range ge.g.Requests()[before:] {
		if strings.Contains(r.Path, "gmail") || r.Method != "GET" {
			t.Fatalf("a hostile id steered a request: %+v", r)
		}
	}
	// A forged cursor is Google's 400, clearly.
	if _, err := ge.browse("/Finanzen", 2, "bm90LWEtdG9rZW4"); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Fatalf("forged cursor: %v", err)
	}
	if _, err := ge.browse("/Finanzen", 2, "a b"); err == nil || !strings.Contains(err.Error(), "invalid_cursor") {
		t.Fatalf("cursor with a space: %v", err)
	}
	// Bob cannot use alice's connection.
	before = len(ge.g.Requests())
	if _, err := ge.resolver.Browse(ctx, ge.bob, wire.BrowseRequest{Connection: ge.conn.ID, Service: "drive"}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob: %v", err)
	}
	if len(ge.g.Requests()) != before {
		t.Fatal("bob's attempt reached Google")
	}
}

// TestGoogleOutsideHostRefused: a provider configured with an API root on
// a host the connector's manifest does not list (evil.example, resolving
// to the fake) gets nothing sent there.
func TestGoogleOutsideHostRefused(t *testing.T) {
	ge := newGoogleEnv(t, "evil.example")
	_, err := ge.browse("/Finanzen", 0, "")
	if err == nil || !strings.Contains(err.Error(), "host_refused") {
		t.Fatalf("outside host: %v", err)
	}
	if n := len(ge.g.Requests()); n != 0 {
		t.Fatalf("%d requests reached the outside host", n)
	}
}

// TestGoogleRefreshAndThrottling: a 401 refreshes the token once and
// retries; a 429's short Retry-After is waited out (on the injected
// clock), a long one is rate_limited with the wait; Drive's 403
// rateLimitExceeded is rate_limited too; a revoked grant is a clear error.
func TestGoogleRefreshAndThrottling(t *testing.T) {
	ge := newGoogleEnv(t, "")
	ge.as.RevokeAccess()
	before := len(ge.g.Requests())
	if _, err := ge.browse("/Finanzen", 0, ""); err != nil {
		t.Fatal(err)
	}
	reqs := ge.g.Requests()[before:]
	if ge.as.Refreshes() != 1 || len(reqs) != 3 || reqs[0].Authorization == reqs[1].Authorization || reqs[1].Authorization != reqs[2].Authorization {
		t.Fatalf("%d refreshes over %d requests", ge.as.Refreshes(), len(reqs))
	}
	ge.g.Throttle(429, 3*time.Second)
	if _, err := ge.browse("/Finanzen", 0, ""); err != nil {
		t.Fatal(err)
	}
	if slept := ge.clock.Slept(); len(slept) != 1 || slept[0] != 3*time.Second {
		t.Fatalf("slept %v", slept)
	}
	ge.g.Throttle(429, time.Hour)
	if _, err := ge.browse("", 0, ""); err == nil || !strings.Contains(err.Error(), "rate_limited") || !strings.Contains(err.Error(), "3600") {
		t.Fatalf("long 429: %v", err)
	}
	ge.g.Throttle(403, 5*time.Second)
	before = len(ge.g.Requests())
	if _, err := ge.browse("", 0, ""); err == nil || !strings.Contains(err.Error(), "rate_limited") || !strings.Contains(err.Error(), "retry after 5s") {
		t.Fatalf("403 rateLimitExceeded: %v", err)
	}
	if n := len(ge.g.Requests()) - before; n != 1 {
		t.Fatalf("a 403 was retried: %d requests", n)
	}
	ge.as.RevokeAccess()
	ge.as.RevokeRefresh()
	if _, err := ge.browse("", 0, ""); !errors.Is(err, connections.ErrExpired) && (err == nil || !strings.Contains(err.Error(), "connection_expired")) {
		t.Fatalf("revoked grant: %v", err)
	}
}

// TestGoogleTokenNeverReachesTheConnector: Google's pages echo the
// credential back (a file's content is the Authorization header it got);
// the connector's result and logs hold no token the OAuth server issued,
// only [redacted].
func TestGoogleTokenNeverReachesTheConnector(t *testing.T) {
	ge := newGoogleEnv(t, "")
	ge.g.EchoCredential(2)
	f, err := ge.download("/Finanzen/Report.pdf", 0)
	if err != nil || !bytes.Contains(f.Data, []byte("you sent: Bearer [redacted]")) {
		t.Fatalf("echo: %q %v", f.Data, err)
	}
	g, err := ge.download("/Finanzen/Plan", 0)
	if err != nil || !bytes.Contains(g.Data, []byte("[redacted]")) {
		t.Fatalf("echoed export: %q %v", g.Data, err)
	}
	tokens := ge.as.Issued()
	if len(tokens) == 0 {
		t.Fatal("no tokens issued")
	}
	for _, tok := range tokens {
		for where, text := range map[string]string{"download": string(f.Data), "export": string(g.Data), "logs": ge.logs.String()} {
			if strings.Contains(text, tok) {
				t.Errorf("a token is in the connector's %s", where)
			}
		}
	}
}

// TestGoogleProviderDefaults: AGENTHOST_OAUTH_PROVIDERS=google with only
// the client registration gets Google's endpoints, API hosts and the
// connector's scopes.
func TestGoogleProviderDefaults(t *testing.T) {
	e := newEnv(t)
	env := map[string]string{"AGENTHOST_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("k"), 32)), "AGENTHOST_OAUTH_PROVIDERS": "google",
		"AGENTHOST_OAUTH_GOOGLE_CLIENT_ID": "id.apps.googleusercontent.com", "AGENTHOST_OAUTH_GOOGLE_CLIENT_SECRET": "s",
		"AGENTHOST_OAUTH_GOOGLE_REDIRECT_URL": "https://h.example/api/v1/connections/callback"}
	svc, err := connections.FromEnv(func(k string) string { return env[k] }, e.db)
	if err != nil {
		t.Fatal(err)
	}
	authURL, err := svc.StartAuthorization(context.Background(), e.alice, "google", "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if u.Host != "accounts.google.com" || u.Path != "/o/oauth2/v2/auth" || q.Get("access_type") != "offline" || q.Get("client_id") != "id.apps.googleusercontent.com" ||
		!strings.Contains(q.Get("scope"), "https://www.googleapis.com/auth/drive") || !strings.Contains(q.Get("scope"), "gmail.send") {
		t.Fatalf("authorisation URL %s", authURL)
	}
	// An operator's value wins over the default.
	env["AGENTHOST_OAUTH_GOOGLE_SCOPES"] = "https://www.googleapis.com/auth/drive.readonly"
	svc, err = connections.FromEnv(func(k string) string { return env[k] }, e.db)
	if err != nil {
		t.Fatal(err)
	}
	authURL, _ = svc.StartAuthorization(context.Background(), e.alice, "google", "")
	if got := mustQuery(t, authURL).Get("scope"); got != "https://www.googleapis.com/auth/drive.readonly" {
		t.Fatalf("scope %q", got)
	}
}

// TestGoogleGmail: labels and a label's messages browsed, a message sent
// (RFC 2822 through messages.send) arrives in the fake and carries SENT,
// listMail and download read it back; search; bad mail sends nothing.
func TestGoogleGmail(t *testing.T) {
	ge := newGoogleEnv(t, "")
	ctx := context.Background()
	ge.g.AddLabel("Label_7", "Finance")
	in := ge.g.AddMessage([]byte("From: Bob <bob@acme.example>\r\nTo: alice@acme.example\r\nSubject: Quarterly numbers\r\nDate: Sun, 01 Mar 2026 09:00:00 +0000\r\n"+
		"Content-Type: multipart/alternative; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"+
		"Revenue rose by 4 =E2=82=AC.\r\n--b1\r\nContent-Type: text/html\r\n\r\n<p>Revenue rose.</p>\r\n--b1--\r\n"), "INBOX", "UNREAD", "Label_7")
	labels, err := ge.resolver.Browse(ctx, ge.alice, wire.BrowseRequest{Connection: ge.conn.ID, Service: "gmail"})
	if err != nil || !strings.Contains(strings.Join(names(labels), ","), "INBOX") || !strings.Contains(strings.Join(names(labels), ","), "Finance") {
		t.Fatalf("labels %+v %v", labels, err)
	}
	inbox, err := ge.resolver.Browse(ctx, ge.alice, wire.BrowseRequest{Connection: ge.conn.ID, Service: "gmail", Path: "Label_7"})
	if err != nil || len(inbox.Entries) != 1 || inbox.Entries[0].Name != "Quarterly numbers" || inbox.Entries[0].Path != "Label_7/"+in ||
		!strings.Contains(inbox.Entries[0].Summary, "bob@acme.example") || !strings.Contains(inbox.Entries[0].Summary, "Revenue rose by 4 €") {
		t.Fatalf("label listing %+v %v", inbox, err)
	}
	// Send: a UTF-8 subject, To and Cc; the send is in the audit log.
	ge.resolver.Audit = audit.NewLog(ge.env.db, nil)
	sent, err := ge.resolver.SendMail(ctx, ge.alice, wire.SendMailRequest{Connection: ge.conn.ID, Service: "gmail",
		Mail: wire.Mail{To: []string{"Bob <bob@acme.example>"}, Cc: []string{"carol@acme.example"}, Subject: "Zusammenfassung – Q3", Body: "Der Umsatz stieg um 4 %.\nGrüsse"}})
	if err != nil || sent.ID == "" {
		t.Fatalf("send: %+v %v", sent, err)
	}
	page, err := ge.env.db.SearchAudit(ctx, audit.Query{TenantID: ge.alice.TenantID, Action: audit.ToolCalled})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("the send's audit entries: %+v %v", page, err)
	}
	if e, d := page.Entries[0], string(page.Entries[0].Detail); e.TargetID != "google.sendMail" || e.Actor.ID != ge.alice.UserID ||
		!strings.Contains(d, `"subject":"Zusammenfassung – Q3"`) || !strings.Contains(d, "bob@acme.example") || strings.Contains(d, "Umsatz") ||
		!strings.Contains(d, `"ok":true`) {
		t.Fatalf("the send's entry %+v %s", e, d)
	}
	out := ge.g.Sent()
	if len(out) != 1 || out[0].ID != sent.ID || out[0].Header("Subject") != "Zusammenfassung – Q3" || !strings.Contains(out[0].Header("To"), "bob@acme.example") ||
		out[0].Header("Cc") != "<carol@acme.example>" || out[0].Header("From") != "alice@acme.example" || out[0].LabelIDs[0] != "SENT" {
		t.Fatalf("sent %+v", out)
	}
	// Read back: listMail of the sent folder (by label name) and the message as .eml.
	for _, folder := range []string{"SENT", "sent"} {
		l, err := ge.resolver.ListMail(ctx, ge.alice, wire.ListMailRequest{Connection: ge.conn.ID, Service: "gmail", Folder: folder})
		if err != nil || len(l.Messages) != 1 {
			t.Fatalf("listMail %s: %+v %v", folder, l, err)
		}
		m := l.Messages[0]
		if m.ID != sent.ID || m.Subject != "Zusammenfassung – Q3" || m.Body != "Der Umsatz stieg um 4 %.\nGrüsse" || strings.Join(m.To, ",") != "bob@acme.example" ||
			strings.Join(m.Cc, ",") != "carol@acme.example" || m.Date.IsZero() {
			t.Fatalf("listMail %s: %+v", folder, m)
		}
	}
	inboxMail, err := ge.resolver.ListMail(ctx, ge.alice, wire.ListMailRequest{Connection: ge.conn.ID, Service: "gmail"})
	if err != nil || len(inboxMail.Messages) != 1 || inboxMail.Messages[0].Body != "Revenue rose by 4 €." || inboxMail.Messages[0].From != "Bob <bob@acme.example>" {
		t.Fatalf("inbox %+v %v", inboxMail, err)
	}
	f, err := ge.resolver.Download(ctx, ge.alice, wire.DownloadRequest{Connection: ge.conn.ID, Service: "gmail", Path: "SENT/" + sent.ID})
	if err != nil || f.MIMEType != "message/rfc822" || !bytes.Equal(f.Data, out[0].Raw) || !strings.HasSuffix(f.Name, ".eml") {
		t.Fatalf("download %q %q %v", f.Name, f.MIMEType, err)
	}
	hits, err := ge.resolver.Search(ctx, ge.alice, wire.SearchRequest{Connection: ge.conn.ID, Service: "gmail", Query: "from:bob quarterly"})
	if err != nil || len(hits.Entries) != 1 || hits.Entries[0].ID != in {
		t.Fatalf("search %+v %v", hits, err)
	}
	// Paging: three more messages, two a page.
	for i := range 3 {
		ge.g.AddMessage([]byte("From: x@acme.example\r\nTo: alice@acme.example\r\nSubject: n" + string(rune('0'+i)) + "\r\n\r\nhi\r\n"))
	}
	var seen []string
	cursor := ""
	for range 5 {
		l, err := ge.resolver.ListMail(ctx, ge.alice, wire.ListMailRequest{Connection: ge.conn.ID, Service: "gmail", Limit: 2, Cursor: cursor})
		if err != nil || len(l.Messages) > 2 {
			t.Fatalf("page %+v %v", l, err)
		}
		for _, m := range l.Messages {
			seen = append(seen, m.Subject)
		}
		if cursor = l.Next; cursor == "" {
			break
		}
	}
	if strings.Join(seen, ",") != "n2,n1,n0,Quarterly numbers" {
		t.Fatalf("paged inbox %v", seen)
	}
	// Bad mail: nothing reaches Google.
	before := len(ge.g.Requests())
	for name, m := range map[string]wire.Mail{
		"header injection":  {To: []string{"bob@acme.example"}, Subject: "hi\r\nBcc: mallory@evil.example", Body: "x"},
		"address injection": {To: []string{"bob@acme.example\r\nBcc: mallory@evil.example"}, Subject: "hi", Body: "x"},
		"no recipient":      {To: []string{}, Subject: "hi", Body: "x"},
		"bad address":       {To: []string{"not an address"}, Subject: "hi", Body: "x"},
	} {
		if _, err := ge.resolver.SendMail(ctx, ge.alice, wire.SendMailRequest{Connection: ge.conn.ID, Service: "gmail", Mail: m}); err == nil || !strings.Contains(err.Error(), "invalid_mail") {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, p := range []string{"../drive", "INBOX/../../x", "INBOX/a%2Fb"} {
		if _, err := ge.resolver.Browse(ctx, ge.alice, wire.BrowseRequest{Connection: ge.conn.ID, Service: "gmail", Path: p}); err == nil || !strings.Contains(err.Error(), "invalid_path") {
			t.Errorf("browse %q: %v", p, err)
		}
	}
	if len(ge.g.Requests()) != before || len(ge.g.Sent()) != 1 {
		t.Fatal("refused mail reached Google")
	}
	if _, err := ge.resolver.Upload(ctx, ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "gmail", Name: "x", Data: []byte("x")}); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("upload to gmail: %v", err)
	}
	// Gmail's requests went to gmail.googleapis.com.
	for _, r := range ge.g.Requests() {
		if strings.HasPrefix(r.Path, "/gmail/") != (r.Host == "gmail.googleapis.com:"+ge.port) {
			t.Fatalf("request %s to %s", r.Path, r.Host)
		}
	}
	// Garbage in a message: a clear error.
	ge.g.Garbage(1)
	if _, err := ge.resolver.ListMail(ctx, ge.alice, wire.ListMailRequest{Connection: ge.conn.ID, Service: "gmail"}); err == nil || !strings.Contains(err.Error(), "bad_response") {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := ge.resolver.Browse(ctx, ge.alice, wire.BrowseRequest{Connection: ge.conn.ID, Service: "gmail", Path: "INBOX/18f0000000000ffff"}); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("unknown message: %v", err)
	}
}

// TestAgentGoogleDriveToGmail: a scripted agent lists its connections,
// browses a Drive folder, downloads a PDF and a Google Doc (exported to
// DOCX) with the connection tools, and mails a summary through Gmail.
// Both files land through the file bridge as the workflow's documents, go
// to the indexer like uploads and are indexed by the real PDF and Office
// extractors; the mail arrives in the fake. Over the download limit
// nothing is stored. No request the model saw holds a token.
func TestAgentGoogleDriveToGmail(t *testing.T) {
	w := connectionstest.NewAgent(t, "google")
	as := oauth.New("client-g", "secret-g", redirect)
	t.Cleanup(as.Close)
	g := google.New(as.Valid, "me@acme.example")
	t.Cleanup(g.Close)
	u, _ := url.Parse(g.URL)
	port := u.Port()
	svc, err := connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: w.DB, Sealer: connectionstest.Sealer(t), TokenClient: as.Client(),
		Providers: []connections.Provider{googleProvider(as, port, "http://www.googleapis.com:"+port)}})
	if err != nil {
		t.Fatal(err)
	}
	conn := connectGoogle(t, svc, as, w.P)
	pdf, docx := corpus(t, "pdf/deb-camlidl-1.04.pdf"), corpus(t, "office/docx/textract-raw_text.docx")
	fin := g.AddFolder("Finanzen", "")
	g.Add(google.File{Name: "Report.pdf", MIMEType: "application/pdf", Parents: []string{fin}, Content: pdf})
	g.Add(google.File{Name: "Plan", MIMEType: google.DocumentType, Parents: []string{fin}, Exports: map[string][]byte{docxType: docx}})

	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"www.googleapis.com:" + port, "gmail.googleapis.com:" + port},
		Resolver: connectionstest.DNS{"www.googleapis.com": "127.0.0.1", "gmail.googleapis.com": "127.0.0.1"}}
	toolsCap := &connections.ToolsCapability{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{w.FileBridge(), (&connections.Capability{Service: svc, Egress: opts}).Wasm(), toolsCap.Wasm()}},
		"google", "connections", "pdf", "office")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}
	for _, ti := range h.Tools() {
		if ti.Plugin == "google" {
			t.Fatalf("connector tool %s offered to agents", ti.Name)
		}
	}
	args := connectionstest.Args
	reqs := w.Run(t, h, "summarise the finance files and mail bob", []string{"listConnections", "externalBrowse", "externalDownload", "sendMail"}, 5,
		llmtest.CallTools(llmtest.Call("listConnections", `{}`)),
		llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn.ID, "service": "drive", "path": "/Finanzen"}))),
		llmtest.CallTools(
			llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "drive", "path": "/Finanzen/Report.pdf"})),
			llmtest.Call("externalDownload", args(map[string]string{"connection": conn.ID, "service": "drive", "path": "/Finanzen/Plan"}))),
		llmtest.CallTools(llmtest.Call("sendMail", args(map[string]any{"connection": conn.ID, "service": "gmail", "to": []string{"bob@acme.example"},
			"subject": "Report summary", "body": "The report describes the camlidl port."}))),
		llmtest.Reply("Sent."))
	results := func(i int) string {
		var b strings.Builder
		for _, m := range reqs[i].Messages {
			if m.Role == "tool" {
				b.WriteString(m.Content + "\n")
			}
		}
		return b.String()
	}
	if got := results(1); !strings.Contains(got, "provider=google") || !strings.Contains(got, "drive,gmail") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := results(2); !strings.Contains(got, `"Plan" path=/Finanzen/Plan`) || !strings.Contains(got, `"Report.pdf" path=/Finanzen/Report.pdf`) {
		t.Fatalf("externalBrowse: %s", got)
	}
	got := results(3)
	if !strings.Contains(got, "downloaded 'Report.pdf'") || !strings.Contains(got, "downloaded 'Plan.docx'") {
		t.Fatalf("externalDownload: %s", got)
	}
	if got := results(4); !strings.Contains(got, `sent "Report summary"`) {
		t.Fatalf("sendMail: %s", got)
	}
	sent := g.Sent()
	if len(sent) != 1 || sent[0].Header("Subject") != "Report summary" || sent[0].Header("To") != "<bob@acme.example>" {
		t.Fatalf("sent %+v", sent)
	}
	// Both files are the workflow's documents, byte for byte, indexed by the real extractors.
	want := map[string][]byte{"Report.pdf": pdf, "Plan.docx": docx}
	ids := w.Index.IDs()
	if len(ids) != 2 {
		t.Fatalf("indexer got %v", ids)
	}
	for _, id := range ids {
		info, stored := w.File(t, id)
		if !bytes.Equal(stored, want[info.Name]) {
			t.Fatalf("%s: stored %d bytes", info.Name, len(stored))
		}
		w.Ingest(t, h, id)
	}
	// Over the download limit: a clear error, nothing stored.
	toolsCap.MaxDownload = 1000
	b, _ := json.Marshal(map[string]string{"connection": conn.ID, "service": "drive", "path": "/Finanzen/Report.pdf"})
	r := h.Call(w.Context(), "externalDownload", b, &wasm.CallOptions{Tenant: w.P.TenantID})
	if r.OK || !strings.Contains(r.Error.Error(), "too_large") {
		t.Fatalf("over the limit: %+v", r)
	}
	if ids := w.Index.IDs(); len(ids) != 2 {
		t.Fatalf("an over-size download stored a file: %v", ids)
	}
	connectionstest.NeverSent(t, reqs, as.Issued()...)
}

// TestGoogleEchoNeverEntersMemory: TestTokenNeverEntersTheSandbox's
// hostile probe against the Google fake: Drive answers a download with
// the Authorization header it received, before and after a refresh. No
// token the OAuth server issued is in the probe's result, variables, logs
// or memory; the scan finds the echo's marker, so it would find a token.
func TestGoogleEchoNeverEntersMemory(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	g := google.New(e.as.Valid, "alice@acme.example")
	t.Cleanup(g.Close)
	u, _ := url.Parse(g.URL)
	port := u.Port()
	// The probe's provider (acme) is served by the Google fake here.
	svc, err := connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: e.db, Sealer: connectionstest.Sealer(t), TokenClient: e.as.Client(), Providers: []connections.Provider{{
		Name: "acme", Hosts: []string{"api.acme.test:" + port}, BaseURL: "http://api.acme.test:" + port,
		OAuth: &connections.OAuth{ClientID: e.as.ClientID, ClientSecret: e.as.ClientSecret, AuthURL: e.as.AuthURL(), TokenURL: e.as.TokenURL(), RedirectURL: e.as.RedirectURI}}}})
	if err != nil {
		t.Fatal(err)
	}
	authURL, err := svc.StartAuthorization(ctx, e.alice, "acme", "work")
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.CompleteAuthorization(ctx, e.alice, mustQuery(t, authURL).Get("state"), e.as.Consent(authURL))
	if err != nil {
		t.Fatal(err)
	}
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"api.acme.test:" + port}, Resolver: connectionstest.DNS{"api.acme.test": "127.0.0.1"}}
	logs := &connectionstest.LogSink{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{(&connections.Capability{Service: svc, Egress: opts}).Wasm()}, Logs: logs}, "connprobe")
	p := wasmtest.Plugin(t, h, "connprobe")
	id := g.Add(google.File{Name: "r.txt", MIMEType: "text/plain", Content: []byte("report")})
	media := "http://api.acme.test:" + port + "/drive/v3/files/" + id + "?alt=media"
	var results string
	for _, revoke := range []bool{false, true} {
		if revoke {
			e.as.RevokeAccess() // a 401, a refresh, a new token echoed
		}
		g.EchoCredential(1)
		res := call(t, p, e.alice, "fetch", map[string]any{"connection": c.ID, "url": media})
		if !res.OK || !strings.Contains(string(res.Data), "you sent: Bearer [redacted]") {
			t.Fatalf("fetch: %+v %s", res.Error, res.Data)
		}
		results += res.Text + string(res.Data)
	}
	if e.as.Refreshes() != 1 {
		t.Fatalf("%d refreshes", e.as.Refreshes())
	}
	vars := call(t, p, e.alice, "getVar", map[string]any{})
	if marker := call(t, p, e.alice, "scan", map[string]any{"masked": mask("you sent: Bearer ")}); !marker.OK || strings.TrimSpace(string(marker.Data)) == "0" {
		t.Fatalf("the memory scan does not find what the plugin did receive: %+v", marker)
	}
	for _, tok := range e.as.Issued() {
		for where, text := range map[string]string{"result": results, "variables": vars.Text + string(vars.Data), "logs": logs.String()} {
			if strings.Contains(text, tok) {
				t.Errorf("a token is in the plugin's %s", where)
			}
		}
		if scan := call(t, p, e.alice, "scan", map[string]any{"masked": mask(tok)}); !scan.OK || strings.TrimSpace(string(scan.Data)) != "0" {
			t.Errorf("a token is in the plugin's memory: %+v", scan)
		}
	}
}

// TestGoogleRefreshTokenOnReconsent: Google gives a refresh token only on
// a user's first consent unless the request says prompt=consent (with
// access_type=offline; "Using OAuth 2.0 for Web Server Applications",
// developers.google.com/identity/protocols/oauth2/web-server, and the fake
// oauth server's GoogleOffline): a user connecting again still gets a
// connection that outlives its first access token. Microsoft takes no
// access_type (its refresh token comes with the offline_access scope).
func TestGoogleRefreshTokenOnReconsent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.as.GoogleOffline = true
	env := map[string]string{"AGENTHOST_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("k"), 32)), "AGENTHOST_OAUTH_PROVIDERS": "google,microsoft",
		"AGENTHOST_OAUTH_GOOGLE_CLIENT_ID": e.as.ClientID, "AGENTHOST_OAUTH_GOOGLE_CLIENT_SECRET": e.as.ClientSecret,
		"AGENTHOST_OAUTH_GOOGLE_REDIRECT_URL": redirect, "AGENTHOST_OAUTH_GOOGLE_AUTH_URL": e.as.AuthURL(), "AGENTHOST_OAUTH_GOOGLE_TOKEN_URL": e.as.TokenURL(),
		"AGENTHOST_OAUTH_GOOGLE_HOSTS": e.apiHost, "AGENTHOST_OAUTH_GOOGLE_BASE_URL": e.api.URL,
		"AGENTHOST_OAUTH_MICROSOFT_CLIENT_ID": "app-id", "AGENTHOST_OAUTH_MICROSOFT_CLIENT_SECRET": "s", "AGENTHOST_OAUTH_MICROSOFT_REDIRECT_URL": redirect}
	svc, err := connections.FromEnv(func(k string) string { return env[k] }, e.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"first", "again"} {
		authURL, err := svc.StartAuthorization(ctx, e.alice, "google", label)
		if err != nil {
			t.Fatal(err)
		}
		code := e.as.Consent(authURL)
		if code == "" {
			t.Fatalf("%s: refused %s", label, authURL)
		}
		c, err := svc.CompleteAuthorization(ctx, e.alice, mustQuery(t, authURL).Get("state"), code)
		if err != nil {
			t.Fatal(err)
		}
		e.as.RevokeAccess() // the access token's hour is over
		resp, err := svc.Do(ctx, e.alice, c.ID, "google", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
		if err != nil || resp.Status != 200 {
			t.Fatalf("%s connection after its access token: %+v %v", label, resp, err)
		}
	}
	authURL, err := svc.StartAuthorization(ctx, e.alice, "microsoft", "")
	if err != nil {
		t.Fatal(err)
	}
	if q := mustQuery(t, authURL); q.Has("access_type") || q.Has("prompt") {
		t.Fatalf("Microsoft's authorisation request %s carries Google's parameters", authURL)
	}
}

// TestGmailBodiesByCharset (issue 29, item 7): Gmail hands a part's body
// as base64url of its bytes once the transfer encoding is undone, in the
// part's own charset ("users.messages": MessagePartBody.data, "the body
// data of a MIME message part as a base64url encoded string"; the
// charset stays in the part's Content-Type header). listMail reads each
// body by its part's charset: ISO-8859-1 (quoted-printable), windows-1252
// (base64), ISO-2022-JP (7bit) and an HTML part in windows-1252.
func TestGmailBodiesByCharset(t *testing.T) {
	ge := newGoogleEnv(t, "")
	ctx := context.Background()
	jis, err := japanese.ISO2022JP.NewEncoder().String("会議は月曜日です。")
	if err != nil {
		t.Fatal(err)
	}
	msg := func(subject, ct, cte, body string) []byte {
		return []byte("From: Bob <bob@acme.example>\r\nTo: alice@acme.example\r\nSubject: " + subject + "\r\nDate: Sun, 01 Mar 2026 09:00:00 +0000\r\n" +
			"MIME-Version: 1.0\r\nContent-Type: " + ct + "\r\nContent-Transfer-Encoding: " + cte + "\r\n\r\n" + body)
	}
	cases := map[string]struct {
		raw  []byte
		want string
	}{
		"latin1": {msg("latin1", "text/plain; charset=ISO-8859-1", "quoted-printable", "Gr=FC=DFe aus K=F6ln\r\n"), "Grüße aus Köln"},
		"cp1252": {msg("cp1252", `text/plain; charset="windows-1252"`, "base64",
			base64.StdEncoding.EncodeToString([]byte("\x93Preis\x94: 20 \x80 \x96 fa\xe7ade"))+"\r\n"), "“Preis”: 20 € – façade"},
		"jis":  {msg("jis", "text/plain; charset=iso-2022-jp", "7bit", jis+"\r\n"), "会議は月曜日です。"},
		"html": {msg("html", "text/html; charset=windows-1252", "8bit", "<p>Caf\xe9 \x80 5</p>\r\n"), "Café € 5"},
	}
	for _, c := range cases {
		ge.g.AddMessage(c.raw, "INBOX")
	}
	l, err := ge.resolver.ListMail(ctx, ge.alice, wire.ListMailRequest{Connection: ge.conn.ID, Service: "gmail", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range l.Messages {
		got[m.Subject] = m.Body
	}
	for name, c := range cases {
		if got[name] != c.want {
			t.Errorf("%s: body %q, want %q", name, got[name], c.want)
		}
	}
}

// TestAgentListsGmail (issue 29, item 7): the connection tools offer
// listMail, read-only, which reaches Gmail's listMail through the
// connector (as it does Outlook's): the inbox's messages with sender,
// subject and body, the body read by its part's charset; a folder by
// label name; a cursor for the next page.
func TestAgentListsGmail(t *testing.T) {
	w := connectionstest.NewAgent(t, "google")
	as := oauth.New("client-g", "secret-g", redirect)
	t.Cleanup(as.Close)
	g := google.New(as.Valid, "me@acme.example")
	t.Cleanup(g.Close)
	u, _ := url.Parse(g.URL)
	port := u.Port()
	svc, err := connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: w.DB, Sealer: connectionstest.Sealer(t), TokenClient: as.Client(),
		Providers: []connections.Provider{googleProvider(as, port, "http://www.googleapis.com:"+port)}})
	if err != nil {
		t.Fatal(err)
	}
	conn := connectGoogle(t, svc, as, w.P)
	for i, s := range []string{"Quarterly numbers", "Lunch", "Travel"} {
		g.AddMessage([]byte(fmt.Sprintf("From: Bob <bob@acme.example>\r\nTo: me@acme.example\r\nSubject: %s\r\nDate: Sun, 0%d Mar 2026 09:00:00 +0000\r\n"+
			"Content-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nGr=FC=DFe, message %d\r\n", s, i+1, i)), "INBOX")
	}
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"www.googleapis.com:" + port, "gmail.googleapis.com:" + port},
		Resolver: connectionstest.DNS{"www.googleapis.com": "127.0.0.1", "gmail.googleapis.com": "127.0.0.1"}}
	toolsCap := &connections.ToolsCapability{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{w.FileBridge(), (&connections.Capability{Service: svc, Egress: opts}).Wasm(), toolsCap.Wasm()}},
		"google", "connections")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: svc}
	var tool *wasm.ToolInfo
	for _, ti := range h.Tools() {
		if ti.Name == "listMail" {
			tool = &ti
		}
	}
	if tool == nil || !tool.ReadOnly {
		t.Fatalf("listMail among the connection tools, read-only: %+v", tool)
	}
	call := func(args map[string]any) string {
		t.Helper()
		b, _ := json.Marshal(args)
		r := h.Call(w.Context(), "listMail", b, &wasm.CallOptions{Tenant: w.P.TenantID})
		if !r.OK {
			t.Fatalf("listMail %v: %+v", args, r.Error)
		}
		return r.Text
	}
	first := call(map[string]any{"connection": conn.ID, "service": "gmail", "limit": 2})
	if strings.Count(first, "subject=") != 2 || !strings.Contains(first, "bob@acme.example") || !strings.Contains(first, "Grüße, message") ||
		!strings.Contains(first, "more: pass cursor=") {
		t.Fatalf("the first page: %s", first)
	}
	cursor := first[strings.Index(first, "cursor=")+len("cursor="):]
	rest := call(map[string]any{"connection": conn.ID, "service": "gmail", "folder": "INBOX", "limit": 2, "cursor": strings.TrimSpace(cursor)})
	if strings.Count(rest, "subject=") != 1 || strings.Contains(rest, "cursor=") {
		t.Fatalf("the next page: %s", rest)
	}
}
