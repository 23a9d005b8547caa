package wasm

import (
	"log/slog"
	"time"
)

// Config configures a Host. It is an immutable builder: every With method returns
// a copy, so one Config can be shared and varied safely.
type Config struct {
	cacheDir      string
	cacheLimits   CacheLimits
	now           func() time.Time // the compile cache's clock (tests move it)
	poolSize      int
	logger        *slog.Logger
	logLevel      slog.Level
	registry      *Registry
	grants        map[string]Grant
	grantDeclared bool
	ceilings      Ceilings
	protected     []string
	initTimeout   time.Duration
	killGrace     time.Duration
	verifier      Verifier
	allowUnsigned bool
	defaults      Defaults
	maxIdleMemory uint64
	idleTimeout   time.Duration
	idleRelease   func()
	guestGOGC     int
	// closeOnDoneOnly skips instrumentation: every plugin runs as an
	// uninterruptible one does (tests of that mode).
	closeOnDoneOnly bool
}

// Defaults are the limits of plugins whose manifest leaves them unset.
type Defaults struct {
	MemoryMiB            int
	Timeout              time.Duration
	MaxOutputBytes       int64
	MaxHTTPResponseBytes int64
	MaxVarBytes          int
}

// Verifier checks the signature of a plugin that is not built in. It is declared
// here, where it is used; package signature provides the implementation.
type Verifier interface {
	// Verify returns nil for a module signed by a trusted key, an error otherwise.
	Verify(module []byte) error
}

// NewConfig returns the defaults: no compile cache on disk, a pool of 2×GOMAXPROCS
// instances per plugin, 128 MiB memory, 30 s calls, 8 MiB output, the
// DefaultCeilings, unsigned third-party plugins refused.
func NewConfig() Config {
	return Config{
		logger:        slog.Default(),
		ceilings:      DefaultCeilings,
		maxIdleMemory: DefaultMaxIdleMemory,
		idleTimeout:   DefaultIdleTimeout,
		initTimeout:   30 * time.Second,
		killGrace:     time.Second,
		defaults: Defaults{
			MemoryMiB:            128,
			Timeout:              30 * time.Second,
			MaxOutputBytes:       8 << 20,
			MaxHTTPResponseBytes: 10 << 20,
			MaxVarBytes:          1 << 20,
		},
	}
}

// WithCompilationCacheDir keeps compiled modules in dir, so a restart loads
// plugins without compiling them again.
func (c Config) WithCompilationCacheDir(dir string) Config { c.cacheDir = dir; return c }

// CacheLimits bound a compile cache directory. Each start of a plugin
// marks its files used; a file unused for MaxUnused is deleted when a host
// opens the directory, and past MaxBytes the least recently used files go
// first (a deleted file costs its plugin one compile at its next start).
type CacheLimits struct {
	MaxBytes  int64         // 0: DefaultCacheLimits.MaxBytes
	MaxUnused time.Duration // 0: DefaultCacheLimits.MaxUnused
}

// DefaultCacheLimits keep about four generations of the built-in plugins
// (about 520 MB of native code and instrumented modules each) and forget a
// plugin a month after its last start.
var DefaultCacheLimits = CacheLimits{MaxBytes: 2 << 30, MaxUnused: 30 * 24 * time.Hour}

// WithCompilationCacheLimits bounds the compile cache directory's size
// and how long it keeps files no start used.
func (c Config) WithCompilationCacheLimits(l CacheLimits) Config { c.cacheLimits = l; return c }

// WithPoolSize bounds the live instances per plugin and kind (read-only, writing) (0: 2×GOMAXPROCS).
func (c Config) WithPoolSize(n int) Config { c.poolSize = n; return c }

// DefaultMaxIdleMemory is the guest memory above which an instance is
// closed after its call instead of kept for the next one.
const DefaultMaxIdleMemory = 256 << 20

// WithMaxIdleMemory sets the guest memory (bytes) an instance may keep
// between calls: a guest's memory never shrinks (Go's heap in Wasm grows
// and stays), so an instance that a large document grew is closed after
// its call and its memory returned, instead of held idle in the pool. Go
// guests get three quarters of it as their soft memory limit (GOMEMLIMIT)
// when that is below three quarters of their memory limit.
func (c Config) WithMaxIdleMemory(n uint64) Config { c.maxIdleMemory = n; return c }

// DefaultIdleTimeout is how long an instance may wait idle in its pool
// before it is closed.
const DefaultIdleTimeout = 30 * time.Second

// WithIdleTimeout sets how long an instance may wait idle for its next
// call (0 or negative: kept until the plugin closes), and how long a
// plugin may go without a call before its compiled code is closed too
// (idlecode.go). A quiet host then holds no guest memory and no plugin
// code: each instance keeps what its calls grew it to (up to the
// idle-memory bound), and a pool of them per plugin adds up. The next call
// after a quiet spell starts a fresh instance, compiling the plugin again
// from the compile cache.
func (c Config) WithIdleTimeout(d time.Duration) Config { c.idleTimeout = d; return c }

// WithIdleRelease sets what runs after idle instances or an idle plugin's
// code were closed (once for those closed within idleReleaseDelay of each
// other): serve passes debug.FreeOSMemory, since what they leave on the Go
// heap (host buffers, wazero's decoded module; a guest's memory where it
// cannot be mapped apart) would not be collected and returned for minutes
// by a process doing nothing else, and closed native code is unmapped by
// a finalizer, which only a collection runs.
func (c Config) WithIdleRelease(fn func()) Config { c.idleRelease = fn; return c }

// WithLogger sets the logger plugin logs and host warnings go to.
func (c Config) WithLogger(l *slog.Logger) Config { c.logger = l; return c }

// WithPluginLogLevel sets the lowest plugin log level forwarded.
func (c Config) WithPluginLogLevel(l slog.Level) Config { c.logLevel = l; return c }

// WithCapabilities sets the capability registry (see NewRegistry and Capabilities).
func (c Config) WithCapabilities(r *Registry) Config { c.registry = r; return c }

// WithGrant grants capabilities to the named third-party plugin. Built-in plugins
// get what they declare.
func (c Config) WithGrant(plugin string, capabilities ...string) Config {
	return c.withGrant(plugin, func(g *Grant) { g.Capabilities = append(g.Capabilities, capabilities...) })
}

// WithMount grants the named plugin (built-in or not) a host directory. The
// host refuses the plugin at load when the mount is not an existing
// directory or would expose a system tree or the host's own directories.
func (c Config) WithMount(plugin string, m Mount) Config {
	return c.withGrant(plugin, func(g *Grant) { g.Mounts = append(g.Mounts, m) })
}

// WithUninterruptible lets the named plugin load although the host cannot
// instrument it to stop at a deadline (see Grant.Uninterruptible).
func (c Config) WithUninterruptible(plugin string) Config {
	return c.withGrant(plugin, func(g *Grant) { g.Uninterruptible = true })
}

// WithHosts lets the named plugin reach these hosts over HTTP besides those
// its manifest lists (see Grant.Hosts).
func (c Config) WithHosts(plugin string, hosts ...string) Config {
	return c.withGrant(plugin, func(g *Grant) { g.Hosts = append(g.Hosts, hosts...) })
}

// WithPluginGrant sets everything the operator grants one plugin at once.
func (c Config) WithPluginGrant(plugin string, grant Grant) Config {
	return c.withGrant(plugin, func(g *Grant) { *g = grant })
}

func (c Config) withGrant(plugin string, edit func(*Grant)) Config {
	gs := make(map[string]Grant, len(c.grants)+1)
	for k, v := range c.grants {
		gs[k] = Grant{Capabilities: append([]string(nil), v.Capabilities...), Mounts: append([]Mount(nil), v.Mounts...), Ceilings: v.Ceilings, SHA256: v.SHA256,
			Uninterruptible: v.Uninterruptible, Hosts: append([]string(nil), v.Hosts...)}
	}
	g := gs[plugin]
	edit(&g)
	gs[plugin] = g
	c.grants = gs
	return c
}

// WithCeilings sets the most any manifest may ask for (zero fields keep
// DefaultCeilings); a grant may raise them for one plugin.
func (c Config) WithCeilings(l Ceilings) Config { c.ceilings = DefaultCeilings.over(l); return c }

// WithProtectedPaths names host directories no mount may contain or lie in
// (the data directory, the blob store). The compile cache is always protected.
func (c Config) WithProtectedPaths(dirs ...string) Config {
	c.protected = append(append([]string(nil), c.protected...), dirs...)
	return c
}

// WithInitTimeout bounds a new instance's start-up: the module's start
// section, _initialize and the Go runtime's init (default 30 s). Compiling
// is not counted.
func (c Config) WithInitTimeout(d time.Duration) Config { c.initTimeout = d; return c }

// WithKillGrace sets how long a stopped call may take to end after its
// deadline before the host closes its module and answers (default 1 s).
func (c Config) WithKillGrace(d time.Duration) Config { c.killGrace = d; return c }

// WithGrantDeclared grants every third-party plugin what its manifest declares
// (for development; production operators grant by name).
func (c Config) WithGrantDeclared(on bool) Config { c.grantDeclared = on; return c }

// WithVerifier sets how third-party plugin signatures are checked.
func (c Config) WithVerifier(v Verifier) Config { c.verifier = v; return c }

// WithAllowUnsigned lets third-party plugins without a signature load (with a
// warning). A signature that does not verify is refused regardless.
func (c Config) WithAllowUnsigned(on bool) Config { c.allowUnsigned = on; return c }

// WithDefaults sets the limits used where a manifest sets none.
func (c Config) WithDefaults(d Defaults) Config { c.defaults = d; return c }
