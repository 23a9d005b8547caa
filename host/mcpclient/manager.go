package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Store is what the manager needs of the SQL store: the servers a
// workspace's tool set gets (its own and its tenant's), in the principal's
// scope.
type Store interface {
	WorkspaceMCPServers(ctx context.Context, p tenancy.Principal, workspaceID string) ([]mcpconfig.Server, error)
}

// Meter bills a tool call's wall time (billing.Meter): HoldCompute holds
// a call of at most limit against the caller's spending limits before it
// starts (an error refuses it) and returns what records it once it ended.
type Meter interface {
	HoldCompute(ctx context.Context, tool string, limit time.Duration) (settle func(ctx context.Context, plugin string, d time.Duration) error, err error)
}

// Options configure a Manager. DataDir is required.
type Options struct {
	// DataDir is the host's data directory. A stdio server runs outside it
	// (WorkRoot may not be in it); DataDir/mcp/ID, where servers ran before,
	// is removed with the server.
	DataDir string
	// WorkRoot holds each stdio process's working directory, a fresh empty
	// one (0700) removed when the process ends [os.TempDir()].
	WorkRoot string
	// User is who stdio servers run as when the host runs as root [nobody]:
	// never root, whose CAP_SYS_PTRACE reads any process's memory. A host
	// that is not root runs them as its own user (it cannot switch), hidden
	// from them by procguard.Undumpable; User is then refused unless it is
	// the host's own.
	User string
	// UIDs, when the host runs as root, gives each stdio process a uid of
	// its own from the range (its gid the same number, no supplementary
	// groups), free again when the process ends: servers then cannot read
	// one another's /proc files or signal one another, as they can when
	// they all run as User. The ids need no passwd entry; they must be
	// used by nothing else on the machine (nor by another host's range).
	UIDs UIDRange
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
	// Commands are the stdio commands the operator allows, with the
	// variables allowed for each (AllowedCommand); none: no stdio server runs.
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
	// ids is who stdio servers run as.
	ids *identities

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
	if err := mcpconfig.CheckCommands(cfg.Commands); err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	if cfg.WorkRoot == "" {
		cfg.WorkRoot = os.TempDir()
	}
	if inside(cfg.WorkRoot, cfg.DataDir) {
		return nil, fmt.Errorf("mcpclient: stdio servers' directories (%s) would be inside the data directory %s", cfg.WorkRoot, cfg.DataDir)
	}
	cred, err := stdioCredential(cfg.User)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	if err := cfg.UIDs.check(); err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	if cfg.UIDs.Count > 0 && cred == nil {
		return nil, fmt.Errorf("mcpclient: stdio servers can have uids of their own only when the host runs as root")
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
	// What killed hosts left in WorkRoot goes before any server starts.
	sweepWorkDirs(cfg.WorkRoot, cfg.Logger)
	var ec *egress.Client
	if cfg.HTTPTransport == nil {
		pol := egress.NewPolicy().WithTimeout(mcpconfig.MaxTimeout).WithPrivateHostsAllowed(cfg.AllowPrivateHosts...)
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
		now: cfg.Now, egress: ec, conns: map[string]*conn{}, ids: &identities{shared: cred, r: cfg.UIDs, used: map[uint32]bool{}}}, nil
}

// inside says whether path is dir or in it (both made absolute and clean;
// symbolic links resolved where they exist).
func inside(path, dir string) bool {
	abs := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		return a
	}
	rel, err := filepath.Rel(abs(dir), abs(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// stdioCredential is who stdio servers run as: as root, name [nobody] with
// no supplementary groups; otherwise the host's user (nil).
func stdioCredential(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		if name != "" {
			if u, err := user.Current(); err != nil || u.Username != name {
				return nil, fmt.Errorf("stdio servers can run as %q only when the host runs as root (it runs as uid %d)", name, os.Geteuid())
			}
		}
		return nil, nil
	}
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("the user stdio servers run as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("the user %q has no numeric uid and gid (%s:%s)", name, u.Uid, u.Gid)
	}
	if uid == 0 || gid == 0 {
		return nil, fmt.Errorf("stdio servers never run as root or its group (the user %q is %d:%d)", name, uid, gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
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
func (m *Manager) conn(s mcpconfig.Server) (*conn, error) {
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
func (m *Manager) Status(ctx context.Context, s mcpconfig.Server) (Status, error) {
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

// Forget closes a removed server's connection (its process's directory goes
// with the process) and deletes DataDir/mcp/ID, where servers ran before.
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
