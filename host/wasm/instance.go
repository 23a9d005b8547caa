package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// interruptGlobal is the export the interrupt instrumentation adds to a module.
const interruptGlobal = "agenthost.interrupt"

// instance is one live guest: a module instance, its Extism kernel and its stdio.
// It serves one call at a time, and one tenant for its whole life.
type instance struct {
	v      *variant
	tenant string
	mod    api.Module
	call   api.Function
	k      *kernel
	stdin  stdinSource
	stdout stdoutSink
	stderr tail
	// mem backs the guest's linear memory (guestmemory.go); every run of
	// guest code holds it (enter, leave) so that a close cannot unmap it
	// under a guest that still runs.
	mem  guestMemory
	flag api.MutableGlobal // nil when the runtime stops guests itself
	fuel api.MutableGlobal // the instrumentation's fuel, emptied with the flag set
	// stopped is set when the current call is to stop. It lives on the host
	// side, out of the guest's reach: a guest asleep in poll_oneoff
	// (time.Sleep, an idle Go scheduler) wakes at once and every later sleep
	// returns immediately; the instrumented sched_yield and every host
	// function trap while it is set. So a guest stops at its next loop
	// header (the flag), yield or host call, whichever comes first.
	stopped atomic.Bool
	wake    chan struct{}
	// abandon is closed when the current call is given up (abandon): the
	// caller returns at once and the instance is never used again.
	abandon     chan struct{}
	abandonOnce sync.Once
	// idleSince is when the instance was last put back idle (pool.expire).
	idleSince time.Time
}

// errStopped is what a stopped guest's yield or host call traps with; the
// call's result says timeout or canceled.
var errStopped = errors.New("agenthost: the call was stopped")

// sleep is the instance's nanosleep: a timer that the call's stop cuts short.
func (in *instance) sleep(ns int64) {
	if in.stopped.Load() {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-in.wake:
	}
}

// yield is the instance's sched_yield, which the instrumentation calls every
// few thousand loop iterations: a stopped call traps here even if its flag
// check were somehow skipped.
func (in *instance) yield() {
	if in.stopped.Load() {
		panic(errStopped)
	}
}

// stopOn arranges for the instance to stop when ctx ends: the flag is set,
// sleeps are cut short, yields and host calls trap, and, should the guest
// still run kill-grace later, its module is closed. The returned function
// disarms it and reports whether the stop had fired.
func (in *instance) stopOn(ctx context.Context, grace time.Duration) (disarm func() bool) {
	in.stopped.Store(false)
	select {
	case <-in.wake:
	default:
	}
	flag, fuel := in.flag, in.fuel
	var kill *time.Timer
	var mu sync.Mutex
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		if flag != nil {
			flag.Set(1)
			// An empty fuel sends the guest to the flag at its next check,
			// not after a yield's worth of work.
			fuel.Set(api.EncodeI32(-1))
		}
		in.stopped.Store(true)
		select {
		case in.wake <- struct{}{}:
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		if grace > 0 {
			kill = time.AfterFunc(grace, in.giveUp)
		}
	})
	return func() bool {
		fired := !stop()
		if fired {
			// The stop has begun: let it finish (it never blocks) before
			// its kill timer is disarmed, so nothing of it lands later.
			<-done
		}
		mu.Lock()
		if kill != nil {
			kill.Stop()
		}
		mu.Unlock()
		return fired
	}
}

// giveUp abandons the instance of a guest that did not stop within the
// grace after its deadline: its call returns to the caller at once, which
// discards the instance, and the guest is left to end on its own goroutine,
// which nothing waits for. The instrumentation bounds the work between two
// checks (and so between two safe points for the Go scheduler), so this is
// a last resort: a guest that gets here still holds off neither the host's
// garbage collector nor any caller. Closing the module makes wazero end it
// at its next host call.
func (in *instance) giveUp() {
	if in.mod == nil {
		return
	}
	in.abandonOnce.Do(func() {
		in.v.p.logger.Error("plugin call did not stop within the grace after its deadline; abandoning its instance",
			"plugin", in.v.p.Name())
		in.v.p.abandoned.Add(1)
		close(in.abandon)
		_ = in.mod.CloseWithExitCode(context.Background(), 137)
	})
}

func (v *variant) newInstance(ctx context.Context, tenant string) (*instance, error) {
	p := v.p
	h := p.h
	in := &instance{v: v, tenant: tenant, k: newKernel(kernelLimit(p.limits.maxOutput)), wake: make(chan struct{}, 1), abandon: make(chan struct{})}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdin(&in.stdin).
		WithStdout(&in.stdout).
		WithStderr(&in.stderr).
		WithSysWalltime().WithSysNanotime().WithNanosleep(in.sleep).
		WithOsyield(in.yield).
		WithRandSource(stoppableReader{&in.stopped})
	if v.fs != nil {
		cfg = cfg.WithFSConfig(v.fs)
	}
	if h != nil {
		cfg = guestEnv(cfg, h.cfg.guestGOGC, p.limits.memoryPages, h.cfg.maxIdleMemory)
	}
	initTimeout := p.limits.timeout
	if h != nil && h.cfg.initTimeout > 0 {
		initTimeout = h.cfg.initTimeout
	}
	// The module's start section runs inside InstantiateModule: it is bounded
	// like a call (its loops yield, and the yield traps once stopped).
	ictx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	c := &Call{Plugin: p.Name(), Tool: "(start)", ReadOnly: v.readOnly, Logger: p.logger, k: in.k, p: p, stop: &in.stopped, tenant: tenant}
	disarm := in.stopOn(ictx, 0)
	in.mem.enter()
	p.guests.Add(1)
	mod, err := v.rt.InstantiateModule(experimental.WithMemoryAllocator(context.WithValue(ictx, callKey{}, c), in.mem.allocator()), v.compiled, cfg)
	in.mem.leave()
	p.guests.Add(-1)
	fired := disarm()
	if err != nil {
		// wazero leaves a failed instantiation's memory to its allocator.
		in.mem.Free()
	}
	if fired && err == nil {
		// Stopped as it finished: its state is not to be trusted.
		mod.Close(ctx)
		err = errStopped
	}
	if err != nil {
		switch {
		case fired && ctx.Err() != nil:
			return nil, fmt.Errorf("plugin %s: instantiate: %w", p.Name(), &Error{Code: CodeCanceled, Message: "the caller gave up while the instance was starting"})
		case fired:
			return nil, fmt.Errorf("plugin %s: instantiate: %w", p.Name(), &Error{Code: CodeTimeout, Message: fmt.Sprintf("the module's start function did not finish within %v", initTimeout)})
		}
		return nil, fmt.Errorf("plugin %s: instantiate: %w", p.Name(), err)
	}
	in.mod = mod
	if v.instrumented {
		g, ok := mod.ExportedGlobal(interruptGlobal).(api.MutableGlobal)
		fuel, ok2 := mod.ExportedGlobal(interruptGlobal + ".fuel").(api.MutableGlobal)
		if !ok || !ok2 {
			mod.Close(ctx)
			return nil, fmt.Errorf("plugin %s: instrumented module lacks %s", p.Name(), interruptGlobal)
		}
		in.flag, in.fuel = g, fuel
	}
	if in.call = mod.ExportedFunction("call"); in.call == nil {
		mod.Close(ctx)
		return nil, fmt.Errorf("plugin %s: no `call` export (build it with pdk/)", p.Name())
	}
	// A WASI reactor (Go's c-shared) initialises its runtime in _initialize.
	if init := mod.ExportedFunction("_initialize"); init != nil {
		c := &Call{Plugin: p.Name(), Tool: "_initialize", ReadOnly: v.readOnly, Logger: p.logger, k: in.k, p: p, tenant: tenant}
		if _, err := in.invoke(ctx, c, init, nil, initTimeout); err != nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("plugin %s: initialise: %w", p.Name(), err)
		}
	}
	return in, nil
}

// stoppableReader is a guest's random source (WASI random_get): crypto/rand
// in slices of randChunk, failing once the call is stopped. One random_get
// may ask for the whole memory, which takes a loaded machine seconds; the
// guest's next check stops it after the slice.
type stoppableReader struct{ stopped *atomic.Bool }

const randChunk = 64 << 10

func (r stoppableReader) Read(p []byte) (int, error) {
	if r.stopped.Load() {
		return 0, errStopped
	}
	return rand.Read(p[:min(len(p), randChunk)])
}

// kernelLimit bounds an instance's Extism kernel memory: what the plugin may
// output plus room for its requests to capabilities. It is allocated as the
// guest asks, never in advance.
func kernelLimit(maxOutput int64) uint64 { return min(uint64(maxOutput)+64<<20, maxKernelBytes) }

// maxKernelBytes caps the kernel arena whatever limits an operator grants:
// larger outputs take the stdio path, which grows only as bytes arrive.
const maxKernelBytes = 1 << 30

// invoke runs one export under the call's deadline and returns its Extism
// return code. Any error means the instance must not be reused.
func (in *instance) invoke(ctx context.Context, c *Call, fn api.Function, input []byte, timeout time.Duration) (uint32, *Error) {
	// A read-only instance runs read-only whatever the caller says: its
	// write functions refuse on this flag (refuseReadOnly).
	c.ReadOnly = c.ReadOnly || in.v.readOnly
	in.k.reset(input)
	in.stdin.reset(input)
	in.stdout.reset(in.v.p.limits.maxOutput)
	in.stderr.reset()
	c.k = in.k
	c.stop = &in.stopped

	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var grace time.Duration
	if h := in.v.p.h; h != nil {
		grace = h.cfg.killGrace
	}
	disarm := in.stopOn(ctx, grace)
	res, err := in.run(context.WithValue(ctx, callKey{}, c), fn)
	interrupted := disarm()
	if err == nil && !interrupted {
		if len(res) == 0 {
			return 0, nil
		}
		return uint32(res[0]), nil
	}
	return 0, in.classify(ctx, c, err, interrupted)
}

// errAbandoned is what an abandoned call returns with (instance.giveUp).
var errAbandoned = errors.New("agenthost: the guest did not stop within the grace and was abandoned")

// run calls fn on a goroutine of its own and waits for it to return or to be
// abandoned: a guest that does not stop keeps only that goroutine.
func (in *instance) run(ctx context.Context, fn api.Function) ([]uint64, error) {
	type result struct {
		res []uint64
		err error
	}
	done := make(chan result, 1)
	in.mem.enter()
	in.v.p.guests.Add(1)
	go func() {
		var r result
		defer in.v.p.guests.Add(-1)
		defer in.mem.leave()
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("agenthost: plugin call panicked: %v", p)
			}
			done <- r
		}()
		r.res, r.err = fn.Call(ctx)
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-in.abandon:
		return nil, errAbandoned
	}
}

// classify turns a failed invocation into an *Error with a precise code.
func (in *instance) classify(ctx context.Context, c *Call, err error, interrupted bool) *Error {
	if interrupted || (err != nil && ctx.Err() != nil && in.flag == nil) || errors.Is(err, errStopped) || errors.Is(err, errAbandoned) {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{Code: CodeTimeout, Message: "the call exceeded its time limit and was stopped"}
		}
		return &Error{Code: CodeCanceled, Message: "the call was canceled and stopped"}
	}
	if c.fault != nil {
		return c.fault
	}
	stderr := strings.TrimSpace(in.stderr.String())
	var exit *sys.ExitError
	msg, _, _ := strings.Cut(err.Error(), "\n") // drop wazero's wasm stack trace
	if errors.As(err, &exit) {
		msg = fmt.Sprintf("guest exited with code %d", exit.ExitCode())
	}
	if stderr != "" {
		msg += ": " + lastLines(stderr, 6)
	}
	// A guest that set an error (error_set) and then trapped said why it
	// gave up: an AssemblyScript abort (a throw, a failed assertion) cannot
	// return, so pdk/as sets the message and traps. It is the guest's panic.
	if in.k.err != "" && !strings.Contains(msg, "out of memory") {
		return &Error{Code: CodePanic, Message: in.k.err + " (" + msg + ")"}
	}
	switch {
	case strings.Contains(stderr, "out of memory") || strings.Contains(msg, "out of memory"):
		return &Error{Code: CodeOutOfMemory, Message: msg}
	case strings.Contains(stderr, "panic:") || strings.Contains(stderr, "fatal error:"):
		return &Error{Code: CodePanic, Message: msg}
	default:
		return &Error{Code: CodeTrap, Message: msg}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n] // the first lines of a Go panic name the cause
	}
	return strings.Join(lines, " | ")
}

// output returns what the guest produced: the stdio frame when it used the fast
// path, the Extism output block otherwise.
func (in *instance) output() ([]byte, *Error) {
	if in.stdout.overflow {
		return nil, &Error{Code: CodeOutputTooLarge, Message: fmt.Sprintf("output of %d bytes exceeds the plugin's limit of %d bytes", in.stdout.declared, in.stdout.max)}
	}
	if in.stdout.framed {
		if in.stdout.want > 0 {
			return nil, &Error{Code: CodeTrap, Message: "output frame ended early"}
		}
		return in.stdout.payload, nil
	}
	if int64(in.k.outLen) > in.v.p.limits.maxOutput {
		return nil, &Error{Code: CodeOutputTooLarge, Message: fmt.Sprintf("output of %d bytes exceeds the plugin's limit of %d bytes", in.k.outLen, in.v.p.limits.maxOutput)}
	}
	if in.k.outLen == 0 {
		return nil, nil
	}
	b, err := in.k.span(in.k.outOffset, in.k.outLen)
	if err != nil {
		return nil, &Error{Code: CodeTrap, Message: err.Error()}
	}
	return b, nil
}

// shedBytes is the host-side buffer an idle instance may keep for its
// next call (its kernel arena, its output frame); larger ones are dropped.
const shedBytes = 1 << 20

// shed drops what the last call left on the host's side beyond shedBytes,
// as the instance goes idle: its input, its output (the caller has its
// own copy) and a grown kernel arena or output frame. An idle instance
// then holds its guest memory only, which the idle-memory bound limits.
func (in *instance) shed() {
	in.k.input, in.k.output = nil, nil
	if cap(in.k.mem) > shedBytes {
		in.k.mem = make([]byte, kernelBase, 64<<10)
		clear(in.k.blocks)
	}
	if cap(in.stdout.payload) > shedBytes {
		in.stdout.payload = nil
	}
	in.stdin.reset(nil)
}

func (in *instance) close() {
	if in.mod != nil {
		_ = in.mod.Close(context.Background())
	}
}

func (in *instance) memoryBytes() uint64 {
	if in.mod == nil {
		return 0
	}
	if m := in.mod.Memory(); m != nil {
		return uint64(m.Size())
	}
	return 0
}
