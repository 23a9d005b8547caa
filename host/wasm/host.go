// Package wasm is agenthost's plugin runtime: it loads WebAssembly plugins that
// speak the Extism guest ABI, links them to the capabilities their manifest
// declares and the operator grants, and runs their tools under limits.
//
// The host implements the Extism ABI itself on wazero rather than through
// Extism's go-sdk, because the guarantees below need the guest module, which
// go-sdk keeps private: stopping a runaway guest cheaply (a flag the module is
// instrumented to check at every loop, instead of wazero's close-on-context-done,
// which made Go plugins 5-8× slower), moving large inputs and outputs straight
// through guest memory, per-call memory figures, read-only instances, and an
// egress-checked http_request. Plugins stay portable: the same .wasm runs in
// go-sdk and in the npm Extism host (see the tests).
//
// Everything about a call is bounded: arguments are validated against the tool's
// JSON Schema before the guest runs; the call runs under a deadline that really
// stops the guest; memory, output and HTTP responses are capped; traps, panics
// and timeouts become error Results, and a broken instance is discarded.
package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthost/agenthost/host/schema"
	"github.com/agenthost/agenthost/host/wasm/interrupt"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
	"github.com/tetratelabs/wazero"
)

// Host loads plugins and runs their tools. It is safe for concurrent use.
type Host struct {
	cfg      Config
	registry *Registry
	cache    wazero.CompilationCache
	disk     *diskCache // nil without a cache directory (cache.go)
	// compiles counts the modules handed to wazero to compile (natively
	// or from its cache): each costs a decode and a validation.
	compiles atomic.Int64

	mu      sync.RWMutex
	plugins map[string]*Plugin
	tools   map[string]*Plugin // tool name → plugin
	// kept are earlier versions of loaded plugins that an upgrade kept for
	// tool sets pinned to them (lifecycle.go), by plugin name.
	kept map[string][]*Plugin
	// retiring holds retired plugins until their last call ends.
	retiring sync.Map

	// releasing is set while a run of the idle release is scheduled.
	releasing atomic.Bool
	// releases counts the runs of the idle release (tests).
	releases atomic.Int64
}

// idleReleaseDelay gathers the expiries of several pools into one run of
// the idle release: pools used by one ingestion expire within moments of
// each other, and each run costs a full garbage collection.
const idleReleaseDelay = time.Second

// idleClosed is told by a pool that its expiry closed n idle instances; it
// schedules the configured idle release.
func (h *Host) idleClosed(n int) {
	if n == 0 || h.cfg.idleRelease == nil || !h.releasing.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(idleReleaseDelay, func() {
		h.releasing.Store(false)
		h.releases.Add(1)
		h.cfg.idleRelease()
	})
}

// New creates a host. Close it to release compiled code and instances.
func New(ctx context.Context, cfg Config) (*Host, error) {
	reg := cfg.registry
	if reg == nil {
		var err error
		if reg, err = NewRegistry(); err != nil {
			return nil, err
		}
	}
	h := &Host{cfg: cfg, registry: reg, plugins: map[string]*Plugin{}, tools: map[string]*Plugin{}, kept: map[string][]*Plugin{}}
	if cfg.cacheDir != "" {
		// Every file is verified before wazero may read one.
		disk, err := openDiskCache(cfg.cacheDir, cfg.cacheLimits, cfg.now, cfg.logger)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", cfg.cacheDir, err)
		}
		h.disk = disk
		c, err := wazero.NewCompilationCacheWithDir(cfg.cacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", cfg.cacheDir, err)
		}
		h.cache = c
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	return h, nil
}

func (h *Host) poolSize() int {
	if h.cfg.poolSize > 0 {
		return h.cfg.poolSize
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// Source is a plugin module to load.
type Source struct {
	// Origin names where it came from, for messages (a path, "builtin:webfetch").
	Origin string
	Module []byte
	// Builtin plugins ship with the host: trusted, granted what they declare.
	Builtin bool
	// Reload, when set, reads Module again. The host then keeps no copy of
	// the module once it is loaded, and reads it back only when it has to
	// instrument it again (its instrumented form is not in the compile
	// cache): a built-in's bytes are in the binary already, and a copy of
	// every one would be held for the process's life (about 100 MB). What
	// it returns must be Module's bytes (their digest is checked).
	Reload func() ([]byte, error)
}

// ErrRefused wraps every reason a plugin is not loaded.
var ErrRefused = errors.New("plugin refused")

// Load reads a plugin's manifest, checks its signature, its imports against the
// capabilities it declares and is granted, and registers its tools. No plugin
// code runs here; compilation happens on first use or in Warm.
func (h *Host) Load(ctx context.Context, src Source) (*Plugin, error) {
	p, err := h.open(src)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.register(p, src.Origin, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// open makes a Plugin of src with every check Load makes (manifest,
// signature, grants, imports, instrumentation), without registering it.
func (h *Host) open(src Source) (*Plugin, error) {
	m, err := manifest.Read(src.Module)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, src.Origin, err)
	}
	if !src.Builtin {
		if err := h.checkSignature(src); err != nil {
			return nil, fmt.Errorf("%w: %s (%s): %w", ErrRefused, m.Name, src.Origin, err)
		}
	}
	p := &Plugin{
		h: h, m: m, module: src.Module, sha256: digest(src.Module), builtin: src.Builtin, logger: h.cfg.logger,
		granted:  map[string]bool{},
		config:   map[string]string{"agenthost.stdio": "1"},
		inputs:   map[string]*schema.Schema{},
		outputs:  map[string]*schema.Schema{},
		readOnly: map[string]bool{},
	}
	p.variants[0] = variant{p: p, readOnly: true}
	p.variants[1] = variant{p: p}
	if pin := h.cfg.grants[m.Name].SHA256; pin != "" && !strings.EqualFold(pin, p.sha256) {
		return nil, fmt.Errorf("%w: %s (%s): its grant is pinned to sha256 %s, this module is %s", ErrRefused, m.Name, src.Origin, pin, p.sha256)
	}
	cfg := h.cfg
	cfg.registry = h.registry
	a, err := cfg.assess(m, src.Builtin)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, m.Name, err)
	}
	for _, name := range a.Granted {
		p.granted[name] = true
	}
	if err := h.checkImports(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, m.Name, err)
	}
	p.mounts, p.assessment = a.Mounts, a
	if len(m.Limits.AllowedPaths) > 0 && len(p.mounts) == 0 {
		h.cfg.logger.Warn("plugin asks for host paths; none are granted, so none are mounted",
			"plugin", m.Name, "requested", m.Limits.AllowedPaths)
	}
	p.limits = cfg.limitsFor(m, cfg.ceilings.over(cfg.grants[m.Name].Ceilings))
	p.vars = newVars(h.cfg.defaults.MaxVarBytes)
	for _, t := range m.Tools {
		// The manifest parser compiled these already; failures cannot happen here.
		if p.inputs[t.Name], err = schema.Compile("plugin:"+m.Name+"/"+t.Name+"/input", t.InputSchema); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrRefused, m.Name, err)
		}
		if len(t.OutputSchema) > 0 {
			if p.outputs[t.Name], err = schema.Compile("plugin:"+m.Name+"/"+t.Name+"/output", t.OutputSchema); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrRefused, m.Name, err)
			}
		}
		p.readOnly[t.Name] = t.ReadOnly
	}

	if !src.Builtin {
		// A third-party module is validated (and instrumented) now, so a
		// module whose code reaches for what the rewrite adds is refused at
		// load rather than failing its first call. Built-ins were checked
		// when they were built; theirs happens on first use.
		if _, _, err := p.prepare(); err != nil {
			return nil, fmt.Errorf("%w: %s (%s): %w", ErrRefused, m.Name, src.Origin, err)
		}
	}
	if src.Reload != nil {
		p.module, p.reload = nil, src.Reload
	}
	return p, nil
}

// register makes p the loaded plugin of its name, its tools the host's;
// replacing names the plugin it takes the place of (an upgrade), whose
// name and tools p may reuse. The caller holds h.mu.
func (h *Host) register(p *Plugin, origin string, replacing *Plugin) error {
	m := p.m
	if old, ok := h.plugins[m.Name]; ok && old != replacing {
		return fmt.Errorf("%w: %s: a plugin named %q is already loaded (sha256 %s)", ErrRefused, origin, m.Name, old.sha256[:12])
	}
	// Extractors' tools are the host's, called on a plugin with a document
	// (every extractor offers "extract"), and connectors' are called through
	// the connection tools; they are not agent tools, so they stay out of
	// the host-wide tool namespace.
	agentTools := m.HasAgentTools()
	for _, t := range m.Tools {
		if !agentTools {
			break
		}
		if other, ok := h.tools[t.Name]; ok && other != replacing {
			return fmt.Errorf("%w: %s: tool %q is already provided by plugin %q", ErrRefused, m.Name, t.Name, other.Name())
		}
		// A model sees "context.neutralizeData" as context_neutralizeData:
		// two tools that look alike on the wire could not be told apart.
		wire := manifest.WireName(t.Name)
		for name, other := range h.tools {
			if other != replacing && manifest.WireName(name) == wire {
				return fmt.Errorf("%w: %s: tool %q is %q to a model, as is tool %q of plugin %q", ErrRefused, m.Name, t.Name, wire, name, other.Name())
			}
		}
	}
	if replacing != nil {
		for name, q := range h.tools {
			if q == replacing {
				delete(h.tools, name)
			}
		}
	}
	h.plugins[m.Name] = p
	for _, t := range m.Tools {
		if agentTools {
			h.tools[t.Name] = p
		}
	}
	return nil
}

// LoadDir loads every *.wasm file in dir as a third-party plugin.
func (h *Host) LoadDir(ctx context.Context, dir string) ([]*Plugin, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*Plugin
	var errs []error
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p, err := h.Load(ctx, Source{Origin: path, Module: b})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

func (h *Host) checkSignature(src Source) error {
	if h.cfg.verifier == nil {
		if h.cfg.allowUnsigned {
			h.cfg.logger.Warn("loading a third-party plugin without signature checks", "origin", src.Origin)
			return nil
		}
		return errors.New("third-party plugins need a signature and no trusted keys are configured (or allow unsigned plugins explicitly)")
	}
	err := h.cfg.verifier.Verify(src.Module)
	if err != nil && h.cfg.allowUnsigned && isUnsigned(err) {
		h.cfg.logger.Warn("loading an unsigned third-party plugin", "origin", src.Origin)
		return nil
	}
	return err
}

// isUnsigned reports whether a verifier error says the module carries no
// signature at all (as opposed to a bad or untrusted one).
func isUnsigned(err error) bool {
	var u interface{ Unsigned() bool }
	return errors.As(err, &u) && u.Unsigned()
}

// checkImports refuses a module that imports anything it was not granted: the
// WASI preview 1 functions, the Extism kernel and agenthost's block copies are
// always there; everything else belongs to a capability that the manifest must
// declare.
func (h *Host) checkImports(p *Plugin) error {
	module, err := p.source()
	if err != nil {
		return err
	}
	imports, err := wasmbin.Imports(module)
	if err != nil {
		return fmt.Errorf("invalid wasm module: %w", err)
	}
	kernel := map[string]bool{}
	for _, f := range kernelFunctions(0) {
		kernel[f.Module+"\x00"+f.Name] = true
	}
	for _, im := range imports {
		if im.Kind != wasmbin.ImportFunc {
			return fmt.Errorf("imports %s.%s, which is not a function; plugins define their own memory, tables and globals", im.Module, im.Name)
		}
		switch {
		case im.Module == "wasi_snapshot_preview1":
			continue
		case kernel[im.Module+"\x00"+im.Name]:
			continue
		}
		capName, ok := h.registry.provider(im.Module, im.Name)
		if !ok {
			return fmt.Errorf("imports %s.%s, which no capability provides", im.Module, im.Name)
		}
		if !p.m.HasCapability(capName) {
			return fmt.Errorf("imports %s.%s of capability %q, which its manifest does not declare", im.Module, im.Name, capName)
		}
	}
	return nil
}

// prepareModule instruments a module so the host can stop it cheaply. A module
// the instrumentation cannot rewrite (interrupt.ErrUnsupported) is refused
// unless the operator's grant lets the plugin run uninterruptible, in
// wazero's close-on-context-done mode: that mode stops loops and calls, but
// not straight-line bulk work, and cannot keep the guest from holding up the
// host's garbage collector, so it is the operator's call, never the module's.
// With a compilation cache directory the instrumented module is kept there
// too (by the original's hash and the instrumentation's version), and used
// only when its bytes match the digest the host recorded (cache.go):
// rewriting a large plugin costs a quarter second, reading it back a few
// milliseconds.
// instrumentedName is the cache entry of a module's instrumented form.
func instrumentedName(sha string) string {
	return instrumentedDir + sha + "-" + interrupt.Version + ".wasm"
}

// instrumentedDir holds the instrumented modules in the cache directory.
const instrumentedDir = "instrumented/"

// CompiledBefore reports whether this machine's compile cache holds the
// plugin from an earlier compile, so its first use reads native code rather
// than compiling (serve then leaves it to its first use).
func (p *Plugin) CompiledBefore() bool {
	return p.h.disk != nil && p.h.disk.compiledBefore(p.sha256, instrumentedName(p.sha256))
}

func (h *Host) prepareModule(name string, module []byte, sha string) ([]byte, bool, error) {
	if h.cfg.closeOnDoneOnly {
		// The module runs as it is, but is still validated: wazero is never
		// handed code that names what it does not define, nor a locals bomb.
		if _, err := interrupt.Instrument(module, interrupt.Options{GlobalExport: interruptGlobal}); err != nil && !errors.Is(err, interrupt.ErrUnsupported) {
			return nil, false, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return module, false, nil
	}
	var cached string
	if h.disk != nil && sha != "" {
		cached = instrumentedName(sha)
		if b, ok := h.disk.read(cached); ok {
			return b, true, nil
		}
	}
	// A start function is stopped by the instance's sched_yield, which
	// traps once the instantiation's time is up (newInstance).
	out, err := interrupt.Instrument(module, interrupt.Options{GlobalExport: interruptGlobal, AllowStart: true})
	if err == nil && cached != "" {
		// A failed write only costs the next start the rewrite.
		if werr := h.disk.write(cached, sha, out); werr != nil {
			h.cfg.logger.Warn("keeping the instrumented module", "err", werr)
		}
	}
	if errors.Is(err, interrupt.ErrUnsupported) {
		if rerr := h.cfg.uninstrumentable(name, err); rerr != nil {
			return nil, false, rerr
		}
		h.cfg.logger.Warn("plugin cannot be instrumented; running it uninterruptible, as its grant allows: its straight-line work is not stopped at the deadline",
			"plugin", name, "reason", err)
		return module, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return out, true, nil
}

// uninstrumentable is the refusal of plugin name's module, which the rewrite
// cannot instrument (err), or nil when the operator allows the plugin to
// run uninterruptible.
func (c Config) uninstrumentable(name string, err error) error {
	if c.grants[name].Uninterruptible {
		return nil
	}
	return fmt.Errorf("%w: plugin %s uses what this host cannot stop at a deadline (%w); the operator may allow it to run uninterruptible with -allow-uninterruptible %s or `uninterruptible: true` in its grant", ErrRefused, name, err, name)
}

// CheckModule reports why the host would refuse the code of plugin name's
// module: it names what it does not define, or it cannot be instrumented
// to stop at a deadline and the operator does not allow it uninterruptible.
// Like Assess it runs nothing; it costs a rewrite of the module.
func (c Config) CheckModule(name string, module []byte) error {
	_, err := interrupt.Instrument(module, interrupt.Options{GlobalExport: interruptGlobal, AllowStart: true})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, interrupt.ErrUnsupported):
		return c.uninstrumentable(name, err)
	}
	return fmt.Errorf("%w: %w", ErrRefused, err)
}

// Plugin returns a loaded plugin by name.
func (h *Host) Plugin(name string) (*Plugin, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	p, ok := h.plugins[name]
	return p, ok
}

// Plugins lists the loaded plugins by name.
func (h *Host) Plugins() []*Plugin {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]*Plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// ToolInfo is a tool as the host offers it.
type ToolInfo struct {
	Plugin string
	manifest.Tool
}

// Tools lists every agent tool of every loaded plugin, by name (extractors'
// and connectors' tools are not agent tools).
func (h *Host) Tools() []ToolInfo {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []ToolInfo
	for _, p := range h.plugins {
		if !p.m.HasAgentTools() {
			continue
		}
		for _, t := range p.m.Tools {
			out = append(out, ToolInfo{Plugin: p.Name(), Tool: t})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Call runs a tool by name, wherever it lives. "tool@1.2.0" runs the tool
// of that version of its plugin (a tool set's pin): the loaded one, or one
// an upgrade kept. A call runs to its end on the plugin version it started
// on, whatever upgrades or removals happen meanwhile.
func (h *Host) Call(ctx context.Context, tool string, args []byte, opts *CallOptions) Result {
	name, version, pinned := strings.Cut(tool, "@")
	h.mu.RLock()
	p, ok := h.tools[name]
	if pinned {
		p, ok = h.pinned(name, version)
	}
	// Taken under the host's lock: an upgrade or removal, which takes it
	// exclusively, cannot retire p between the lookup and this.
	if ok && !p.acquire() {
		ok = false
	}
	h.mu.RUnlock()
	if !ok {
		if pinned {
			return failed(CodeUnknownTool, "no tool named %q in version %s", name, version)
		}
		return failed(CodeUnknownTool, "no tool named %q", tool)
	}
	defer p.release()
	start := time.Now()
	r := p.call(ctx, name, args, opts)
	r.Stats.Duration = time.Since(start)
	return r
}

// Warm compiles every loaded plugin in parallel (once, whatever kinds of
// tools it has), verifies each against its manifest, and returns the joined
// errors. Calls compile lazily anyway; Warm moves that cost to start-up.
func (h *Host) Warm(ctx context.Context) error {
	plugins := h.Plugins()
	errs := make([]error, len(plugins))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = p.Warm(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Warm compiles the plugin now rather than at its first call, prepares the
// instance pools of the kinds of tools it has and, for a third-party plugin,
// checks its code against its manifest.
// A failure is the plugin's: its calls answer with it, others serve.
func (p *Plugin) Warm(ctx context.Context) error {
	if !p.acquire() {
		return p.retiredError()
	}
	defer p.release()
	var hasRO, hasRW bool
	for _, ro := range p.readOnly {
		hasRO = hasRO || ro
		hasRW = hasRW || !ro
	}
	if hasRO {
		if err := p.variant(true).compile(ctx); err != nil {
			return err
		}
	}
	if hasRW {
		if err := p.variant(false).compile(ctx); err != nil {
			return err
		}
	}
	return p.ensureReady(ctx)
}

// Close releases every plugin's runtime and instances.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.plugins {
		p.close(ctx)
	}
	for _, ks := range h.kept {
		for _, p := range ks {
			p.close(ctx)
		}
	}
	// Plugins an upgrade or removal retired close too, calls or not.
	h.retiring.Range(func(k, _ any) bool {
		k.(*Plugin).close(ctx)
		return true
	})
	h.plugins = map[string]*Plugin{}
	h.tools = map[string]*Plugin{}
	h.kept = map[string][]*Plugin{}
	return h.cache.Close(ctx)
}

// writeFileAtomic writes b to path through a temporary file and a rename, so
// a reader never sees half a file.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
