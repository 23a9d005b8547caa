package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// interruptGlobal is the export the interrupt instrumentation adds to a module.
const interruptGlobal = "agenthost.interrupt"

// instance is one live guest: a module instance, its Extism kernel and its stdio.
// It serves one call at a time.
type instance struct {
	v      *variant
	mod    api.Module
	call   api.Function
	k      *kernel
	stdin  stdinSource
	stdout stdoutSink
	stderr tail
	flag   api.MutableGlobal // nil when the runtime stops guests itself
	// stopped is set when the current call is to stop; a guest asleep in
	// poll_oneoff (time.Sleep, an idle Go scheduler) wakes at once and every
	// later sleep returns immediately, so the guest reaches a checked loop
	// header (or the closed module) without waiting out its sleep.
	stopped atomic.Bool
	wake    chan struct{}
}

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

func (v *variant) newInstance(ctx context.Context) (*instance, error) {
	p := v.p
	in := &instance{v: v, k: newKernel(uint64(p.limits.maxOutput) + 64<<20), wake: make(chan struct{}, 1)}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdin(&in.stdin).
		WithStdout(&in.stdout).
		WithStderr(&in.stderr).
		WithSysWalltime().WithSysNanotime().WithNanosleep(in.sleep).
		WithRandSource(rand.Reader)
	if len(p.m.Limits.AllowedPaths) > 0 {
		fs := wazero.NewFSConfig()
		for host, guest := range p.m.Limits.AllowedPaths {
			ro := strings.HasPrefix(host, "ro:")
			host = strings.TrimPrefix(host, "ro:")
			// A read-only tool gets every path read-only, whatever the manifest says.
			if ro || v.readOnly {
				fs = fs.WithReadOnlyDirMount(host, guest)
			} else {
				fs = fs.WithDirMount(host, guest)
			}
		}
		cfg = cfg.WithFSConfig(fs)
	}
	mod, err := v.rt.InstantiateModule(ctx, v.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: instantiate: %w", p.Name(), err)
	}
	in.mod = mod
	if v.instrumented {
		g, ok := mod.ExportedGlobal(interruptGlobal).(api.MutableGlobal)
		if !ok {
			mod.Close(ctx)
			return nil, fmt.Errorf("plugin %s: instrumented module lacks %s", p.Name(), interruptGlobal)
		}
		in.flag = g
	}
	if in.call = mod.ExportedFunction("call"); in.call == nil {
		mod.Close(ctx)
		return nil, fmt.Errorf("plugin %s: no `call` export (build it with pdk/)", p.Name())
	}
	// A WASI reactor (Go's c-shared) initialises its runtime in _initialize.
	if init := mod.ExportedFunction("_initialize"); init != nil {
		c := &Call{Plugin: p.Name(), Tool: "_initialize", ReadOnly: v.readOnly, Logger: p.logger, k: in.k, p: p}
		if _, err := in.invoke(ctx, c, init, nil, p.limits.timeout); err != nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("plugin %s: initialise: %w", p.Name(), err)
		}
	}
	return in, nil
}

// invoke runs one export under the call's deadline and returns its Extism
// return code. Any error means the instance must not be reused.
func (in *instance) invoke(ctx context.Context, c *Call, fn api.Function, input []byte, timeout time.Duration) (uint32, *Error) {
	in.k.reset(input)
	in.stdin.reset(input)
	in.stdout.reset(in.v.p.limits.maxOutput)
	in.stderr.reset()
	c.k = in.k

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in.stopped.Store(false)
	select {
	case <-in.wake:
	default:
	}
	flag := in.flag
	stop := context.AfterFunc(ctx, func() {
		if flag != nil {
			flag.Set(1)
		}
		in.stopped.Store(true)
		select {
		case in.wake <- struct{}{}:
		default:
		}
	})
	res, err := fn.Call(context.WithValue(ctx, callKey{}, c))
	interrupted := !stop() && flag != nil
	if err == nil && !interrupted {
		if len(res) == 0 {
			return 0, nil
		}
		return uint32(res[0]), nil
	}
	return 0, in.classify(ctx, c, err, interrupted)
}

// classify turns a failed invocation into an *Error with a precise code.
func (in *instance) classify(ctx context.Context, c *Call, err error, interrupted bool) *Error {
	if interrupted || (err != nil && ctx.Err() != nil && in.flag == nil) {
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

func (in *instance) close() { _ = in.mod.Close(context.Background()) }

func (in *instance) memoryBytes() uint64 {
	if m := in.mod.Memory(); m != nil {
		return uint64(m.Size())
	}
	return 0
}
