package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/signature"
)

// pluginFlags are the flags of commands that run plugins (serve, worker).
type pluginFlags struct {
	dir           *string
	allowUnsigned *bool
	trust         *stringList
	grants        grantFlags
	poolSize      *int
	initTimeout   *time.Duration
	allowHosts    *stringList
	resolve       *resolveList
	cache         cacheFlags
	enable        *stringList // opt-in built-ins to load (builtin.OptIn)
}

func addPluginFlags(fs *flag.FlagSet) pluginFlags {
	pf := pluginFlags{
		dir:           fs.String("plugins", "", settingUsage("plugins")),
		allowUnsigned: fs.Bool("allow-unsigned", false, settingUsage("allow-unsigned")),
		trust:         &stringList{},
		grants:        addGrantFlags(fs, true),
		poolSize:      fs.Int("pool-size", 0, settingUsage("pool-size")),
		initTimeout:   fs.Duration("plugin-init-timeout", 30*time.Second, settingUsage("plugin-init-timeout", "its start function and runtime initialisation")),
		allowHosts:    &stringList{},
		resolve:       addResolveFlag(fs),
		cache:         addCacheFlags(fs),
		enable:        &stringList{},
	}
	fs.Var(pf.enable, "enable-plugin", settingUsage("enable-plugin"))
	fs.Var(pf.trust, "trust", settingUsage("trust"))
	fs.Var(pf.allowHosts, "allow-host", settingUsage("allow-host"))
	return pf
}

// cacheFlags are the compile cache's flags: one verified cache per
// machine, shared by the server, the worker and the CLI, so a plugin is
// compiled once per machine, not once per data directory or command. Its
// limits come from the environment as well, so that every command on the
// machine keeps the directory to the same size.
type cacheFlags struct {
	dir       *string
	maxMB     *int64
	maxUnused *time.Duration
}

func addCacheFlags(fs *flag.FlagSet) cacheFlags {
	return cacheFlags{
		dir:       fs.String("cache-dir", defaultCacheDir(), settingUsage("cache-dir")),
		maxMB:     fs.Int64("cache-max-mb", wasm.DefaultCacheLimits.MaxBytes>>20, settingUsage("cache-max-mb")),
		maxUnused: fs.Duration("cache-max-unused", wasm.DefaultCacheLimits.MaxUnused, settingUsage("cache-max-unused")),
	}
}

// limits are the cache's limits; a negative one is refused rather than
// taken for the default, as 0 is.
func (c cacheFlags) limits() (wasm.CacheLimits, error) {
	if *c.maxMB < 0 {
		return wasm.CacheLimits{}, fmt.Errorf("-cache-max-mb (AGENTHOST_CACHE_MAX_MB) %d: negative; 0 is the default", *c.maxMB)
	}
	if *c.maxUnused < 0 {
		return wasm.CacheLimits{}, fmt.Errorf("-cache-max-unused (AGENTHOST_CACHE_MAX_UNUSED) %v: negative; 0 is the default", *c.maxUnused)
	}
	return wasm.CacheLimits{MaxBytes: *c.maxMB << 20, MaxUnused: *c.maxUnused}, nil
}

// defaultCacheDir is the user's cache directory (XDG_CACHE_HOME or
// ~/.cache) under agenthost/wasm, or a folder in the temporary directory
// when the user has none.
func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "agenthost", "wasm")
	}
	return filepath.Join(os.TempDir(), "agenthost-wasm-cache")
}

// grantFlags are the operator's grants on the command line: a grants file
// and single grants beside it.
type grantFlags struct {
	file   *string
	mounts *stringList // PLUGIN=HOST:GUEST[:ro], or HOST:GUEST[:ro] for plugin call
	caps   *stringList // PLUGIN=CAP,CAP
	hosts  *stringList // PLUGIN=HOST,HOST (plugin call: HOST,HOST)
	// uninterruptible names plugins that may load although the host
	// cannot instrument them; one bool for plugin call's single plugin.
	uninterruptible    *stringList
	uninterruptibleOne *bool
}

func addGrantFlags(fs *flag.FlagSet, named bool) grantFlags {
	g := grantFlags{
		file:               fs.String("grants", "", settingUsage("grants", "YAML or JSON: ceilings, and per plugin capabilities, mounts, ceilings")),
		mounts:             &stringList{},
		caps:               &stringList{},
		hosts:              &stringList{},
		uninterruptible:    &stringList{},
		uninterruptibleOne: new(bool),
	}
	if named {
		fs.Var(g.mounts, "mount", "grant a plugin a host directory: PLUGIN=HOST:GUEST or PLUGIN=HOST:GUEST:ro (repeatable)")
		fs.Var(g.caps, "grant", "grant a third-party plugin capabilities: PLUGIN=CAP,CAP (repeatable)")
		fs.Var(g.hosts, "grant-host", "let a plugin with the http capability reach hosts its manifest does not list: PLUGIN=HOST,HOST (allowedHosts syntax, e.g. *.example.org; repeatable)")
		fs.Var(g.uninterruptible, "allow-uninterruptible", settingUsage("allow-uninterruptible"))
	} else {
		fs.Var(g.mounts, "mount", "grant the plugin a host directory: HOST:GUEST or HOST:GUEST:ro (repeatable)")
		fs.Var(g.hosts, "grant-host", "let the plugin reach hosts its manifest does not list: HOST,HOST or PLUGIN=HOST,HOST (allowedHosts syntax; repeatable)")
		fs.BoolVar(g.uninterruptibleOne, "allow-uninterruptible", false, settingUsage("allow-uninterruptible", "here a switch for the one plugin the command loads"))
	}
	return g
}

// apply adds the grants to cfg; plugin names the plugin of unnamed -mount
// flags (plugin call).
func (g grantFlags) apply(cfg wasm.Config, plugin string) (wasm.Config, error) {
	if *g.file != "" {
		f, err := wasm.LoadGrantsFile(*g.file)
		if err != nil {
			return cfg, err
		}
		if cfg, err = f.Apply(cfg); err != nil {
			return cfg, err
		}
	}
	for _, s := range *g.mounts {
		name, spec := plugin, s
		if plugin == "" {
			var ok bool
			if name, spec, ok = strings.Cut(s, "="); !ok {
				return cfg, fmt.Errorf("-mount %q: want PLUGIN=HOST:GUEST[:ro]", s)
			}
		}
		m, err := wasm.ParseMount(spec)
		if err != nil {
			return cfg, fmt.Errorf("-mount: %w", err)
		}
		cfg = cfg.WithMount(name, m)
	}
	for _, s := range *g.caps {
		name, list, ok := strings.Cut(s, "=")
		if !ok || list == "" {
			return cfg, fmt.Errorf("-grant %q: want PLUGIN=CAP,CAP", s)
		}
		cfg = cfg.WithGrant(name, strings.Split(list, ",")...)
	}
	for _, s := range *g.hosts {
		name, list := plugin, s
		// plugin call also takes serve's PLUGIN=HOST form when it names the
		// plugin called: a denial's hint (wasm's hostsHint) gives that form.
		if n, l, ok := strings.Cut(s, "="); ok && plugin != "" && n == plugin {
			list = l
		}
		if plugin == "" {
			var ok bool
			if name, list, ok = strings.Cut(s, "="); !ok || list == "" {
				return cfg, fmt.Errorf("-grant-host %q: want PLUGIN=HOST,HOST", s)
			}
		}
		for _, h := range strings.Split(list, ",") {
			if _, err := egress.ParseHostEntry(h); err != nil {
				return cfg, fmt.Errorf("-grant-host %q: %w", s, err)
			}
			cfg = cfg.WithHosts(name, h)
		}
	}
	for _, name := range *g.uninterruptible {
		cfg = cfg.WithUninterruptible(name)
	}
	if *g.uninterruptibleOne && plugin != "" {
		cfg = cfg.WithUninterruptible(plugin)
	}
	return cfg, nil
}

// egress are the operator's egress settings: -allow-host and -resolve.
func (pf pluginFlags) egress() (wasm.EgressOptions, error) {
	r, err := pf.resolve.resolver()
	return wasm.EgressOptions{AllowPrivateHosts: *pf.allowHosts, Resolver: r}, err
}

// DefaultMemoryLimit is the soft limit of the Go heap (runtime/debug.SetMemoryLimit)
// of a process that runs plugins, unless the operator sets GOMEMLIMIT. At
// Go's default (GOGC=100) a heap of 400 MB live is collected only at 800
// MB; near the limit the collector runs sooner instead (Go caps it at half
// the CPU when the live heap alone passes the limit). The plugins' linear
// memories are mapped outside the heap where the system allows it (Linux,
// macOS: host/wasm's guestmemory.go) and on the heap elsewhere; their own
// bounds are the idle bound and the idle timeout (host/wasm).
const DefaultMemoryLimit = 768 << 20

// applyMemoryLimit sets DefaultMemoryLimit unless GOMEMLIMIT names one,
// and returns the limit in force.
func applyMemoryLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(DefaultMemoryLimit)
	return DefaultMemoryLimit
}

// config is the plugin host's configuration the flags make (the server
// adds the capabilities, and protects the data directory and the
// configuration file from mounts).
func (pf pluginFlags) config(dataDir string) (server.Plugins, error) {
	eo, err := pf.egress()
	if err != nil {
		return server.Plugins{}, err
	}
	trust, err := loadTrust(*pf.trust)
	if err != nil {
		return server.Plugins{}, err
	}
	limits, err := pf.cache.limits()
	if err != nil {
		return server.Plugins{}, err
	}
	cfg, err := pf.grants.apply(wasm.NewConfig().
		WithVerifier(signature.Verifier{Trust: trust}).
		WithAllowUnsigned(*pf.allowUnsigned).
		WithPoolSize(*pf.poolSize).
		WithInitTimeout(*pf.initTimeout).
		// What instances and code closed after an idle spell leave on the
		// Go heap (host buffers, decoded modules; native code unmapped by
		// its finalizer) is given back at once, not at the runtime's leisure.
		WithIdleRelease(debug.FreeOSMemory).
		WithCompilationCacheDir(*pf.cache.dir).
		WithCompilationCacheLimits(limits).
		// The operator's grants and trusted keys: no mount reaches them.
		WithProtectedPaths(append([]string{*pf.grants.file}, *pf.trust...)...), "")
	if err != nil {
		return server.Plugins{}, err
	}
	return server.Plugins{Wasm: cfg, Egress: eo, Dir: *pf.dir, Enable: *pf.enable}, nil
}
