package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// DefaultResumeGrace is how long a call whose stream was lost waits for its
// client to resume the stream (GET with Last-Event-ID) before it is stopped.
// The official SDKs retry a lost stream after about a second (the TypeScript
// client's initial reconnection delay is 1 s, growing 1.5×), so 5 s lets two
// attempts arrive.
const DefaultResumeGrace = 5 * time.Second

// streamHeader carries, from the HTTP handler to the tool handler, which
// POST a call arrived on. The SDK hands the request's headers to tool
// handlers but not its context; a client's own value is removed first.
const streamHeader = "Agenthost-Call-Stream"

// abandonment finds the calls of session-ful clients (protocol revisions
// before 2026-07-28) that nobody waits for any more. With sessions the SDK
// does not tie a call to its POST, because a lost stream may be resumed;
// and ending a session waits for its calls to finish. So a client that
// gives up without notifications/cancelled — the official Python SDK's
// request timeout sends none (modelcontextprotocol/python-sdk issue 1458) —
// would leave its call running, and billed, to its time limit. Here a call
// stops when its session is ended (DELETE) or when the connection of its
// stream closes and no resumption arrives within the grace.
type abandonment struct {
	grace time.Duration

	mu      sync.Mutex
	streams map[string]context.Context       // POST (streamHeader value) → its request's context
	calls   map[string]map[*watchedCall]bool // session id → its running calls
}

type watchedCall struct {
	owner   tenancy.Principal
	cancel  context.CancelFunc
	resumed chan context.Context // a resuming GET's context
}

func newAbandonment(grace time.Duration) *abandonment {
	if grace <= 0 {
		grace = DefaultResumeGrace
	}
	return &abandonment{grace: grace, streams: map[string]context.Context{}, calls: map[string]map[*watchedCall]bool{}}
}

// observe is the HTTP side: it tags a POST so its calls find its context,
// ends the calls of a session being deleted, and hands a resuming GET's
// context to the session's calls that lost their stream. done must be
// called when the request has been served.
func (a *abandonment) observe(r *http.Request, p tenancy.Principal) (_ *http.Request, done func()) {
	r.Header.Del(streamHeader)
	session := r.Header.Get("Mcp-Session-Id")
	if session == "" {
		return r, func() {}
	}
	switch r.Method {
	case http.MethodDelete:
		a.each(session, p, func(c *watchedCall) { c.cancel() })
	case http.MethodGet:
		if r.Header.Get("Last-Event-ID") != "" {
			a.each(session, p, func(c *watchedCall) {
				select {
				case c.resumed <- r.Context():
				default:
				}
			})
		}
	case http.MethodPost:
		var b [12]byte
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		r.Header.Set(streamHeader, id)
		a.mu.Lock()
		a.streams[id] = r.Context()
		a.mu.Unlock()
		return r, func() {
			a.mu.Lock()
			delete(a.streams, id)
			a.mu.Unlock()
		}
	}
	return r, func() {}
}

// each runs f on the session's calls that belong to p: a session id alone
// (someone else's, guessed or leaked) ends nothing.
func (a *abandonment) each(session string, p tenancy.Principal, f func(*watchedCall)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for c := range a.calls[session] {
		if c.owner == p {
			f(c)
		}
	}
}

// watch returns the call's context, cancelled as well when the call is
// abandoned; release ends the watch when the call returns.
func (a *abandonment) watch(ctx context.Context, session, stream string, p tenancy.Principal) (_ context.Context, release func()) {
	a.mu.Lock()
	streamCtx, ok := a.streams[stream]
	a.mu.Unlock()
	if session == "" || !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &watchedCall{owner: p, cancel: cancel, resumed: make(chan context.Context, 1)}
	a.mu.Lock()
	if a.calls[session] == nil {
		a.calls[session] = map[*watchedCall]bool{}
	}
	a.calls[session][c] = true
	a.mu.Unlock()
	go a.follow(ctx, c, streamCtx)
	return ctx, func() {
		cancel()
		a.mu.Lock()
		delete(a.calls[session], c)
		if len(a.calls[session]) == 0 {
			delete(a.calls, session)
		}
		a.mu.Unlock()
	}
}

// follow waits for the stream to go; then for a resumption, whose stream it
// follows in turn, or for the grace to pass.
func (a *abandonment) follow(ctx context.Context, c *watchedCall, stream context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-stream.Done():
		}
		t := time.NewTimer(a.grace)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case stream = <-c.resumed:
			t.Stop()
		case <-t.C:
			c.cancel()
			return
		}
	}
}
