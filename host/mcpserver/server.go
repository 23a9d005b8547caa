// Package mcpserver serves each workspace's tool set over the Model Context
// Protocol (streamable HTTP, github.com/modelcontextprotocol/go-sdk) at
// /api/v1/workspaces/{ws}/mcp, on a net/http listener of its own beside the
// Fiber API (docs/mcp.md says why). A tools/call takes the same path as the
// API's direct tool call (tools.Set.Call with a toolcall.Caller in the
// context), so validation, tracing, billing and tenancy are the same; the
// caller authenticates with the same API tokens.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Path is where a workspace's MCP endpoint is served; {ws} is its id.
const Path = "/api/v1/workspaces/{ws}/mcp"

// Authenticator turns an API token secret into the acting principal
// (store.DB).
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (tenancy.Principal, error)
}

// WorkspaceTools finds a workspace's tool set and the caller's rights in it
// (store.DB); both refuse a workspace the principal may not see.
type WorkspaceTools interface {
	WorkspaceTools(ctx context.Context, p tenancy.Principal, workspaceID string) (set string, extra []string, err error)
	Levels(ctx context.Context, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error)
}

// Catalog is what the server reads of the plugin runtime beyond the tool
// set: output schemas, capabilities (for openWorldHint), and the prompts
// and resources plugins offer (*wasm.Host).
type Catalog interface {
	Plugins() []*wasm.Plugin
	Tools() []wasm.ToolInfo
}

// Deps are the server's dependencies.
type Deps struct {
	Logger     *slog.Logger
	Auth       Authenticator
	Workspaces WorkspaceTools
	Tools      *tools.Registry
	Catalog    Catalog
	// Hosts are the Host header values (host or host:port) accepted
	// besides the loopback names (localhost, 127.0.0.1, [::1]); requests
	// naming any other host are refused (DNS rebinding). An Origin header,
	// when present, must be the request's own origin or one of these hosts
	// with the port written here (none: the scheme's default).
	Hosts []string
	// Origins are the origins (scheme://host[:port]) of browser-based
	// clients served across origins: their requests pass the Origin check
	// and get CORS headers, their preflights an answer. None: no CORS.
	Origins []string
	// SessionTimeout closes sessions idle this long (default 30 min).
	SessionTimeout time.Duration
	// Version is the server version announced to clients.
	Version string
	// Tracer makes a span of every call (nil: none), as the API's request
	// spans do for its direct calls.
	Tracer trace.TracerProvider
	// Rate bounds each tenant's calls per minute together with the API's
	// requests that start work (serve -tenant-rate); nil or 0: no limit.
	Rate      RateCounter
	PerMinute int64
	// ResumeGrace is how long a session's call whose stream was lost waits
	// for the client to resume it before it is stopped (default
	// DefaultResumeGrace).
	ResumeGrace time.Duration
	// Policies, when set, applies the workspaces' approval policies to
	// tools/call: deny refuses, ask asks the client's user by elicitation
	// (approval.go); Audit records those decisions.
	Policies Policies
	Audit    audit.Recorder
	// External, when set, says whether a workspace's endpoint offers its
	// external MCP servers' tools (a workspace setting); nil: it does.
	External ExternalTools
	// OAuth checks the access tokens of MCP clients that signed in like
	// people (host/oauthserver), and Issuer is that authorization server,
	// named in the protected-resource metadata; nil and "": API tokens only.
	OAuth  OAuthTokens
	Issuer string
	// Sessions keeps the sessions of revisions before 2026-07-28 where
	// every host reads them (store.DB), so a restarted or another host
	// serves them; nil: sessions live in this process only.
	Sessions SessionStore
}

// RateCounter counts a tenant's requests per window in storage every host
// shares (store.DB), the counter the API's rate limit uses.
type RateCounter interface {
	CountRequest(ctx context.Context, tenantID string, window time.Time) (int64, error)
}

// Server is the MCP endpoint of every workspace (an http.Handler).
type Server struct {
	d      Deps
	mux    *http.ServeMux
	events mcp.EventStore

	// stateKey signs the requestState of multi round-trip calls (a new
	// key per process: a state outlives no restart).
	stateKey []byte

	origins map[string]bool // Deps.Origins in lower case
	seed    maphash.Seed    // of the built servers' keys

	// abandon stops the calls of session-ful clients that went away.
	abandon *abandonment
	// sessions is the table of sessions backed by Deps.Sessions (nil
	// without it: the SDK's handler keeps them).
	sessions *sessions

	mu        sync.Mutex
	endpoints map[string]*endpoint // by workspace id
	servers   map[string]*built    // by workspace and variant
}

// built is the SDK server of one workspace as one kind of caller sees it,
// with what was put in it: it is changed in place when the set changes
// (a tool goes, comes, becomes unavailable), so that every session on it
// sees the change (notifications/tools/list_changed).
type built struct {
	srv *mcp.Server
	// key is the set as last built (names, descriptions, availability).
	key uint64
	// tools are the definitions offered, by name, as JSON.
	tools map[string]string
	// names are the tool names the plugin features were offered for;
	// features what was offered.
	names    string
	features features
}

// New returns the server; its routes are the endpoint and its OAuth
// protected-resource metadata (RFC 9728).
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.SessionTimeout <= 0 {
		d.SessionTimeout = 30 * time.Minute
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	if d.Tracer == nil {
		d.Tracer = noop.NewTracerProvider()
	}
	s := &Server{d: d, mux: http.NewServeMux(), endpoints: map[string]*endpoint{}, servers: map[string]*built{},
		// Streams of older protocol revisions are resumable: a client that
		// lost its connection asks again with Last-Event-ID.
		events: mcp.NewMemoryEventStore(nil), stateKey: make([]byte, 32), abandon: newAbandonment(d.ResumeGrace), seed: maphash.MakeSeed()}
	rand.Read(s.stateKey)
	if d.Sessions != nil {
		s.sessions = newSessions(s, d.Sessions)
	}
	s.origins = map[string]bool{}
	for _, o := range d.Origins {
		s.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	s.mux.Handle(Path, s.checkHosts(s.cors(s.authenticate(http.HandlerFunc(s.serveMCP)))))
	s.mux.Handle(metadataPrefix+Path, s.checkHosts(s.cors(http.HandlerFunc(s.serveMetadata))))
	return s
}

// ServeHTTP serves the MCP routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// endpoint is one workspace's pair of SDK handlers: the stateful one keeps
// sessions (protocol revisions up to 2025-11-25, where server-to-client
// requests such as sampling ride on the session), the stateless one serves
// revision 2026-07-28 and later, which has no sessions. Sessions live in
// their workspace's handler, so a session id never reaches another
// workspace's tools.
type endpoint struct {
	stateful, stateless *mcp.StreamableHTTPHandler
}

func (s *Server) endpoint(ws string) *endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.endpoints[ws]; ok {
		return e
	}
	get := func(r *http.Request) *mcp.Server { return s.mcpServer(r) }
	e := &endpoint{
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Logger: s.d.Logger, EventStore: s.events, SessionTimeout: s.d.SessionTimeout}),
		stateless: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Logger: s.d.Logger, Stateless: true,
			// Without sessions the POST is the whole request: a client that
			// hangs up stops its call.
			PropagateRequestCancellation: true}),
	}
	s.endpoints[ws] = e
	return e
}

type setKey struct{}

// offer is what a request's caller is offered: the workspace's set, and
// whether its writing tools are among it.
type offer struct {
	set   *tools.Set
	write bool
}

// statelessFrom is the first protocol revision without sessions (SEP-2575).
const statelessFrom = "2026-07-28"

// serveMCP has been authenticated; the workspace must be one the caller
// may see before anything of it is built.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	ws := r.PathValue("ws")
	p := principalFrom(r.Context())
	set, err := s.workspaceSet(r.Context(), p, ws)
	if err != nil {
		if status(err) == http.StatusInternalServerError {
			s.d.Logger.Error("mcp: workspace tool set", "workspace", ws, "err", err)
		}
		writeError(w, err)
		return
	}
	// A caller who may not write (a viewer) is not offered the writing
	// tools a call would refuse; run checks again on every call.
	_, write, err := s.d.Workspaces.Levels(r.Context(), p, ws)
	if err != nil {
		writeError(w, err)
		return
	}
	if !mayWrite(auth.TokenInfoFromContext(r.Context())) {
		write = tenancy.None // a client not granted mcp:write
	}
	// The SDK asks for the server on every request: it is built from this set.
	r = r.WithContext(context.WithValue(r.Context(), setKey{}, offer{set, write != tenancy.None}))
	e := s.endpoint(ws)
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessFrom {
		e.stateless.ServeHTTP(w, r)
		return
	}
	r, done := s.abandon.observe(r, p)
	defer done()
	if s.sessions != nil {
		s.sessions.serve(unnamedPrime{w}, r, e, ws, p)
		return
	}
	e.stateful.ServeHTTP(unnamedPrime{w}, r)
}

// mcpServer builds (or reuses) the SDK server of the request's workspace
// as the caller sees it: its tools, and the prompts and resources of their
// plugins. The SDK asks for it on every request; it changes only when the
// set's tools change, and every call checks the caller's rights again.
func (s *Server) mcpServer(r *http.Request) *mcp.Server {
	ws := r.PathValue("ws")
	o, ok := r.Context().Value(setKey{}).(offer)
	if !ok {
		return nil
	}
	list := o.set.Tools()
	variant := ws + "\x00all"
	if !o.write {
		list = slices.DeleteFunc(list, func(t tools.Tool) bool { return !t.ReadOnly })
		variant = ws + "\x00read-only"
	}
	// The server holds only the workspace's definitions (calls find the
	// caller in each request), so callers of one workspace share it.
	key := s.setKeyOf(list)
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.servers[variant]
	if ok && b.key == key {
		return b.srv
	}
	if !ok {
		b = &built{srv: s.newSDKServer(ws), tools: map[string]string{}}
		s.servers[variant] = b
	}
	s.update(b, ws, o.set, list)
	b.key = key
	return b.srv
}

// setKeyOf is what the offered definitions depend on, hashed: it is
// computed on every request, and a set's parameters run to many KiB.
func (s *Server) setKeyOf(list []tools.Tool) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, t := range list {
		h.WriteString(t.Name)
		h.WriteByte(0)
		h.WriteString(t.Description)
		h.WriteByte(0)
		h.WriteString(t.Unavailable)
		h.WriteByte(0)
		h.Write(t.Parameters)
		h.WriteByte(0)
		if t.ReadOnly {
			h.WriteByte('r')
		}
		h.WriteByte(1)
	}
	return h.Sum64()
}

// update makes b offer list: tools gone are removed, new and changed ones
// added (the SDK tells the sessions), the plugin features follow the
// tools' names.
func (s *Server) update(b *built, ws string, set *tools.Set, list []tools.Tool) {
	cat := newCatalogView(s.d.Catalog)
	now := make(map[string]string, len(list))
	names := make([]string, 0, len(list))
	for _, t := range list {
		if !objectSchema(t.Parameters) {
			// Every tool's schema is an object's (the manifest and
			// mcpclient see to it); the SDK would panic on another.
			s.d.Logger.Warn("mcp: a tool whose parameters are not an object's schema is not offered", "tool", t.Name)
			continue
		}
		mt := cat.mcpTool(t)
		if src, ok := set.SourceOf(t.Name); ok {
			external(mt, src)
		}
		if t.Unavailable != "" {
			unavailable(mt, t)
		}
		def, _ := json.Marshal(mt)
		now[t.Name] = string(def)
		names = append(names, t.Name)
		if b.tools[t.Name] != string(def) {
			b.srv.AddTool(mt, s.toolHandler(ws, t.Name))
		}
	}
	var gone []string
	for name := range b.tools {
		if _, ok := now[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		b.srv.RemoveTools(gone...)
	}
	b.tools = now
	if joined := strings.Join(names, ","); joined != b.names || b.features.empty() {
		b.features.remove(b.srv)
		b.features = s.addPluginFeatures(b.srv, ws, cat, list)
		b.names = joined
	}
}

func (s *Server) newSDKServer(ws string) *mcp.Server {
	var initialized func(context.Context, *mcp.InitializedRequest)
	if s.sessions != nil {
		initialized = s.sessions.initialized
	}
	return mcp.NewServer(&mcp.Implementation{Name: "agenthost", Title: "agenthost workspace " + ws, Version: s.d.Version},
		&mcp.ServerOptions{Logger: s.d.Logger, InitializedHandler: initialized,
			Instructions: "The tools of one agenthost workspace; each call runs a sandboxed plugin for the authenticated caller. " +
				"Tools whose title names an external MCP server are that server's, described in its own words.",
			// No argument of a prompt or resource template has completions
			// to offer: the answer is honestly empty.
			CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
			},
			// Subscriptions are accepted and kept by the SDK; a plugin's
			// resources are produced on each read and announce no updates.
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
}

func (s *Server) workspaceSet(ctx context.Context, p tenancy.Principal, ws string) (*tools.Set, error) {
	name, extra, err := s.d.Workspaces.WorkspaceTools(ctx, p, ws)
	if err != nil {
		return nil, err
	}
	// The workspace's external MCP servers' tools are its tools here too,
	// as in its agent runs, unless its managers left them out.
	if s.d.External != nil {
		offered, err := s.d.External.WorkspaceMCPExternalTools(ctx, p, ws)
		if err != nil {
			return nil, err
		}
		if !offered {
			set, _, err := s.d.Tools.Set(name, extra...)
			if err != nil {
				return nil, fmt.Errorf("workspace %s: %w", ws, err)
			}
			return set, nil
		}
	}
	set, _, err := s.d.Tools.WorkspaceSet(ctx, p, ws, name, extra...)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	}
	return set, nil
}

// closeSessions ends every session (a stop): their running calls are
// cancelled and their streams end, so a shutdown need not wait for them.
func (s *Server) closeSessions() {
	if s.sessions != nil {
		s.sessions.closeAll()
	}
	s.mu.Lock()
	servers := make([]*mcp.Server, 0, len(s.servers))
	for _, b := range s.servers {
		servers = append(servers, b.srv)
	}
	s.mu.Unlock()
	for _, srv := range servers {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}
}
