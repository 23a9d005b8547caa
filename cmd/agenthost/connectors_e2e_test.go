package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// The connector flow end to end over HTTP: `serve` in this process with a
// secret key, a scripted OpenAI-compatible model and a provider's fake
// behind -resolve and -allow-host. The user connects over the API (a
// token, or the OAuth authorize and callback dance against fakes/oauth),
// starts a workflow, and the scripted agent lists the connections, browses
// the service, downloads a file (it lands in the workspace through the file
// bridge and is indexed), summarises it by its docItem reference with
// summarizeContent and, where the provider has mail, sends the summary.
// Everything is asserted over HTTP: the SSE events, the file and its index
// state, its text in search, billing and the trace; and on the provider's
// side, what it received and that no credential reached the model.
//
// Each provider is one row of e2eProviders; see e2eProvider for what a row
// gives.

// e2eProvider is one provider's row.
type e2eProvider struct {
	name string
	// start starts the provider's fakes; it may set environment variables
	// (t.Setenv) for serve. base is the server's root URL, known before
	// serve starts (an OAuth redirect URL names it).
	start func(t *testing.T, base string) *e2eFakes
}

// e2eFakes is what a started row gives the flow.
type e2eFakes struct {
	// args are serve's extra flags: -resolve, -allow-host, -grant.
	args []string
	// plugins are third-party modules for serve's -plugins folder.
	plugins map[string][]byte
	// connect makes the user's connection over HTTP and returns its id.
	connect func(t *testing.T, s *e2eServer) string
	// service, browse and download: the service the file is in, the path
	// browsed and the path downloaded (browse's listing must name it).
	service, browse, download string
	// file is the downloaded file's name and MIME type as stored; text a
	// word of its extracted text that search must find.
	fileName, mimeType, text string
	// data is the file's content at the provider.
	data []byte
	// mailService is the service sendMail goes through ("" when the
	// provider has no mail); sentMail returns what the provider received.
	mailService string
	sentMail    func() []e2eMail
	// secrets are the credentials the host holds: none may reach the
	// model or an answer of the API.
	secrets func() []string
	// check asserts on the provider's side once the flow ended.
	check func(t *testing.T)
	// requests counts the requests the provider has received.
	requests func() int
}

// e2eMail is a message as a provider received it.
type e2eMail struct {
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	Body    string   `json:"body"`
}

// TestConnectorsEndToEnd runs the flow against every provider's row.
func TestConnectorsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server per provider")
	}
	for _, p := range e2eProviders() {
		t.Run(p.name, func(t *testing.T) { runConnectorFlow(t, p) })
	}
}

// e2eServer is the running server and the bootstrapped user.
type e2eServer struct {
	host
	root, token, workspace string
}

// do sends a request with the user's token and returns the status and body.
func (s *e2eServer) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+path, r)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// e2eSecretKey is the test's AGENTHOST_SECRET_KEY (32 bytes).
var e2eSecretKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a}, 32))

const e2eSummary = "SUMMARY: the document describes the camlidl package."

func runConnectorFlow(t *testing.T, p e2eProvider) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	root := "http://" + addr
	t.Setenv("AGENTHOST_SECRET_KEY", e2eSecretKey)
	fk := p.start(t, root)

	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	// The model waits for the index inside one request: its time-out is a
	// hang guard, not a bound the test relies on.
	t.Setenv("AGENTHOST_OPENAI_TIMEOUT", hangGuard.String())

	data := t.TempDir()
	plugins := pluginsDir(t, fk.plugins)
	extra := []string{"listConnections", "externalBrowse", "externalDownload"}
	if fk.mailService != "" {
		extra = append(extra, "sendMail")
	}
	tc := bootstrapTenant(t, data, plugins, "acme", extra)
	// Bob shares the workspace; eve is another tenant's. Neither may use
	// the user's connection.
	bob := addMember(t, data, tc.tenant, tc.workspace, "bob@acme.example")
	eve := bootstrapTenant(t, data, plugins, "evil", extra)
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins, append([]string{"-addr", addr}, fk.args...)...)
	if base != root {
		t.Fatalf("serve at %s, want %s", base, root)
	}
	s := &e2eServer{host: host{base: root + "/api/v1"}, root: root, token: tc.token, workspace: tc.workspace}
	conn := fk.connect(t, s)

	// The scripted agent: each step follows from the last tool result.
	var mu sync.Mutex
	var fileID, docItem string
	model.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		msgs := r.Messages
		last := msgs[len(msgs)-1]
		if len(r.Tools) == 0 {
			// summarizeContent's own model call (and any other call
			// without tools, such as a title) gets the summary.
			return llmtest.Reply(e2eSummary)
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		if last.Role != "tool" {
			return llmtest.CallTools(llmtest.Call("listConnections", `{}`))
		}
		switch lastToolCall(msgs) {
		case "listConnections":
			return llmtest.CallTools(llmtest.Call("externalBrowse", args(map[string]string{"connection": conn, "service": fk.service, "path": fk.browse})))
		case "externalBrowse":
			if !strings.Contains(last.Content, "path="+fk.download) {
				return llmtest.Reply("the listing does not name " + fk.download + ": " + last.Content)
			}
			return llmtest.CallTools(llmtest.Call("externalDownload", args(map[string]string{"connection": conn, "service": fk.service, "path": fk.download})))
		case "externalDownload":
			ref, id := docItemOf(last.Content), fileIDOf(last.Content)
			if ref == "" || id == "" {
				return llmtest.Reply("the download gave no document: " + last.Content)
			}
			mu.Lock()
			fileID, docItem = id, ref
			mu.Unlock()
			// Like a user who waits for the file to be indexed: the
			// API says when (polled, bounded only by the hang guard).
			if st := waitIndexed(s, id); st != "indexed" {
				return llmtest.Reply("the file was not indexed: " + st)
			}
			return llmtest.CallTools(llmtest.Call("summarizeContent", args(map[string]any{"documents": []string{ref}})))
		case "summarizeContent":
			if fk.mailService == "" {
				return llmtest.Reply("Done: " + e2eSummary)
			}
			return llmtest.CallTools(llmtest.Call("sendMail", args(map[string]any{"connection": conn, "service": fk.mailService,
				"to": []string{"bob@acme.example"}, "subject": "Summary of " + fk.fileName, "body": e2eSummary})))
		case "sendMail":
			return llmtest.Reply("Sent: " + e2eSummary)
		}
		return llmtest.Reply("unexpected step after " + lastToolCall(msgs))
	}))

	if fk.mailService != "" {
		// sendMail declares the side effect mail, which waits for the
		// person by default (TestTwoHostsApprovalSurvivesKill shows
		// that); this workspace's admin lets it run.
		if st := s.call(t, s.token, "PUT", "/workspaces/"+s.workspace+"/tool-policies/sendMail", `{"policy":"auto"}`, nil); st != 200 {
			t.Fatalf("sendMail's policy: %d", st)
		}
	}
	var w struct {
		ID string `json:"id"`
	}
	if st := s.call(t, s.token, "POST", "/workspaces/"+s.workspace+"/workflows", `{"prompt":"Fetch the file, summarise it and mail the summary to bob"}`, &w); st != 202 {
		t.Fatalf("start: %d\n%s", st, logs.String())
	}
	evs := s.events(t, s.token, w.ID, func(e hostEvent) bool { return e.typ == "complete" || e.typ == "error" || e.typ == "stopped" })

	// The events: every tool succeeded, in order; the file was announced.
	want := []string{"listConnections", "externalBrowse", "externalDownload", "summarizeContent"}
	if fk.mailService != "" {
		want = append(want, "sendMail")
	}
	var got []string
	var created, final string
	for _, e := range evs {
		switch e.typ {
		case "toolResult":
			var tr struct {
				Tool string `json:"tool"`
				OK   bool   `json:"ok"`
			}
			json.Unmarshal([]byte(e.data), &tr)
			if !tr.OK {
				t.Errorf("tool %s failed: %s", tr.Tool, e.data)
			}
			got = append(got, tr.Tool)
		case "fileCreated":
			created = e.data
		case "complete", "error", "stopped":
			final = e.typ + " " + e.data
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || !strings.HasPrefix(final, "complete") {
		t.Fatalf("tool results %v (want %v), end %s\n%s", got, want, final, logs.String())
	}
	mu.Lock()
	id, ref := fileID, docItem
	mu.Unlock()
	if !strings.Contains(created, id) || !strings.Contains(created, fk.fileName) {
		t.Fatalf("fileCreated %s, want file %s (%s)", created, id, fk.fileName)
	}

	// The file: in the workspace, byte for byte, indexed, its text found.
	var f struct {
		Name, MIMEType, WorkspaceID string
		Size                        int64
	}
	if st := s.call(t, s.token, "GET", "/files/"+id, "", &f); st != 200 || f.Name != fk.fileName || f.WorkspaceID != s.workspace ||
		!strings.HasPrefix(f.MIMEType, fk.mimeType) || f.Size != int64(len(fk.data)) {
		t.Fatalf("file %s: %d %+v", id, st, f)
	}
	if st, body := s.do(t, "GET", "/files/"+id+"/content", nil); st != 200 || !bytes.Equal(body, fk.data) {
		t.Fatalf("content: %d, %d bytes, want the provider's %d", st, len(body), len(fk.data))
	}
	var idx struct{ Status string }
	if st := s.call(t, s.token, "GET", "/files/"+id+"/index", "", &idx); st != 200 || idx.Status != "indexed" {
		t.Fatalf("index state: %d %+v", st, idx)
	}
	var hits []struct {
		FileID string `json:"fileId"`
	}
	if st := s.call(t, s.token, "GET", "/workspaces/"+s.workspace+"/search?q="+url.QueryEscape(fk.text), "", &hits); st != 200 || !containsFile(hits, id) {
		t.Fatalf("search %q: %d %+v, want file %s", fk.text, st, hits, id)
	}

	// The summary: summarizeContent read the docItem's text through the
	// knowledge store, and the model's summary reached the user.
	reqs := model.ChatRequests()
	var summarised bool
	for _, rq := range reqs {
		if len(rq.Tools) == 0 && strings.Contains(fmt.Sprint(rq.Messages), "# Document: "+fk.fileName) {
			summarised = true
		}
	}
	if !summarised {
		t.Fatalf("no model call of summarizeContent carried %s (%s)", fk.fileName, ref)
	}
	var msgs []struct {
		Role, Content string
	}
	s.call(t, s.token, "GET", "/workflows/"+w.ID+"/messages", "", &msgs)
	if len(msgs) == 0 || !strings.Contains(msgs[len(msgs)-1].Content, e2eSummary) {
		t.Fatalf("messages %+v, want the summary last", msgs)
	}
	if fk.mailService != "" {
		sent := fk.sentMail()
		if len(sent) != 1 || sent[0].Body != e2eSummary || len(sent[0].To) != 1 || sent[0].To[0] != "bob@acme.example" {
			t.Fatalf("mail at the provider: %+v", sent)
		}
	}

	// Billing and the trace: the model calls (the loop's and the tool's)
	// and the plugin runs of this workflow are recorded.
	var trace struct {
		TotalToolCalls int `json:"totalToolCalls"`
		Runs           []struct {
			Status string `json:"status"`
		} `json:"runs"`
	}
	if st := s.call(t, s.token, "GET", "/workflows/"+w.ID+"/trace", "", &trace); st != 200 || trace.TotalToolCalls != len(want) || len(trace.Runs) != 1 || trace.Runs[0].Status != "completed" {
		t.Fatalf("trace: %d %+v", st, trace)
	}
	var usage struct {
		Rows []struct {
			Keys  []string `json:"keys"`
			Calls int64    `json:"calls"`
		} `json:"rows"`
	}
	if st := s.call(t, s.token, "GET", "/billing/usage?by=workflow,purpose", "", &usage); st != 200 {
		t.Fatalf("usage: %d", st)
	}
	purposes := map[string]int64{}
	for _, r := range usage.Rows {
		if len(r.Keys) == 2 && r.Keys[0] == w.ID {
			purposes[r.Keys[1]] += r.Calls
		}
	}
	// The agent's model calls (one per step), each tool's run, and the
	// summariser's own model calls ("tool:summarizeContent/<phase>").
	if purposes["agent"] < int64(len(want)) {
		t.Errorf("usage: %d agent model calls, want at least %d (%v)", purposes["agent"], len(want), purposes)
	}
	for _, tool := range want {
		if purposes["tool:"+tool] != 1 {
			t.Errorf("usage: %d runs of %s, want 1 (%v)", purposes["tool:"+tool], tool, purposes)
		}
	}
	var summaryCalls int64
	for k, n := range purposes {
		if strings.HasPrefix(k, "tool:summarizeContent/") {
			summaryCalls += n
		}
	}
	if summaryCalls == 0 {
		t.Errorf("usage: no model call of summarizeContent recorded (%v)", purposes)
	}

	// No credential reached the model, an event, a message or the trace.
	var seen bytes.Buffer
	for _, rq := range reqs {
		seen.Write(rq.Raw)
	}
	for _, e := range evs {
		seen.WriteString(e.data)
	}
	for _, path := range []string{"/workflows/" + w.ID + "/messages", "/workflows/" + w.ID + "/trace", "/workflows/" + w.ID + "/logs", "/connections"} {
		_, b := s.do(t, "GET", path, nil)
		seen.Write(b)
	}
	for _, sec := range fk.secrets() {
		if sec != "" && bytes.Contains(seen.Bytes(), []byte(sec)) {
			t.Fatalf("a credential (%d bytes) reached the model or the API", len(sec))
		}
	}
	if fk.check != nil {
		fk.check(t)
	}

	// Another user of the workspace and another tenant's user: the
	// connection is not theirs to see, use or revoke, and the provider
	// hears nothing of their attempts.
	before := fk.requests()
	for who, u := range map[string]struct{ token, workspace string }{"bob (same workspace)": {bob, s.workspace}, "eve (other tenant)": {eve.token, eve.workspace}} {
		other := &e2eServer{host: s.host, root: s.root, token: u.token, workspace: u.workspace}
		if st, body := other.do(t, "GET", "/connections", nil); st != 200 || strings.TrimSpace(string(body)) != "[]" {
			t.Errorf("%s lists connections: %d %s", who, st, body)
		}
		st, body := other.do(t, "POST", "/workspaces/"+u.workspace+"/tools/externalBrowse", map[string]string{"connection": conn, "service": fk.service, "path": fk.browse})
		var res struct {
			OK    bool `json:"ok"`
			Error *struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if st != 200 || json.Unmarshal(body, &res) != nil || res.OK || res.Error == nil || res.Error.Code != "not_found" {
			t.Errorf("%s browses with alice's connection: %d %s", who, st, body)
		}
		if st, body := other.do(t, "DELETE", "/connections/"+conn, nil); st != 404 {
			t.Errorf("%s revokes alice's connection: %d %s", who, st, body)
		}
	}
	if after := fk.requests(); after != before {
		t.Errorf("the provider got %d requests from other users' attempts", after-before)
	}

	// Revoked by its owner, the connection answers connection_revoked
	// without a request to the provider.
	if st, body := s.do(t, "DELETE", "/connections/"+conn, nil); st != 204 {
		t.Fatalf("revoke: %d %s", st, body)
	}
	st, body := s.do(t, "POST", "/workspaces/"+s.workspace+"/tools/externalBrowse", map[string]string{"connection": conn, "service": fk.service, "path": fk.browse})
	if st != 200 || !strings.Contains(string(body), `"ok":false`) || !strings.Contains(string(body), "connection_revoked") {
		t.Errorf("browse with the revoked connection: %d %s", st, body)
	}
	if after := fk.requests(); after != before {
		t.Errorf("the provider got %d requests after the revocation", after-before)
	}
}

// addMember makes a user of the workspace's tenant, a member of the
// workspace, and returns their API token.
func addMember(t *testing.T, data, tenant, workspace, email string) string {
	t.Helper()
	admin := func(args ...string) string {
		t.Helper()
		out, stderr, err := run0(t, append([]string{"admin"}, append(args, "-data", data)...)...)
		if err != nil {
			t.Fatalf("admin %v: %v\n%s", args, err, stderr)
		}
		return out
	}
	m := regexp.MustCompile(`user (\S+)`).FindStringSubmatch(admin("user", "-tenant", tenant, "-email", email))
	if m == nil {
		t.Fatal("admin user printed no id")
	}
	admin("member", "-workspace", workspace, "-user", m[1], "-role", "member")
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(admin("token", "-user", m[1]))
	if tok == nil {
		t.Fatal("admin token printed no token")
	}
	return tok[1]
}

var (
	docItemRe = regexp.MustCompile(`docItem:[A-Za-z0-9_-]+`)
	fileIDRe  = regexp.MustCompile(`file id: (\S+)`)
)

func docItemOf(s string) string { return docItemRe.FindString(s) }

func fileIDOf(s string) string {
	if m := fileIDRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func containsFile(hits []struct {
	FileID string `json:"fileId"`
}, id string) bool {
	for _, h := range hits {
		if h.FileID == id {
			return true
		}
	}
	return false
}

// waitIndexed polls the file's index state over the API until it is final
// (indexed or failed) and returns it. Only the hang guard bounds it: how
// long indexing takes depends on the machine's load.
func waitIndexed(s *e2eServer, fileID string) string {
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", s.base+"/files/"+fileID+"/index", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			var st struct{ Status, Error string }
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if st.Status == "indexed" {
				return st.Status
			}
			if st.Status == "failed" {
				return st.Status + ": " + st.Error
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "still not indexed at the hang guard"
}
