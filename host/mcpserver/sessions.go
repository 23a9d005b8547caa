package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// SessionStore keeps the sessions of protocol revisions before 2026-07-28
// where every host reads them (store.DB), so that a restarted host or
// another host behind the same load balancer serves a session: the
// specification lets a server answer 404 only for a session it terminated
// or does not know (Streamable HTTP, session management), and the official
// SDKs give up on that 404.
type SessionStore interface {
	SaveMCPSession(ctx context.Context, s store.MCPSession) error
	MCPSession(ctx context.Context, id string) (store.MCPSession, bool, error)
	TouchMCPSession(ctx context.Context, id string, t time.Time) error
	DeleteMCPSession(ctx context.Context, id string, idleBefore time.Time) error
}

// sessions is this host's table of live sessions in front of the store.
// The store is the truth: a request of a session the store no longer has
// (deleted on another host, expired) is answered 404 even when the session
// is live here; a session the store has and this host does not is revived
// from its saved state.
type sessions struct {
	s     *Server
	store SessionStore

	mu   sync.Mutex
	live map[string]*liveSession
}

type liveSession struct {
	ws        string
	owner     tenancy.Principal
	transport *mcp.StreamableServerTransport
	session   *mcp.ServerSession
	timer     *time.Timer // closes the live copy when idle here

	mu      sync.Mutex
	version string    // negotiated protocol version, from the client's header
	touched time.Time // last seen_at written
}

func newSessions(s *Server, st SessionStore) *sessions {
	return &sessions{s: s, store: st, live: map[string]*liveSession{}}
}

// serve serves a request of the stateful revisions.
func (t *sessions) serve(w http.ResponseWriter, r *http.Request, e *endpoint, ws string, p tenancy.Principal) {
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" || (r.Method == http.MethodPost && wellFormedPOST(r)) {
		var ok bool
		if r, ok = t.versioned(w, r); !ok {
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes)
		}
	}
	if id == "" {
		if r.Method != http.MethodPost || !wellFormedPOST(r) {
			// The SDK's handler answers what is wrong (400, 405, 415)
			// without opening a session.
			e.stateful.ServeHTTP(w, r)
			return
		}
		t.open(w, r, ws, p)
		return
	}
	ls, status := t.find(r, id, ws, p)
	switch status {
	case http.StatusNotFound:
		http.Error(w, "session not found", http.StatusNotFound)
		return
	case http.StatusForbidden:
		// Another principal's session id (leaked or guessed) reaches
		// nothing of it.
		http.Error(w, "session belongs to another principal", http.StatusForbidden)
		return
	case http.StatusInternalServerError:
		http.Error(w, "session store unavailable", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodDelete {
		t.end(id, ls)
		if err := t.store.DeleteMCPSession(r.Context(), id, time.Now().Add(-t.s.d.SessionTimeout)); err != nil {
			t.s.d.Logger.Error("mcp: deleting session", "err", err)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		ls.mu.Lock()
		ls.version = v
		ls.mu.Unlock()
	}
	ls.timer.Reset(t.s.d.SessionTimeout)
	ls.transport.ServeHTTP(w, r)
}

// wellFormedPOST is the SDK handler's check of a POST before it opens a
// session (Content-Type application/json, Accept of both media types).
func wellFormedPOST(r *http.Request) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for _, a := range strings.Split(v, ",") {
			a, _, _ = strings.Cut(strings.TrimSpace(a), ";")
			switch strings.ToLower(strings.TrimSpace(a)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// open starts a session (the POST carries initialize). The session is
// saved before its id reaches the client, so the client's next request may
// go to any host.
func (t *sessions) open(w http.ResponseWriter, r *http.Request, ws string, p tenancy.Principal) {
	srv := t.s.mcpServer(r)
	if srv == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	id := rand.Text()
	ls, err := t.connect(r.Context(), srv, id, ws, p, nil)
	if err != nil {
		t.s.d.Logger.Error("mcp: opening session", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	// The session is kept before the initialize is answered: the client's
	// next request may reach another host at once. The parameters are read
	// from the request, as the SDK will.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.end(id, ls)
		http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string                `json:"method"`
		Params *mcp.InitializeParams `json:"params"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" && msg.Params != nil {
		if err := t.save(r.Context(), id, ls, msg.Params, nil); err != nil {
			t.end(id, ls)
			t.s.d.Logger.Error("mcp: saving session", "err", err)
			http.Error(w, "session store unavailable", http.StatusServiceUnavailable)
			return
		}
	}
	ls.transport.ServeHTTP(w, r)
	if ls.session.InitializeParams() == nil {
		// Initialization failed: the session goes, as the SDK's handler
		// does (go-sdk issue 578).
		t.end(id, ls)
		if err := t.store.DeleteMCPSession(context.WithoutCancel(r.Context()), id, time.Time{}); err != nil {
			t.s.d.Logger.Error("mcp: deleting session", "err", err)
		}
	}
}

// find returns the live session of id for p in ws, reviving it from the
// store if this host has none; the status says why there is none.
func (t *sessions) find(r *http.Request, id, ws string, p tenancy.Principal) (*liveSession, int) {
	ctx := r.Context()
	rec, ok, err := t.store.MCPSession(ctx, id)
	if err != nil {
		t.s.d.Logger.Error("mcp: reading session", "err", err)
		return nil, http.StatusInternalServerError
	}
	t.mu.Lock()
	ls := t.live[id]
	t.mu.Unlock()
	now := time.Now()
	if !ok || rec.WorkspaceID != ws || now.Sub(rec.SeenAt) > t.s.d.SessionTimeout {
		// Unknown, another workspace's, or expired: a session this host
		// does not (or no longer) know.
		if ls != nil && ok && rec.WorkspaceID == ws {
			t.end(id, ls)
		}
		if ok && rec.WorkspaceID == ws {
			if err := t.store.DeleteMCPSession(ctx, id, time.Time{}); err != nil {
				t.s.d.Logger.Error("mcp: deleting expired session", "err", err)
			}
		}
		return nil, http.StatusNotFound
	}
	if rec.Owner.TenantID != p.TenantID || rec.Owner.UserID != p.UserID {
		return nil, http.StatusForbidden
	}
	// seen_at is written at most every tenth of the timeout: a request
	// costs one read, not a write.
	if ls != nil {
		ls.mu.Lock()
		stale := now.Sub(ls.touched) > t.s.d.SessionTimeout/10
		if stale {
			ls.touched = now
		}
		ls.mu.Unlock()
		if stale {
			if err := t.store.TouchMCPSession(ctx, id, now); err != nil {
				t.s.d.Logger.Error("mcp: touching session", "err", err)
			}
		}
		return ls, http.StatusOK
	}
	var state mcp.ServerSessionState
	if err := json.Unmarshal(rec.State, &state); err != nil {
		t.s.d.Logger.Error("mcp: saved session state", "err", err)
		return nil, http.StatusInternalServerError
	}
	srv := t.s.mcpServer(r)
	if srv == nil {
		return nil, http.StatusInternalServerError
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ls := t.live[id]; ls != nil { // revived meanwhile by another request
		return ls, http.StatusOK
	}
	ls, err = t.connectLocked(ctx, srv, id, ws, p, &state)
	if err != nil {
		t.s.d.Logger.Error("mcp: reviving session", "err", err)
		return nil, http.StatusInternalServerError
	}
	ls.version = state.NegotiatedProtocolVersion
	if err := t.store.TouchMCPSession(ctx, id, now); err != nil {
		t.s.d.Logger.Error("mcp: touching session", "err", err)
	}
	ls.touched = now
	return ls, http.StatusOK
}

func (t *sessions) connect(ctx context.Context, srv *mcp.Server, id, ws string, p tenancy.Principal, state *mcp.ServerSessionState) (*liveSession, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.connectLocked(ctx, srv, id, ws, p, state)
}

func (t *sessions) connectLocked(ctx context.Context, srv *mcp.Server, id, ws string, p tenancy.Principal, state *mcp.ServerSessionState) (*liveSession, error) {
	tr := &mcp.StreamableServerTransport{SessionID: id, EventStore: t.s.events}
	// The context's values (the principal) reach the session; the SDK
	// detaches its cancellation.
	ss, err := srv.Connect(ctx, tr, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		return nil, fmt.Errorf("connecting session: %w", err)
	}
	ls := &liveSession{ws: ws, owner: p, transport: tr, session: ss, touched: time.Now()}
	// The live copy goes when idle here; the session itself lives on in the
	// store until it is idle everywhere.
	ls.timer = time.AfterFunc(t.s.d.SessionTimeout, func() { t.end(id, ls) })
	t.live[id] = ls
	return ls, nil
}

// end closes the live copy of a session (its calls are cancelled).
func (t *sessions) end(id string, ls *liveSession) {
	t.mu.Lock()
	if t.live[id] == ls {
		delete(t.live, id)
	}
	t.mu.Unlock()
	ls.timer.Stop()
	ls.session.Close()
}

// save writes the session's state; initialized is set once the client sent
// notifications/initialized.
func (t *sessions) save(ctx context.Context, id string, ls *liveSession, params *mcp.InitializeParams, initialized *mcp.InitializedParams) error {
	if params == nil {
		params = ls.session.InitializeParams()
	}
	ls.mu.Lock()
	version := ls.version
	ls.mu.Unlock()
	state := mcp.ServerSessionState{InitializeParams: params, InitializedParams: initialized,
		NegotiatedProtocolVersion: version}
	b, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("session state: %w", err)
	}
	return t.store.SaveMCPSession(ctx, store.MCPSession{ID: id, WorkspaceID: ls.ws, Owner: ls.owner, State: b, SeenAt: time.Now()})
}

// initialized is the servers' InitializedHandler: the session is saved as
// initialized, so a host that revives it serves it at once.
func (t *sessions) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	id := req.Session.ID()
	t.mu.Lock()
	ls := t.live[id]
	t.mu.Unlock()
	if ls == nil {
		return
	}
	if req.Extra != nil {
		if v := req.Extra.Header.Get("Mcp-Protocol-Version"); v != "" {
			ls.mu.Lock()
			ls.version = v
			ls.mu.Unlock()
		}
	}
	params := req.Params
	if params == nil {
		params = &mcp.InitializedParams{}
	}
	if err := t.save(context.WithoutCancel(ctx), id, ls, nil, params); err != nil {
		t.s.d.Logger.Error("mcp: saving initialized session", "err", err)
	}
}

// closeAll closes every live copy (a stop); the sessions stay in the store
// for the next host.
func (t *sessions) closeAll() {
	t.mu.Lock()
	all := make(map[string]*liveSession, len(t.live))
	for id, ls := range t.live {
		all[id] = ls
	}
	t.mu.Unlock()
	for id, ls := range all {
		t.end(id, ls)
	}
}

// versioned returns r with the protocol version in its context the way
// the SDK's handler puts it there (its key is unexported): the transport
// reads it to decide priming events and resumable streams. A throwaway
// handler is given a session-less copy of r; its server callback, asked
// after the version is set, takes the context and offers no server, so
// nothing is opened. ok is false when the SDK refused the version; its
// answer has then been written to w.
func (t *sessions) versioned(w http.ResponseWriter, r *http.Request) (_ *http.Request, ok bool) {
	var got context.Context
	calls := 0
	h := mcp.NewStreamableHTTPHandler(func(q *http.Request) *mcp.Server {
		calls++
		if calls == 1 {
			return t.s.mcpServer(q) // for the versions it supports
		}
		got = q.Context() // the POST would open a session: none is offered
		return nil
	}, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	probe := r.Clone(r.Context())
	probe.Method = http.MethodPost
	probe.Header = r.Header.Clone()
	probe.Header.Del("Mcp-Session-Id")
	probe.Header.Set("Content-Type", "application/json")
	probe.Header.Set("Accept", "application/json, text/event-stream")
	probe.Body = http.NoBody
	rec := &discardWriter{h: http.Header{}}
	h.ServeHTTP(rec, probe)
	if got == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(rec.body.Bytes())
		return nil, false
	}
	return r.WithContext(got), true
}

type discardWriter struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	return d.body.Write(p)
}
func (d *discardWriter) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
