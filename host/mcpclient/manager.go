package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Store is what the manager needs of the SQL store: the servers a
// workspace's tool set gets (its own and its tenant's), in the principal's
// scope.
type Store interface {
	WorkspaceMCPServers(ctx context.Context, p tenancy.Principal, workspaceID string) ([]Server, error)
}

// Meter records a tool call's wall time (billing.Meter).
type Meter interface {
	RecordCompute(ctx context.Context, plugin, tool string, d time.Duration) error
}

// Options configure a Manager. DataDir is required.
type Options struct {
	// DataDir holds each stdio server's working directory (DataDir/mcp/ID).
	DataDir string
	// Sealer opens the servers' secrets; nil: servers with secrets fail.
	Sealer *Sealer
	// Meter bills tool calls like plugin runs; nil: not billed.
	Meter Meter
	// Tracer makes a span per call; nil: none.
	Tracer trace.TracerProvider
	// ConnectTimeout bounds connecting and listing the tools [30s].
	ConnectTimeout time.Duration
	// IdleTimeout closes a connection unused that long [10m].
	IdleTimeout time.Duration
	// HTTPTransport carries HTTP servers' requests [host/egress's transport:
	// loopback, private and metadata addresses refused but for
	// AllowPrivateHosts].
	HTTPTransport http.RoundTripper
	// AllowPrivateHosts are the hosts ("host" for ports 80 and 443, or
	// "host:port") an HTTP server may be at although they resolve to a
	// private or loopback address (the operator's -allow-host).
	AllowPrivateHosts []string
	// Resolver resolves HTTP servers' names [the system's DNS] (the
	// operator's -resolve).
	Resolver egress.Resolver
	// Commands are the stdio commands the operator allows (AllowedCommand);
	// none: no stdio server runs.
	Commands []string
	// Version is agenthost's, told to servers.
	Version string
	Logger  *slog.Logger
	// Now is the clock [time.Now].
	Now func() time.Time
}

// Manager keeps the connections to the registered servers and is the
// tool registry's source finder. It is safe for concurrent use.
type Manager struct {
	store  Store
	cfg    Options
	logger *slog.Logger
	tracer trace.Tracer
	now    func() time.Time

	// egress checks HTTP servers' addresses; nil when the caller gave its
	// own HTTPTransport.
	egress *egress.Client

	mu    sync.Mutex
	conns map[string]*conn // by server ID
}

// CheckDestination refuses an HTTP server's URL that its connections would
// be refused (a loopback, private or metadata address the operator did not
// allow), so that a server is refused when it is added, not at every
// connection. Without the manager's own transport it checks nothing.
func (m *Manager) CheckDestination(ctx context.Context, rawURL string) error {
	if m.egress == nil {
		return nil
	}
	return m.egress.CheckDestination(ctx, rawURL)
}

// New returns a manager over the store.
func New(store Store, cfg Options) (*Manager, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("mcpclient: Options.DataDir is required")
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	var ec *egress.Client
	if cfg.HTTPTransport == nil {
		pol := egress.NewPolicy().WithTimeout(MaxTimeout).WithPrivateHostsAllowed(cfg.AllowPrivateHosts...)
		if cfg.Resolver != nil {
			pol = pol.WithResolver(cfg.Resolver)
		}
		ec = egress.NewClient(pol)
		cfg.HTTPTransport = ec.Transport()
	}
	tp := cfg.Tracer
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &Manager{store: store, cfg: cfg, logger: cfg.Logger, tracer: tp.Tracer("github.com/agenthost/agenthost/host/mcpclient"),
		now: cfg.Now, egress: ec, conns: map[string]*conn{}}, nil
}

// Sources returns the workspace's servers as tool sources (tools.SourceFinder).
// Nothing connects here: a source connects when the set lists its tools.
func (m *Manager) Sources(ctx context.Context, p tenancy.Principal, workspaceID string) ([]tools.Source, error) {
	servers, err := m.store.WorkspaceMCPServers(ctx, p, workspaceID)
	if err != nil {
		return nil, err
	}
	m.reapIdle()
	out := make([]tools.Source, 0, len(servers))
	for _, s := range servers {
		c, err := m.conn(s)
		if err != nil {
			out = append(out, brokenSource{name: "mcp:" + s.Name, err: err})
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// conn returns the server's connection, made on first use.
func (m *Manager) conn(s Server) (*conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.conns[s.ID]; ok {
		return c, nil
	}
	sec, err := m.cfg.Sealer.Open(s.TenantID, s.Name, s.Secrets)
	if err != nil {
		return nil, fmt.Errorf("the MCP server %q: its secrets: %w", s.Name, err)
	}
	c := newConn(m, s, sec)
	m.conns[s.ID] = c
	return c, nil
}

// Status connects to a server if needed and reports its tools, the tools it
// refused and its failures: what an admin checks after adding a server.
func (m *Manager) Status(ctx context.Context, s Server) (Status, error) {
	c, err := m.conn(s)
	if err != nil {
		return Status{}, err
	}
	_, err = c.ready(ctx)
	st := c.status()
	if err != nil && st.LastError == "" {
		st.LastError = err.Error()
	}
	return st, nil
}

// Forget closes a removed server's connection and deletes its directory.
func (m *Manager) Forget(id string) {
	m.mu.Lock()
	c := m.conns[id]
	delete(m.conns, id)
	m.mu.Unlock()
	if c != nil {
		c.close()
	}
	if id != "" && filepath.Base(id) == id {
		if err := os.RemoveAll(filepath.Join(m.cfg.DataDir, "mcp", id)); err != nil {
			m.logger.Warn("removing an MCP server's directory", "id", id, "err", err)
		}
	}
}

// reapIdle disconnects servers unused for the idle timeout.
func (m *Manager) reapIdle() {
	before := m.now().Add(-m.cfg.IdleTimeout)
	m.mu.Lock()
	conns := make([]*conn, 0, len(m.conns))
	for _, c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	for _, c := range conns {
		c.idle(before)
	}
}

// Close ends every connection (stdio servers are stopped).
func (m *Manager) Close() error {
	m.mu.Lock()
	conns := m.conns
	m.conns = map[string]*conn{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
	return nil
}

// brokenSource is a server that cannot be used at all (its secrets do not
// open): it offers no tools and says why.
type brokenSource struct {
	name string
	err  error
}

func (b brokenSource) Name() string                                { return b.name }
func (b brokenSource) Tools(context.Context) ([]tools.Tool, error) { return nil, b.err }
func (b brokenSource) Call(_ context.Context, tool string, _ []byte) wasm.Result {
	return failure(wasm.CodeUnavailable, "%v", b.err)
}
