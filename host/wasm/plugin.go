package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/schema"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// Plugin is one loaded plugin: its manifest, its module and, once compiled, its
// instance pools. Tools of one plugin share its variables and limits.
type Plugin struct {
	h       *Host
	m       *manifest.Manifest
	module  []byte // as loaded; nil when reload reads it back (Source.Reload)
	reload  func() ([]byte, error)
	sha256  string
	builtin bool
	logger  *slog.Logger
	granted map[string]bool
	mounts  []Mount // granted by the operator, checked at load
	// assessment is what was asked and granted at load, for operators.
	assessment Assessment
	limits     limits
	config     map[string]string
	vars       *vars
	inputs     map[string]*schema.Schema
	outputs    map[string]*schema.Schema
	readOnly   map[string]bool

	// Two variants: read-only tools run on instances whose write host
	// functions refuse and whose paths are mounted read-only. Both run the
	// same compiled code (code).
	variants [2]variant
	code     code

	describeOnce sync.Once
	describeErr  error

	// The instrumented module serves both variants: it is made once per
	// compile, and dropped once compiled (wazero keeps what it needs).
	prepareOnce  sync.Once
	prepared     []byte
	instrumented bool
	prepareErr   error

	// HTTP clients for read-only [0] and writing [1] tools, built on first use.
	egressOnce [2]sync.Once
	egress     [2]*egress.Client

	// logRate bounds the plugin's log output across calls (call.go).
	logRate logBucket

	// abandoned counts the instances whose guest did not stop within the
	// kill grace and were left to end by themselves (instance.abandon).
	abandoned atomic.Int64

	// life counts the calls running on the plugin; once an upgrade or a
	// removal retires it, no call starts and the last one to end closes it
	// (lifecycle.go).
	life      sync.Mutex
	inflight  int
	retired   bool
	closed    bool
	closeOnce sync.Once
	// lastCall is when the last call ended, codeTimer the check that
	// closes the compiled code of a plugin idle since (idlecode.go); both
	// under life. guests counts the guest runs under way, abandoned ones
	// included.
	lastCall  time.Time
	codeTimer *time.Timer
	guests    atomic.Int64
}

type limits struct {
	memoryPages uint32
	timeout     time.Duration
	maxOutput   int64
	maxHTTP     int64
}

// code is a plugin's module compiled on its own runtime, linked to the
// functions of its granted capabilities. It is compiled once, at the first
// use of either variant: wazero decodes and validates a module on every
// compile, even when its native code comes from the cache, and that is most
// of a warm load.
type code struct {
	once         sync.Once
	err          error
	rt           wazero.Runtime
	compiled     wazero.CompiledModule
	instrumented bool
}

// variant is one kind of instance of a plugin: read-only or writing. Each
// has its own pool, so a read-only call never runs on an instance that a
// writing call left its state in, and its own mounts.
type variant struct {
	p            *Plugin
	readOnly     bool
	once         sync.Once
	err          error
	rt           wazero.Runtime // the plugin's, shared by both variants
	compiled     wazero.CompiledModule
	instrumented bool
	// pool is set once compiled; atomic because closing the plugin (an
	// upgrade, a removal) reads it while a first call may be compiling.
	pool atomic.Pointer[pool]
	// fs serves the granted mounts to every instance (mountfs.go); closers
	// release their directory handles.
	fs      wazero.FSConfig
	closers []func()
}

// mount prepares the granted directories, each confined to itself; a
// read-only tool's variant gets every one read-only, whatever the grant says.
func (v *variant) mount() error {
	if len(v.p.mounts) == 0 {
		return nil
	}
	fsc := wazero.NewFSConfig()
	for _, m := range v.p.mounts {
		fsys, closer, err := mountFS(m, m.ReadOnly || v.readOnly)
		if err != nil {
			return fmt.Errorf("plugin %s: mount %s: %w", v.p.Name(), m, err)
		}
		v.closers = append(v.closers, closer)
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(fsys, m.GuestPath)
	}
	v.fs = fsc
	return nil
}

// Name is the plugin's manifest name.
func (p *Plugin) Name() string { return p.m.Name }

// Manifest returns the plugin's manifest. Do not modify it.
func (p *Plugin) Manifest() *manifest.Manifest { return p.m }

// SHA256 is the hex digest of the plugin file as loaded.
func (p *Plugin) SHA256() string { return p.sha256 }

// Builtin says whether the plugin ships with the host.
func (p *Plugin) Builtin() bool { return p.builtin }

// Mounts are the host directories granted to the plugin, as mounted.
func (p *Plugin) Mounts() []Mount { return append([]Mount(nil), p.mounts...) }

// Assessment says what the plugin asked for and what the operator granted.
func (p *Plugin) Assessment() Assessment { return p.assessment }

// Granted lists the capabilities the plugin is linked to.
func (p *Plugin) Granted() []string {
	var out []string
	for _, c := range p.m.Capabilities {
		if p.granted[c] {
			out = append(out, c)
		}
	}
	return out
}

// Limits are the limits a plugin runs under: its manifest's requests within
// the host's ceilings, else the host's defaults.
type Limits struct {
	MemoryMiB            int   `json:"memoryMiB"`
	TimeoutMs            int64 `json:"timeoutMs"`
	MaxOutputBytes       int64 `json:"maxOutputBytes"`
	MaxHTTPResponseBytes int64 `json:"maxHttpResponseBytes"`
}

// Limits returns the limits the plugin runs under.
func (p *Plugin) Limits() Limits {
	return Limits{MemoryMiB: int(p.limits.memoryPages / 16), TimeoutMs: p.limits.timeout.Milliseconds(),
		MaxOutputBytes: p.limits.maxOutput, MaxHTTPResponseBytes: p.limits.maxHTTP}
}

func (p *Plugin) variant(readOnly bool) *variant {
	if readOnly {
		return &p.variants[0]
	}
	return &p.variants[1]
}

// prepare instruments the module once (see Host.prepareModule); both link
// variants run the result.
func (p *Plugin) prepare() ([]byte, bool, error) {
	p.prepareOnce.Do(func() {
		var module []byte
		if module, p.prepareErr = p.source(); p.prepareErr == nil {
			p.prepared, p.instrumented, p.prepareErr = p.h.prepareModule(p.Name(), module, p.sha256)
		}
	})
	return p.prepared, p.instrumented, p.prepareErr
}

// source returns the module as loaded: kept, or read back (Source.Reload)
// and checked against the digest recorded at load.
func (p *Plugin) source() ([]byte, error) {
	if p.reload == nil {
		return p.module, nil
	}
	b, err := p.reload()
	if err != nil {
		return nil, fmt.Errorf("plugin %s: reading its module again: %w", p.Name(), err)
	}
	if d := digest(b); d != p.sha256 {
		return nil, fmt.Errorf("%w: plugin %s: its module read again is sha256 %s, not the %s loaded", ErrRefused, p.Name(), d, p.sha256)
	}
	return b, nil
}

// compile prepares a variant once: the plugin's compiled code, the variant's
// mounts and an instance pool.
func (v *variant) compile(ctx context.Context) error {
	// One caller compiles for all: its cancellation must not poison the result.
	v.once.Do(func() { v.err = v.doCompile(context.WithoutCancel(ctx)) })
	return v.err
}

func (v *variant) doCompile(ctx context.Context) error {
	c, err := v.p.compile(ctx)
	if err != nil {
		return err
	}
	if err := v.mount(); err != nil {
		return err
	}
	v.rt, v.compiled, v.instrumented = c.rt, c.compiled, c.instrumented
	h := v.p.h
	v.pool.Store(newPool(h.poolSize(), v.newInstance, poolExpiry{after: h.cfg.idleTimeout, closed: func(n int, memory uint64, live int) {
		h.cfg.logger.Info("closed idle plugin instances", "plugin", v.p.Name(), "readOnly", v.readOnly, "closed", n, "guestMemoryMiB", memory>>20, "live", live)
		h.idleClosed(n)
	}}))
	return nil
}

// compile compiles the plugin's code once for both variants: a runtime with
// the plugin's memory limit, the host modules it may import and the module.
func (p *Plugin) compile(ctx context.Context) (*code, error) {
	c := &p.code
	c.once.Do(func() { c.err = p.doCompile(ctx) })
	return c, c.err
}

func (p *Plugin) doCompile(ctx context.Context) error {
	h := p.h
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(p.limits.memoryPages).
		WithCompilationCache(h.cache)
	module, instrumented, err := p.prepare()
	if err != nil {
		return err
	}
	if !instrumented {
		// Fallback for modules the instrumentation cannot rewrite: slower, still stoppable.
		rc = rc.WithCloseOnContextDone(true)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if err := instantiateWASI(ctx, rt); err != nil {
		rt.Close(ctx)
		return fmt.Errorf("plugin %s: %w", p.Name(), err)
	}
	if err := p.linkHostModules(ctx, rt); err != nil {
		rt.Close(ctx)
		return err
	}
	compiled, err := h.compileModule(ctx, rt, module, p.sha256)
	if err != nil {
		rt.Close(ctx)
		return fmt.Errorf("plugin %s: compile: %w", p.Name(), err)
	}
	p.code.rt, p.code.compiled, p.code.instrumented = rt, compiled, instrumented
	// Compiled: wazero holds its own decoded copy, and the next compile
	// (after the code was closed idle) prepares the module again.
	p.prepared = nil
	return nil
}

// linkHostModules instantiates the host modules this plugin may import: the
// Extism kernel and the functions of its granted capabilities, each write
// function behind refuseReadOnly.
func (p *Plugin) linkHostModules(ctx context.Context, rt wazero.Runtime) error {
	fns := kernelFunctions(p.h.cfg.logLevel)
	for _, name := range p.m.Capabilities {
		if !p.granted[name] {
			continue
		}
		c, _ := p.h.registry.Lookup(name)
		for _, f := range c.Functions {
			if f.Write {
				f = refuseReadOnly(f)
			}
			fns = append(fns, f)
		}
	}
	return linkFunctions(ctx, rt, fns)
}

// linkFunctions instantiates host modules exporting fns, grouped by module.
func linkFunctions(ctx context.Context, rt wazero.Runtime, fns []HostFunction) error {
	byModule := map[string][]HostFunction{}
	var order []string
	for _, f := range fns {
		if _, ok := byModule[f.Module]; !ok {
			order = append(order, f.Module)
		}
		byModule[f.Module] = append(byModule[f.Module], f)
	}
	for _, mod := range order {
		b := rt.NewHostModuleBuilder(mod)
		for _, f := range byModule[mod] {
			fn := f.Func
			b.NewFunctionBuilder().
				WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, caller api.Module, stack []uint64) {
					c := callFrom(ctx)
					if c.stop != nil && c.stop.Load() {
						// A stopped call gets no more host services.
						panic(errStopped)
					}
					c.mem = caller.Memory()
					fn(ctx, c, stack)
				}), f.Params, f.Results).
				Export(f.Name)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("linking %s: %w", mod, err)
		}
	}
	return nil
}

// Call runs one tool. It never returns a Go error: every failure, from unknown
// tools to guest traps, is a Result with an Error, and the host goes on.
func (p *Plugin) Call(ctx context.Context, tool string, args json.RawMessage, opts *CallOptions) Result {
	if !p.acquire() {
		return Result{Error: &Error{Code: CodeUnavailable, Message: p.retiredError().Error()}}
	}
	defer p.release()
	start := time.Now()
	r := p.call(ctx, tool, args, opts)
	r.Stats.Duration = time.Since(start)
	return r
}

func (p *Plugin) call(ctx context.Context, tool string, args json.RawMessage, opts *CallOptions) Result {
	ro, ok := p.readOnly[tool]
	if !ok {
		return failed(CodeUnknownTool, "plugin %s has no tool %q", p.Name(), tool)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := p.inputs[tool].ValidateJSON(args); err != nil {
		return failed(CodeInvalidArguments, "%v", err)
	}
	if err := p.ensureReady(ctx); err != nil {
		return failed(CodeUnavailable, "%v", err)
	}
	v := p.variant(ro)
	if err := v.compile(ctx); err != nil {
		return failed(CodeUnavailable, "%v", err)
	}
	tenant := TenantFrom(ctx)
	if opts != nil && opts.Tenant != "" {
		tenant = opts.Tenant
	}
	// One deadline covers waiting for an instance and running on it.
	ctx, cancel := context.WithTimeout(ctx, p.limits.timeout)
	defer cancel()
	waitStart := time.Now()
	in, reused, err := v.pool.Load().get(ctx, tenant)
	wait := time.Since(waitStart)
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return failed(CodeTimeout, "no instance of plugin %s became free within the call's time limit (%v)", p.Name(), p.limits.timeout)
		case ctx.Err() != nil:
			return failed(CodeCanceled, "waiting for a plugin instance: %v", err)
		}
		return failed(CodeUnavailable, "%v", err)
	}
	input := make([]byte, 0, len(tool)+1+len(args))
	input = append(append(append(input, tool...), '\n'), args...)
	c := &Call{Plugin: p.Name(), Tool: tool, ReadOnly: ro, Logger: p.logger, p: p, opts: opts, tenant: tenant}
	rc, ierr := in.invoke(ctx, c, in.call, input, 0)
	c.endOutput()
	c.endLogs(ctx)
	stats := Stats{MemoryBytes: in.memoryBytes(), InputBytes: len(args), Reused: reused, Wait: wait}
	if ierr != nil {
		v.pool.Load().put(in, false)
		return Result{Error: ierr, Stats: stats}
	}
	// An instance a call grew past the idle bound is closed, not kept.
	keep := stats.MemoryBytes <= p.h.cfg.maxIdleMemory
	if rc != 0 {
		msg := in.k.err
		v.pool.Load().put(in, keep)
		if msg == "" {
			msg = fmt.Sprintf("plugin returned code %d", rc)
		}
		return Result{Error: &Error{Code: CodePluginError, Message: msg}, Stats: stats}
	}
	out, oerr := in.output()
	if oerr != nil {
		v.pool.Load().put(in, keep)
		return Result{Error: oerr, Stats: stats}
	}
	stats.OutputBytes = len(out)
	res, perr := parseFrame(out)
	// The frame is parsed and copied out before the instance serves another call.
	if perr == nil && res.Data != nil {
		res.Data = bytes.Clone(res.Data)
	}
	v.pool.Load().put(in, keep)
	if perr != nil {
		return Result{Error: &Error{Code: CodeInvalidOutput, Message: perr.Error()}, Stats: stats}
	}
	if s := p.outputs[tool]; s != nil && res.OK {
		doc := res.Data
		if doc == nil {
			doc, _ = json.Marshal(res.Text)
		}
		if err := s.ValidateJSON(doc); err != nil {
			return Result{Error: &Error{Code: CodeInvalidOutput, Message: "result does not match the tool's output schema: " + err.Error()}, Stats: stats}
		}
	}
	res.Stats = stats
	return res
}

// CallOptions are per-call settings.
type CallOptions struct {
	// OnProgress receives the plugin's progress reports.
	OnProgress func(Progress)
	// Input is the document the call may read by range (capability "input").
	Input Input
	// Output receives the files the call emits (capability "output"),
	// within OutputLimits (zero fields: the defaults).
	Output       OutputSink
	OutputLimits OutputLimits
	// Tenant names whose call it is (else the context's, see WithTenant).
	// Instances and plugin variables are kept per tenant: nothing one
	// tenant's call leaves in a guest reaches another's.
	Tenant string
}

type tenantKey struct{}

// WithTenant returns ctx naming the tenant whose calls it carries, for
// callers that pass no CallOptions.Tenant (extraction deep inside ingestion).
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant WithTenant put in ctx, or "".
func TenantFrom(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// ensureReady checks once, on a real instance, that the plugin's code registers
// exactly the tools its manifest declares: a manifest that lies about its tools
// (a missing tool, a writing tool marked read-only, another schema) is refused.
//
// Built-in plugins are spared the check: `plugin build` wrote their manifest
// from the same describe call, and they ship inside the host's binary. This
// keeps a Go runtime from starting in every built-in at start-up.
func (p *Plugin) ensureReady(ctx context.Context) error {
	if p.builtin {
		return nil
	}
	p.describeOnce.Do(func() { p.describeErr = p.checkDescribe(context.WithoutCancel(ctx)) })
	return p.describeErr
}

func (p *Plugin) checkDescribe(ctx context.Context) error {
	// A plugin whose tools all read is asked on its read-only variant, the
	// only one it will ever run, so warming it makes one pool, not two.
	allRead := true
	for _, ro := range p.readOnly {
		allRead = allRead && ro
	}
	v := p.variant(allRead)
	if err := v.compile(ctx); err != nil {
		return err
	}
	in, _, err := v.pool.Load().get(ctx, "")
	if err != nil {
		return err
	}
	fn := in.mod.ExportedFunction("describe")
	if fn == nil {
		v.pool.Load().put(in, true)
		return fmt.Errorf("plugin %s: no `describe` export", p.Name())
	}
	c := &Call{Plugin: p.Name(), Tool: "describe", Logger: p.logger, p: p}
	rc, ierr := in.invoke(ctx, c, fn, nil, p.limits.timeout)
	if ierr != nil || rc != 0 {
		v.pool.Load().put(in, false)
		if ierr != nil {
			return fmt.Errorf("plugin %s: describe: %w", p.Name(), ierr)
		}
		return fmt.Errorf("plugin %s: describe failed: %s", p.Name(), in.k.err)
	}
	out, oerr := in.output()
	if oerr != nil {
		v.pool.Load().put(in, false)
		return fmt.Errorf("plugin %s: describe: %w", p.Name(), oerr)
	}
	got, err := parseDescription(out)
	v.pool.Load().put(in, true)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name(), err)
	}
	if p.m.Kind == manifest.KindActions {
		if len(got.Tools) > 0 {
			return fmt.Errorf("%w: the code registers tool %q, and an actions plugin has only actions", ErrManifestMismatch, got.Tools[0].Name)
		}
		return compareActions(p.m.Actions, got.Actions)
	}
	if len(got.Actions) > 0 {
		return fmt.Errorf("%w: the code registers action %s, and only an actions plugin has actions", ErrManifestMismatch, got.Actions[0].ToolName())
	}
	return compareTools(p.m.Tools, got.Tools)
}

// ErrManifestMismatch is returned for a plugin whose code and manifest disagree.
var ErrManifestMismatch = errors.New("manifest does not match the plugin's code")

func compareTools(declared, actual []manifest.Tool) error {
	byName := map[string]manifest.Tool{}
	for _, t := range actual {
		byName[t.Name] = t
	}
	for _, d := range declared {
		a, ok := byName[d.Name]
		if !ok {
			return fmt.Errorf("%w: tool %q is declared but the code does not register it", ErrManifestMismatch, d.Name)
		}
		if a.ReadOnly != d.ReadOnly {
			return fmt.Errorf("%w: tool %q is declared readOnly=%v but the code registers readOnly=%v", ErrManifestMismatch, d.Name, d.ReadOnly, a.ReadOnly)
		}
		if a.ContentResult != d.ContentResult {
			return fmt.Errorf("%w: tool %q is declared contentResult=%v but the code registers contentResult=%v", ErrManifestMismatch, d.Name, d.ContentResult, a.ContentResult)
		}
		if !sameJSON(a.InputSchema, d.InputSchema) {
			return fmt.Errorf("%w: tool %q: the declared input schema differs from the code's", ErrManifestMismatch, d.Name)
		}
		delete(byName, d.Name)
	}
	for name := range byName {
		return fmt.Errorf("%w: the code registers tool %q, which the manifest does not declare", ErrManifestMismatch, name)
	}
	return nil
}

// compareActions is compareTools for an actions plugin: every action,
// dynamicMode or not, with its mode, readOnly flag and parameter schema.
func compareActions(declared, actual []manifest.Action) error {
	byName := map[string]manifest.Action{}
	for _, a := range actual {
		byName[a.ToolName()] = a
	}
	for _, d := range declared {
		name := d.ToolName()
		a, ok := byName[name]
		switch {
		case !ok:
			return fmt.Errorf("%w: action %s is declared but the code does not register it", ErrManifestMismatch, name)
		case a.DynamicMode != d.DynamicMode:
			return fmt.Errorf("%w: action %s is declared dynamicMode=%v but the code registers dynamicMode=%v", ErrManifestMismatch, name, d.DynamicMode, a.DynamicMode)
		case a.ReadOnly != d.ReadOnly:
			return fmt.Errorf("%w: action %s is declared readOnly=%v but the code registers readOnly=%v", ErrManifestMismatch, name, d.ReadOnly, a.ReadOnly)
		case !sameJSON(a.Parameters, d.Parameters):
			return fmt.Errorf("%w: action %s: the declared parameter schema differs from the code's", ErrManifestMismatch, name)
		}
		delete(byName, name)
	}
	for name := range byName {
		return fmt.Errorf("%w: the code registers action %s, which the manifest does not declare", ErrManifestMismatch, name)
	}
	return nil
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (p *Plugin) close(ctx context.Context) {
	p.closeOnce.Do(func() { p.closeNow(ctx) })
}

func (p *Plugin) closeNow(ctx context.Context) {
	p.life.Lock()
	defer p.life.Unlock()
	p.closed = true
	if p.codeTimer != nil {
		p.codeTimer.Stop()
		p.codeTimer = nil
	}
	for i := range p.variants {
		v := &p.variants[i]
		if pl := v.pool.Load(); pl != nil {
			pl.close()
		}
		for _, c := range v.closers {
			c()
		}
	}
	// No compile is under way: a plugin is closed when no call holds it.
	// Its native code is released unless an abandoned guest still runs on it.
	if p.guests.Load() == 0 {
		p.code.closeCompiled(ctx)
	} else if p.code.rt != nil {
		p.code.rt.Close(ctx)
	}
}

// HasTool reports whether the plugin declares a tool.
func (p *Plugin) HasTool(name string) bool {
	_, ok := p.readOnly[name]
	return ok
}
