package filetransfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/pdk/filetransfer/wire"
)

// Logins opens a user's connection for the host to sign in with
// (*connections.Service).
type Logins interface {
	Login(ctx context.Context, p tenancy.Principal, id, provider string) (connections.Login, error)
}

// Capability serves the host capability "filetransfer" to connector
// plugins. Logins may be set after the plugin host is built, before the
// first call.
type Capability struct {
	Logins Logins
	// Egress are the operator's settings: a file server on a private or
	// loopback address is reached only when allowed by name with its port
	// ("files.corp:22"), as for HTTP.
	Egress wasm.EgressOptions
	// Timeout bounds one operation, sign-in included (default 30 s; the
	// plugin's own time limit when shorter).
	Timeout time.Duration
	// Idle is how long a signed-in session is kept for the next operation
	// of the same user and connection (default 60 s).
	Idle time.Duration
	// TLS is the base of FTPS connections' TLS configuration (RootCAs;
	// default the system's roots). The server name is the connection's host.
	TLS *tls.Config
	// MaxEntries bounds a listing (default 5000).
	MaxEntries int

	once sync.Once
	p    *pool
}

func (h *Capability) pool() *pool {
	h.once.Do(func() {
		idle := h.Idle
		if idle <= 0 {
			idle = time.Minute
		}
		h.p = newPool(idle)
	})
	return h.p
}

// Forget closes the kept sessions of a connection; give it to
// connections.Service.OnRevoke.
func (h *Capability) Forget(connectionID string) { h.pool().forget(connectionID) }

// Close closes every kept session (shutdown).
func (h *Capability) Close() { h.pool().closeAll() }

// Wasm returns the capability "filetransfer".
func (h *Capability) Wasm() wasm.Capability {
	mod := wasm.CapabilityPrefix + "filetransfer"
	return wasm.Capability{
		Name:        "filetransfer",
		Description: "files on the calling user's FTP, FTPS or SFTP server, reached by the host with the connection the plugin names (the plugin never holds the password or key)",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(mod, "list", false, h.list),
			wasm.JSONFunction(mod, "stat", false, h.stat),
			wasm.JSONFunction(mod, "read", false, h.read),
			wasm.JSONFunction(mod, "write", true, h.write),
			wasm.JSONFunction(mod, "mkdir", true, h.mkdir),
		},
	}
}

func capErr(code string, err error) error {
	return &wasm.CapabilityError{Code: code, Message: err.Error()}
}

// errorCode names an error for the plugin.
func errorCode(err error) string {
	var denied *egress.DeniedError
	switch {
	case errors.Is(err, ErrInvalidPath):
		return "invalid_path"
	case errors.Is(err, ErrOutside):
		return "path_refused"
	case errors.Is(err, ErrNotFound), errors.Is(err, tenancy.ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrExists):
		return "exists"
	case errors.Is(err, ErrNotDir), errors.Is(err, ErrIsDir):
		return "wrong_type"
	case errors.Is(err, ErrHostKey):
		return "host_key_mismatch"
	case errors.Is(err, errRejected), errors.Is(err, connections.ErrRejected):
		return "connection_rejected"
	case errors.Is(err, connections.ErrRevoked):
		return "connection_revoked"
	case errors.Is(err, connections.ErrWrongProvider):
		return "wrong_provider"
	case errors.As(err, &denied), errors.Is(err, connections.ErrHostRefused):
		return "host_refused"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrProtocol):
		return "bad_response"
	case errors.Is(err, tenancy.ErrInvalid):
		return "invalid_request"
	}
	return "server_error"
}

// call is one operation's context: the connector's manifest, the caller,
// the connection opened for them.
type call struct {
	conn   *manifest.Connector
	p      tenancy.Principal
	login  connections.Login
	limits wasm.Limits
}

func (h *Capability) begin(ctx context.Context, c *wasm.Call, connID string) (call, error) {
	if h.Logins == nil {
		return call{}, capErr("unavailable", errors.New("connections are not configured on this host (no secret key?)"))
	}
	m := c.Runner().Manifest()
	if m.Kind != manifest.KindConnector || m.Connector == nil {
		return call{}, capErr("forbidden", fmt.Errorf("plugin %s is not a connector", m.Name))
	}
	caller, ok := toolcall.From(ctx)
	if !ok || caller.Principal.UserID == "" {
		return call{}, capErr("forbidden", errors.New("a connection is used only inside a user's tool call"))
	}
	if connID == "" {
		return call{}, capErr("invalid_request", errors.New("name the connection"))
	}
	l, err := h.Logins.Login(ctx, caller.Principal, connID, m.Connector.Provider)
	if err != nil {
		if errors.Is(err, connections.ErrRevoked) {
			h.Forget(connID)
		}
		return call{}, capErr(errorCode(err), err)
	}
	if m.Connector.Auth != "" && l.Auth != m.Connector.Auth {
		return call{}, capErr("wrong_auth", fmt.Errorf("connection %q authenticates by %s, this connector by %s", l.Label, l.Auth, m.Connector.Auth))
	}
	return call{conn: m.Connector, p: caller.Principal, login: l, limits: c.Runner().Limits()}, nil
}

var defaultPorts = map[string]string{"ftp": "21", "ftps": "21", "sftp": "22"}

// do runs op on a session of the call's connection: a kept one, else a new
// sign-in. A session whose operation failed other than by refusing the
// request is closed, not kept.
func (h *Capability) do(ctx context.Context, k call, op func(s session) (any, error)) (any, error) {
	l := k.login
	u, err := url.Parse(l.BaseURL)
	if err != nil || defaultPorts[u.Scheme] == "" || u.Hostname() == "" {
		return nil, capErr("invalid_connection", fmt.Errorf("connection %q is not a file server's (ftp://, ftps:// or sftp://)", l.Label))
	}
	port := u.Port()
	if port == "" {
		port = defaultPorts[u.Scheme]
	}
	if len(k.conn.Hosts) > 0 && !egress.HostMatches(k.conn.Hosts, u.Hostname(), port) {
		return nil, capErr("host_refused", fmt.Errorf("%s is not among the connector's hosts", u.Hostname()))
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if t := time.Duration(k.limits.TimeoutMs) * time.Millisecond; t > 0 && t < timeout {
		timeout = t
	}
	key := poolKey{tenant: k.p.TenantID, user: k.p.UserID, conn: l.ID,
		login: sha256.Sum256([]byte(strings.Join([]string{l.BaseURL, l.Account, l.Password, l.PrivateKey, l.HostKey}, "\x00")))}
	pl := h.pool()
	s := pl.take(key)
	// A kept session the server has dropped meanwhile (its idle timeout)
	// fails its first operation: that is retried once on a new session.
	// Retrying a write is safe: it checks the target again and uploads
	// under a new temporary name.
	for kept := s != nil; ; kept = false {
		if s == nil {
			octx, cancel := context.WithTimeout(ctx, timeout)
			s, err = h.dial(octx, u, port, l, timeout)
			cancel()
			if err != nil {
				return nil, capErr(errorCode(err), fmt.Errorf("connection %q: %w", l.Label, scrub(err, l)))
			}
		}
		end := s.begin(ctx, timeout)
		out, err := op(s)
		end()
		if clean(err) {
			pl.put(key, s)
		} else {
			_ = s.close()
			s = nil
			if kept && ctx.Err() == nil {
				continue
			}
		}
		if err != nil {
			return nil, capErr(errorCode(err), scrub(err, l))
		}
		return out, nil
	}
}

func (h *Capability) dial(ctx context.Context, u *url.URL, port string, l connections.Login, timeout time.Duration) (session, error) {
	pol := egress.NewPolicy().WithPrivateHostsAllowed(h.Egress.AllowPrivateHosts...)
	if h.Egress.Resolver != nil {
		pol = pol.WithResolver(h.Egress.Resolver)
	}
	dial := egress.NewClient(pol).Dial
	hostport := net.JoinHostPort(u.Hostname(), port)
	base := baseDir(u.Path)
	switch u.Scheme {
	case "sftp":
		if l.HostKey == "" {
			return nil, fmt.Errorf("%w: the connection pins no host key", ErrHostKey)
		}
		return dialSFTP(ctx, dial, hostport, base, l.Account, l.Password, l.PrivateKey, l.HostKey, timeout)
	case "ftps":
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if h.TLS != nil {
			cfg = h.TLS.Clone()
		}
		cfg.ServerName = u.Hostname()
		// Data channels resume the control channel's TLS session, which
		// servers (vsftpd's require_ssl_reuse) demand.
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		return dialFTP(ctx, dial, hostport, base, l.Account, l.Password, cfg, timeout)
	}
	return dialFTP(ctx, dial, hostport, base, l.Account, l.Password, nil, timeout)
}

// scrub removes the password from an error message: a server echoing it
// back must not hand it to the plugin.
func scrub(err error, l connections.Login) error {
	msg := err.Error()
	clean := msg
	for _, v := range []string{l.Password, base64.StdEncoding.EncodeToString([]byte(l.Password))} {
		if len(l.Password) >= 4 {
			clean = strings.ReplaceAll(clean, v, "[redacted]")
		}
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

func decode(raw json.RawMessage, v any) error {
	if err := wasm.DecodeRequest(raw, v); err != nil {
		return capErr("invalid_request", err)
	}
	return nil
}

func checkPath(p string) (string, error) {
	r, err := relPath(p)
	if err != nil {
		return "", capErr("invalid_path", err)
	}
	return r, nil
}

// open decodes a request into req, checks the path it names (target, req
// itself or the PathRequest it embeds) and begins the call's use of its
// connection.
func (h *Capability) open(ctx context.Context, c *wasm.Call, raw json.RawMessage, req any, target *wire.PathRequest) (string, call, error) {
	if err := decode(raw, req); err != nil {
		return "", call{}, err
	}
	rel, err := checkPath(target.Path)
	if err != nil {
		return "", call{}, err
	}
	k, err := h.begin(ctx, c, target.Connection)
	return rel, k, err
}

func (h *Capability) list(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	var req wire.ListRequest
	rel, k, err := h.open(ctx, c, raw, &req, &req.PathRequest)
	if err != nil {
		return nil, err
	}
	limit := h.MaxEntries
	if limit <= 0 {
		limit = 5000
	}
	if req.Limit > 0 && req.Limit < limit {
		limit = req.Limit
	}
	return h.do(ctx, k, func(s session) (any, error) {
		es, more, err := s.list(ctx, rel, limit)
		if err != nil {
			return nil, err
		}
		return wire.Listing{Entries: es, Truncated: more}, nil
	})
}

func (h *Capability) stat(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	var req wire.PathRequest
	rel, k, err := h.open(ctx, c, raw, &req, &req)
	if err != nil {
		return nil, err
	}
	return h.do(ctx, k, func(s session) (any, error) { return s.stat(ctx, rel) })
}

func (h *Capability) read(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	var req wire.ReadRequest
	rel, k, err := h.open(ctx, c, raw, &req, &req.PathRequest)
	if err != nil {
		return nil, err
	}
	// The plugin's response limit bounds what reaches it, as for HTTP.
	max := k.limits.MaxHTTPResponseBytes
	if req.MaxBytes > 0 && (max <= 0 || req.MaxBytes < max) {
		max = req.MaxBytes
	}
	if max <= 0 {
		max = 10 << 20
	}
	return h.do(ctx, k, func(s session) (any, error) {
		e, data, err := s.read(ctx, rel, max)
		if err != nil {
			return nil, err
		}
		return wire.File{Entry: e, Data: data}, nil
	})
}

func (h *Capability) write(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	var req wire.WriteRequest
	rel, k, err := h.open(ctx, c, raw, &req, &req.PathRequest)
	if err != nil {
		return nil, err
	}
	// The body is opened anew for each try (a kept session's retry).
	size, open := int64(len(req.Data)), func() io.Reader { return bytes.NewReader(req.Data) }
	if req.Upload {
		if len(req.Data) > 0 {
			return nil, capErr("invalid_request", errors.New("a write carries data or sends the upload, not both"))
		}
		src, ok := connections.UploadFrom(ctx)
		if !ok {
			return nil, capErr("invalid_request", connections.ErrNoUpload)
		}
		size, open = src.Size, func() io.Reader { r, _ := src.Reader(0, src.Size); return r }
	}
	return h.do(ctx, k, func(s session) (any, error) { return s.write(ctx, rel, open(), size, req.Overwrite) })
}

func (h *Capability) mkdir(ctx context.Context, c *wasm.Call, raw json.RawMessage) (any, error) {
	var req wire.PathRequest
	rel, k, err := h.open(ctx, c, raw, &req, &req)
	if err != nil {
		return nil, err
	}
	return h.do(ctx, k, func(s session) (any, error) { return s.mkdir(ctx, rel) })
}
