//lint:file-ignore SA1019 sampling, roots and logging are deprecated by revision 2026-07-28 (SEP-2577) but inside their deprecation window; clients of the older revisions and the conformance suite use them

package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

// hangGuard only keeps a broken test from hanging; no assertion depends on it.
const hangGuard = 2 * time.Minute

// recorder is the runner under the registry: the plugin host, with every
// finished call's result kept so a test can see how a call ended.
type recorder struct {
	*wasm.Host
	mu   sync.Mutex
	done []wasm.Result
	ch   chan wasm.Result
}

func (r *recorder) Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result {
	res := r.Host.Call(ctx, tool, args, opts)
	r.mu.Lock()
	r.done = append(r.done, res)
	r.mu.Unlock()
	select {
	case r.ch <- res:
	default:
	}
	return res
}

type fixture struct {
	w       *worldtest.World
	rec     *recorder
	http    *httptest.Server
	token   string
	ws, ws2 string
}

// newFixture serves the MCP endpoint of a world with two workspaces whose
// set offers the conformance fixtures, echo and a call that runs until
// stopped, on a real net/http server.
func newFixture(t testing.TB, with ...func(*mcpserver.Deps)) *fixture {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workspaces: []string{"a", "b"}})
	host := wasmtest.HostWith(t, []wasm.Capability{mcpserver.Capability()}, "mcpconformance", "echo", "stuck", "notebook")
	rec := &recorder{Host: host, ch: make(chan wasm.Result, 16)}
	reg := tools.NewRegistry(rec, map[string][]string{"core": {"*"}})
	_, token, err := w.DB.CreateToken(context.Background(), w.User.ID, "mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Sessions are kept in the store, as serve does.
	d := mcpserver.Deps{Auth: w.DB, Workspaces: w.DB, Tools: reg, Catalog: host, Sessions: w.DB, External: w.DB}
	for _, f := range with {
		f(&d)
	}
	if d.PerMinute > 0 {
		d.Rate = w.DB
	}
	s := mcpserver.New(d)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &fixture{w: w, rec: rec, http: ts, token: token, ws: w.Workspaces[0], ws2: w.Workspaces[1]}
}

func (f *fixture) url(ws string) string { return f.http.URL + "/api/v1/workspaces/" + ws + "/mcp" }

// bearer adds the token to every request of the client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// The protocol revisions the endpoint serves differently: with sessions
// (server-to-client requests on the session) and without (2026-07-28,
// questions as inputRequests of the result).
var revisions = []string{"2025-11-25", "2026-07-28"}

// connect opens a session of the Go SDK's client; version "" is its latest.
func (f *fixture) connect(t testing.TB, ws, token string, opts *mcp.ClientOptions, version ...string) (*mcp.ClientSession, error) {
	t.Helper()
	var so *mcp.ClientSessionOptions
	if len(version) > 0 {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version[0]}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.url(ws),
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, so)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func textOf(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsOverMCP(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var progress []float64
	cs, err := f.connect(t, f.ws, f.token, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	t.Run("annotations map readOnly", func(t *testing.T) {
		ro, rw := byName["echo"], byName["writeNote"]
		if ro == nil || rw == nil {
			t.Fatalf("tools listed: %v", list.Tools)
		}
		if !ro.Annotations.ReadOnlyHint || ro.Annotations.OpenWorldHint == nil || *ro.Annotations.OpenWorldHint {
			t.Errorf("echo (read-only, no network): %+v", ro.Annotations)
		}
		if rw.Annotations.ReadOnlyHint || rw.Annotations.DestructiveHint == nil || !*rw.Annotations.DestructiveHint || rw.Annotations.IdempotentHint {
			t.Errorf("writeNote (writes): %+v", rw.Annotations)
		}
		schema, _ := json.Marshal(byName["json_schema_2020_12_tool"].InputSchema)
		for _, kw := range []string{`"$defs"`, `"allOf"`, `"if"`, `"then"`, `"else"`, `"$anchor"`} {
			if !strings.Contains(string(schema), kw) {
				t.Errorf("input schema lost %s: %s", kw, schema)
			}
		}
	})
	t.Run("text, structured and content results", func(t *testing.T) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
		if err != nil || r.IsError || textOf(t, r) != "This is a simple text response for testing." {
			t.Fatalf("test_simple_text: %v %+v", err, r)
		}
		r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echoJSON", Arguments: map[string]any{"text": "hi"}})
		if err != nil || r.IsError {
			t.Fatalf("echoJSON: %v %+v", err, r)
		}
		if got, _ := json.Marshal(r.StructuredContent); string(got) != `{"text":"hi"}` {
			t.Errorf("structured content %s", got)
		}
		r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_multiple_content_types"})
		if err != nil || r.IsError || len(r.Content) != 3 {
			t.Fatalf("test_multiple_content_types: %v %+v", err, r)
		}
		if img, ok := r.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || len(img.Data) == 0 {
			t.Errorf("second block %#v", r.Content[1])
		}
	})
	t.Run("failures are tool errors", func(t *testing.T) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_error_handling"})
		if err != nil || !r.IsError || !strings.Contains(textOf(t, r), "intentionally returns an error") {
			t.Fatalf("%v %+v", err, r)
		}
		// Arguments are validated against the schema before the plugin runs.
		r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 42}})
		if err != nil || !r.IsError || !strings.Contains(textOf(t, r), wasm.CodeInvalidArguments) {
			t.Fatalf("bad arguments: %v %+v", err, r)
		}
	})
	t.Run("progress reports become notifications", func(t *testing.T) {
		p := &mcp.CallToolParams{Name: "test_tool_with_progress"}
		p.SetProgressToken("tok")
		if r, err := cs.CallTool(ctx, p); err != nil || r.IsError {
			t.Fatalf("%v %+v", err, r)
		}
		// Notifications may trail the result on the stream.
		deadline := time.Now().Add(hangGuard)
		for {
			mu.Lock()
			n := len(progress)
			got := fmt.Sprint(progress)
			mu.Unlock()
			if n >= 3 {
				if got != "[0 0.5 1]" {
					t.Errorf("progress %s", got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("progress %s", got)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("prompts and resources from the manifest", func(t *testing.T) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/42/data"})
		if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"id":"42"`) {
			t.Fatalf("%v %+v", err, res)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nothing"}); err == nil {
			t.Error("an unknown resource was read")
		}
		pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "x", "arg2": "y"}})
		if err != nil || len(pr.Messages) != 1 || !strings.Contains(pr.Messages[0].Content.(*mcp.TextContent).Text, "arg1='x', arg2='y'") {
			t.Fatalf("%v %+v", err, pr)
		}
	})
}

// The client capability reaches the client of the call: its model and its
// user; outside MCP it refuses.
func TestSamplingAndElicitation(t *testing.T) {
	f := newFixture(t)
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) { testSamplingAndElicitation(t, f, v) })
	}
	// The same tool called by an agent or the API has no client to ask.
	set, _, err := tools.NewRegistry(f.rec, map[string][]string{"core": {"*"}}).Set("core")
	if err != nil {
		t.Fatal(err)
	}
	res := set.Call(toolcall.With(context.Background(), toolcall.Caller{Principal: f.w.P, WorkspaceID: f.ws}), "test_sampling", []byte(`{"prompt":"x"}`), nil)
	if res.OK || res.Error == nil || !strings.Contains(res.Error.Message, "did not arrive over MCP") {
		t.Fatalf("outside MCP: %+v", res)
	}
}

func testSamplingAndElicitation(t *testing.T, f *fixture, version string) {
	cs, err := f.connect(t, f.ws, f.token, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "echo of " + r.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada"}}, nil
		},
	}, version)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "ping"}})
	if err != nil || textOf(t, r) != "LLM response: echo of ping" {
		t.Fatalf("sampling: %v %q", err, textOf(t, r))
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "name?"}})
	if err != nil || !strings.Contains(textOf(t, r), `action=accept, content={"username":"ada"}`) {
		t.Fatalf("elicitation: %v %+v", err, r)
	}

}

// A client that cancels (notifications/cancelled) stops the plugin call.
func TestCancellationReachesThePlugin(t *testing.T) {
	f := newFixture(t)
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) { testCancellation(t, f, v) })
	}
}

func testCancellation(t *testing.T, f *fixture, version string) {
	cs, err := f.connect(t, f.ws, f.token, nil, version)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "spin"})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond) // the call is running (spin runs until stopped)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	select {
	case res := <-f.rec.ch:
		if res.Error == nil || res.Error.Code != wasm.CodeCanceled {
			t.Fatalf("the plugin call ended with %+v, want canceled", res)
		}
	case <-time.After(hangGuard):
		t.Fatal("the plugin call was not stopped")
	}
}

// Hostile requests: DNS rebinding, foreign origins, no or bad tokens,
// another tenant's workspace, a session taken to another workspace or by
// another user.
func TestRefusals(t *testing.T) {
	f := newFixture(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(path, host, origin, token, session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	path := "/api/v1/workspaces/" + f.ws + "/mcp"
	other := worldtest.New(t, worldtest.Options{}) // another tenant, in another store: its ids are unknown here
	_ = other
	stranger, err := f.w.DB.CreateTenant(context.Background(), "other")
	if err != nil {
		t.Fatal(err)
	}
	strangerWS, err := f.w.DB.CreateWorkspace(context.Background(), tenancy.Workspace{TenantID: stranger.ID, Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                      string
		path, host, origin, token string
		want                      int
	}{
		{"a rebinding Host is refused", path, "evil.example:80", "", f.token, http.StatusForbidden},
		{"a rebinding Host is refused before authentication", path, "evil.example", "", "", http.StatusForbidden},
		{"a foreign Origin is refused", path, "", "http://evil.example", f.token, http.StatusForbidden},
		{"an Origin that is not http is refused", path, "", "null", f.token, http.StatusForbidden},
		// An origin is host and port: another program's page on the same
		// machine is another origin (issue 24 item 6).
		{"another port's Origin is refused", path, "", "http://localhost:3000", f.token, http.StatusForbidden},
		{"another loopback port's Origin is refused", path, "", "http://" + loopbackOtherPort(f.http.Listener.Addr().String()), f.token, http.StatusForbidden},
		{"the server's own Origin passes", path, "", "http://" + f.http.Listener.Addr().String(), f.token, http.StatusOK},
		{"an Origin with a path is refused", path, "", "http://" + f.http.Listener.Addr().String() + "/x", f.token, http.StatusForbidden},
		{"no token", path, "", "", "", http.StatusUnauthorized},
		{"a bad token", path, "", "", "ahk_not-a-token", http.StatusUnauthorized},
		{"another tenant's workspace", "/api/v1/workspaces/" + strangerWS.ID + "/mcp", "", "", f.token, http.StatusNotFound},
		{"a workspace that does not exist", "/api/v1/workspaces/nope/mcp", "", "", f.token, http.StatusNotFound},
		{"the metadata is refused to a rebinding Host", "/.well-known/oauth-protected-resource" + path, "evil.example", "", "", http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := post(c.path, c.host, c.origin, c.token, "", init)
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.want)
			}
			if c.want == http.StatusUnauthorized {
				want := `resource_metadata="http://` + f.http.Listener.Addr().String() + `/.well-known/oauth-protected-resource` + path + `"`
				if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, want) {
					t.Errorf("WWW-Authenticate %q lacks %s", got, want)
				}
			}
		})
	}

	t.Run("protected-resource metadata (RFC 9728)", func(t *testing.T) {
		resp, err := http.Get(f.http.URL + "/.well-known/oauth-protected-resource" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %v", resp.StatusCode, err)
		}
		if m["resource"] != f.url(f.ws) || fmt.Sprint(m["bearer_methods_supported"]) != "[header]" {
			t.Errorf("metadata %v", m)
		}
	})

	t.Run("a session stays with its user and workspace", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, f.url(f.ws), strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+f.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		session := resp.Header.Get("Mcp-Session-Id")
		if session == "" {
			t.Fatalf("no session (%d)", resp.StatusCode)
		}
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		// Another user of the same tenant, member of the workspace too.
		u, err := f.w.DB.CreateUser(context.Background(), tenancy.User{TenantID: f.w.Tenant.ID, Email: "v@t"})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.w.DB.SetMembership(context.Background(), tenancy.Membership{WorkspaceID: f.ws, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
		_, token2, err := f.w.DB.CreateToken(context.Background(), u.ID, "other", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := post(path, "", "", token2, session, list); r.StatusCode < 400 {
			t.Errorf("another user continued the session: %d", r.StatusCode)
		}
		if r := post("/api/v1/workspaces/"+f.ws2+"/mcp", "", "", f.token, session, list); r.StatusCode != http.StatusNotFound {
			t.Errorf("the session reached another workspace: %d", r.StatusCode)
		}
	})
}

// A caller who may only read a workspace is not offered its writing tools
// and cannot run them.
func TestWritingToolNeedsWriteAccess(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	u, err := f.w.DB.CreateUser(ctx, tenancy.User{TenantID: f.w.Tenant.ID, Email: "viewer@t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: f.ws, UserID: u.ID, Role: tenancy.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	_, token, err := f.w.DB.CreateToken(ctx, u.ID, "viewer", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := f.connect(t, f.ws, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	offered := func(cs *mcp.ClientSession) map[string]bool {
		t.Helper()
		l, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, tl := range l.Tools {
			m[tl.Name] = true
		}
		return m
	}
	if got := offered(cs); got["writeNote"] || !got["test_simple_text"] {
		t.Errorf("a viewer is offered %v: want the read-only tools only", got)
	}
	member, err := f.connect(t, f.ws, f.token, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := offered(member); !got["writeNote"] {
		t.Errorf("a member is not offered writeNote: %v", got)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "x"}})
	if err == nil && !r.IsError {
		t.Fatalf("a viewer ran writeNote: %+v", r)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"}); err != nil || r.IsError {
		t.Fatalf("a read-only tool: %v %+v", err, r)
	}
}

// Under 2026-07-28 the answers travel in a requestState the server signs
// and binds to the call: a tampered state, or one taken to another tool,
// is refused, and the answers in it cannot be forged.
func TestRequestStateIsBound(t *testing.T) {
	f := newFixture(t)
	cs, err := f.connect(t, f.ws, f.token, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
	}, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r1, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_multi_round"})
	if err != nil || !r1.NeedsInput() || r1.InputRequests["step1"] == nil || r1.RequestState == "" {
		t.Fatalf("round 1: %v %+v", err, r1)
	}
	answer := mcp.InputResponseMap{"step1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	r2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_multi_round", InputResponses: answer, RequestState: r1.RequestState})
	if err != nil || !r2.NeedsInput() || r2.InputRequests["step2"] == nil || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2: %v %+v", err, r2)
	}
	color := mcp.InputResponseMap{"step2": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "blue"}}}
	for _, c := range []struct {
		name, tool, state string
	}{
		{"tampered", "test_input_required_result_multi_round", r2.RequestState + "-TAMPERED"},
		{"forged answers", "test_input_required_result_multi_round", forge(r2.RequestState)},
		{"taken to another tool", "test_input_required_result_request_state", r2.RequestState},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, InputResponses: color, RequestState: c.state})
			if err == nil || !strings.Contains(err.Error(), "invalid requestState") {
				t.Fatalf("accepted: %v %+v", err, r)
			}
		})
	}
	r3, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_multi_round", InputResponses: color, RequestState: r2.RequestState})
	if err != nil || r3.NeedsInput() || textOf(t, r3) != "Multi-round complete: Ada likes blue" {
		t.Fatalf("round 3: %v %+v", err, r3)
	}
}

// forge replaces a state's answers, keeping its signature.
func forge(state string) string {
	_, mac, _ := strings.Cut(state, ".")
	body := `{"step1":{"action":"accept","content":{"name":"Mallory"}}}`
	return base64.RawURLEncoding.EncodeToString([]byte(body)) + "." + mac
}

// Every call over MCP is a span, failures marked, as the API's calls are.
func TestCallsAreTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f := newFixture(t, func(d *mcpserver.Deps) { d.Tracer = tp })
	cs, err := f.connect(t, f.ws, f.token, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"test_simple_text", "test_error_handling"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, s := range rec.Ended() {
		got[s.Name()] = s.Status().Code.String() + " " + s.Status().Description
	}
	if got["mcp call test_simple_text"] != "Unset " || got["mcp call test_error_handling"] != "Error tool_error" {
		t.Fatalf("spans %v", got)
	}
}

// Calls over MCP count against the tenant's rate like the API's tool calls.
func TestTenantRate(t *testing.T) {
	f := newFixture(t, func(d *mcpserver.Deps) { d.PerMinute = 2 })
	cs, err := f.connect(t, f.ws, f.token, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Three calls within one minute: the third is refused. Calls that
	// straddle a minute boundary are counted in two windows; then the
	// next minute is tried.
	for attempt := 0; ; attempt++ {
		minute := time.Now().UTC().Truncate(time.Minute)
		var texts []string
		for range 3 {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, textOf(t, r))
		}
		if !time.Now().UTC().Truncate(time.Minute).Equal(minute) && attempt < 3 {
			time.Sleep(time.Until(minute.Add(2 * time.Minute)))
			continue
		}
		if !strings.HasPrefix(texts[2], "rate_limited: ") || strings.HasPrefix(texts[1], "rate_limited") {
			t.Fatalf("calls: %q", texts)
		}
		return
	}
}

// With sessions a response stream is resumable: the tool ends its stream
// mid-call (client.Poll), the client reconnects with Last-Event-ID and
// receives the result from the event store.
func TestResumableStream(t *testing.T) {
	f := newFixture(t)
	resumed := &resumeCounter{next: bearer{f.token, http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.url(f.ws), HTTPClient: &http.Client{Transport: resumed}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_reconnection"})
	if err != nil || r.IsError || !strings.Contains(textOf(t, r), "properly reconnected") {
		t.Fatalf("%v %+v", err, r)
	}
	if resumed.n.Load() == 0 {
		t.Fatal("the result arrived without the client resuming its stream")
	}
}

// resumeCounter counts the requests that resume a stream (Last-Event-ID).
type resumeCounter struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *resumeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Last-Event-ID") != "" {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// loopbackOtherPort is addr with another port.
func loopbackOtherPort(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if port == "1" {
		return net.JoinHostPort(host, "2")
	}
	return net.JoinHostPort(host, "1")
}
