package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/pdk/connection/wire"
)

// Capability serves the host capability "connection" to connector
// plugins: request (an HTTP request sent with one of the caller's
// connections) and info (a connection's non-secret description). Only a
// connector plugin may use it, only with connections of its own provider,
// only to the hosts its manifest declares, and only for the user the tool
// call runs for. Service may be set after the plugin host is built, before
// the first call.
type Capability struct {
	Service *Service
	// Egress are the operator's settings (private hosts allowed, resolver).
	Egress wasm.EgressOptions
	// Send, when set, sends the checked requests in place of the network
	// (plugin test answers them from recordings). It gets the connector's
	// egress client, whose rules it must apply (CheckURL) before answering.
	Send func(ctx context.Context, client *egress.Client, r egress.Request) (*egress.Response, error)

	mu      sync.Mutex
	clients map[clientKey]*egress.Client
}

type clientKey struct {
	plugin, sha string
	readOnly    bool
}

// Wasm returns the capability "connection".
func (h *Capability) Wasm() wasm.Capability {
	mod := wasm.CapabilityPrefix + "connection"
	return wasm.Capability{
		Name:        "connection",
		Description: "HTTP requests to the connector's own provider with the calling user's connection (the host attaches the credentials; the plugin never sees them)",
		Functions: []wasm.HostFunction{
			// request is not marked write: a read-only tool's requests are
			// limited to GET and HEAD instead, as with http.
			wasm.JSONFunction(mod, "request", false, h.request),
			wasm.JSONFunction(mod, "info", false, h.info),
		},
	}
}

func capErr(code string, err error) error {
	return &wasm.CapabilityError{Code: code, Message: err.Error()}
}

// connector checks that the call is a connector plugin's, inside a user's
// tool call, and returns both.
func (h *Capability) connector(ctx context.Context, c *wasm.Call) (*manifest.Connector, tenancy.Principal, error) {
	if h.Service == nil {
		return nil, tenancy.Principal{}, capErr("unavailable", errors.New("connections are not configured on this host (no secret key?)"))
	}
	m := c.Runner().Manifest()
	if m.Kind != manifest.KindConnector || m.Connector == nil {
		return nil, tenancy.Principal{}, capErr("forbidden", fmt.Errorf("plugin %s is not a connector", m.Name))
	}
	caller, ok := toolcall.From(ctx)
	if !ok || caller.Principal.UserID == "" {
		return nil, tenancy.Principal{}, capErr("forbidden", errors.New("a connection is used only inside a user's tool call"))
	}
	return m.Connector, caller.Principal, nil
}

func (h *Capability) request(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	conn, p, err := h.connector(ctx, c)
	if err != nil {
		return nil, err
	}
	var req wire.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, capErr("invalid_request", err)
	}
	if req.Connection == "" || req.URL == "" {
		return nil, capErr("invalid_request", errors.New("a connection request needs connection and url"))
	}
	if conn.Auth != "" {
		// The connector declared how its connections authenticate: a
		// connection of another kind is not one it was written for.
		got, err := h.Service.Get(ctx, p, req.Connection)
		if err != nil {
			return nil, capErr(errorCode(err), err)
		}
		if got.Provider == conn.Provider && got.Auth != conn.Auth {
			return nil, capErr("wrong_auth", fmt.Errorf("connection %q authenticates by %s, this connector by %s", got.Label, got.Auth, conn.Auth))
		}
	}
	client := h.client(c)
	send := client.Do
	if h.Send != nil {
		send = func(ctx context.Context, r egress.Request) (*egress.Response, error) { return h.Send(ctx, client, r) }
	}
	er := egress.Request{Method: req.Method, URL: req.URL, Headers: req.Headers, Body: req.Body}
	if len(req.Parts) > 0 {
		if len(req.Body) > 0 {
			return nil, capErr("invalid_request", errors.New("a request has a body or parts, not both"))
		}
		src, _ := UploadFrom(ctx)
		if er.Stream, err = Stream(src, req.Parts); err != nil {
			return nil, capErr("invalid_request", err)
		}
	}
	do := h.Service.Do
	if req.NoCredential {
		do = h.Service.DoUncredentialed
	}
	resp, err := do(ctx, p, req.Connection, conn.Provider, conn.Hosts, er, send)
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	switch {
	case err == nil:
		note(ctx, newProviderRequest(method, req.URL, resp.Status))
	case errorCode(err) == "error":
		// Sent, and nothing (or nothing whole) came back; a request the
		// host refused to send (revoked, another host) is not noted.
		note(ctx, newProviderRequest(method, req.URL, 0))
	}
	if err != nil {
		return nil, capErr(errorCode(err), err)
	}
	out := wire.Response{Status: resp.Status, Body: resp.Body, Headers: make(map[string]string, len(resp.Headers))}
	for k, v := range resp.Headers {
		out.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	return out, nil
}

func (h *Capability) info(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	conn, p, err := h.connector(ctx, c)
	if err != nil {
		return nil, err
	}
	var req wire.InfoRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, capErr("invalid_request", err)
	}
	got, err := h.Service.Get(ctx, p, req.Connection)
	if err != nil {
		return nil, capErr(errorCode(err), err)
	}
	if got.Provider != conn.Provider {
		return nil, capErr("wrong_provider", fmt.Errorf("%w: connection %q is a %s connection", ErrWrongProvider, got.Label, got.Provider))
	}
	return wire.Connection{ID: got.ID, Provider: got.Provider, Label: got.Label, Auth: got.Auth, BaseURL: got.BaseURL,
		Deployment: got.Deployment, Account: got.Account, Scopes: got.Scopes}, nil
}

// errorCode names an error for the plugin (and for tools answering the model).
func errorCode(err error) string {
	var denied *egress.DeniedError
	switch {
	case errors.Is(err, ErrRevoked):
		return "connection_revoked"
	case errors.Is(err, ErrExpired):
		return "connection_expired"
	case errors.Is(err, ErrRejected):
		return "connection_rejected"
	case errors.Is(err, ErrWrongProvider):
		return "wrong_provider"
	case errors.Is(err, ErrHostRefused), errors.As(err, &denied):
		return "host_refused"
	case errors.Is(err, tenancy.ErrNotFound):
		return "not_found"
	case errors.Is(err, tenancy.ErrInvalid):
		return "invalid_request"
	}
	return "error"
}

// client is the connector's egress client: its connector hosts only,
// GET and HEAD for read-only tools, the plugin's response cap.
func (h *Capability) client(c *wasm.Call) *egress.Client {
	pl := c.Runner()
	k := clientKey{plugin: pl.Name(), sha: pl.SHA256(), readOnly: c.ReadOnly}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cl, ok := h.clients[k]; ok {
		return cl
	}
	lim := pl.Limits()
	pol := egress.NewPolicy().
		WithAllowedHosts(pl.Manifest().Connector.Hosts...).
		WithMaxResponseBytes(lim.MaxHTTPResponseBytes).
		WithTimeout(min(time.Duration(lim.TimeoutMs)*time.Millisecond, 5*time.Minute)).
		WithPrivateHostsAllowed(h.Egress.AllowPrivateHosts...)
	if c.ReadOnly {
		pol = pol.WithMethods(http.MethodGet, http.MethodHead)
	}
	if h.Egress.Resolver != nil {
		pol = pol.WithResolver(h.Egress.Resolver)
	}
	if h.clients == nil {
		h.clients = map[clientKey]*egress.Client{}
	}
	cl := egress.NewClient(pol)
	h.clients[k] = cl
	return cl
}
