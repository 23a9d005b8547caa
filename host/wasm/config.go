package wasm

import (
	"log/slog"
	"time"
)

// Config configures a Host. It is an immutable builder: every With method returns
// a copy, so one Config can be shared and varied safely.
type Config struct {
	cacheDir      string
	poolSize      int
	logger        *slog.Logger
	logLevel      slog.Level
	registry      *Registry
	grants        map[string][]string
	grantDeclared bool
	verifier      Verifier
	allowUnsigned bool
	defaults      Defaults
	// closeOnDoneOnly skips instrumentation (tests of the fallback mode).
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
// instances per plugin, 128 MiB memory, 30 s calls, 8 MiB output, unsigned
// third-party plugins refused.
func NewConfig() Config {
	return Config{
		logger: slog.Default(),
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

// WithPoolSize bounds the live instances per plugin and link variant (0: 2×GOMAXPROCS).
func (c Config) WithPoolSize(n int) Config { c.poolSize = n; return c }

// WithLogger sets the logger plugin logs and host warnings go to.
func (c Config) WithLogger(l *slog.Logger) Config { c.logger = l; return c }

// WithPluginLogLevel sets the lowest plugin log level forwarded.
func (c Config) WithPluginLogLevel(l slog.Level) Config { c.logLevel = l; return c }

// WithCapabilities sets the capability registry (see NewRegistry and Capabilities).
func (c Config) WithCapabilities(r *Registry) Config { c.registry = r; return c }

// WithGrant grants capabilities to the named third-party plugin. Built-in plugins
// get what they declare.
func (c Config) WithGrant(plugin string, capabilities ...string) Config {
	g := make(map[string][]string, len(c.grants)+1)
	for k, v := range c.grants {
		g[k] = v
	}
	g[plugin] = append(append([]string(nil), g[plugin]...), capabilities...)
	c.grants = g
	return c
}

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
