package wasm

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// Call is what a host function sees of the call it serves: which plugin and tool
// called it, whether the tool is read-only, and the Extism kernel memory the guest
// moves data through. It is valid only during the host function's execution.
type Call struct {
	Plugin   string
	Tool     string
	ReadOnly bool
	Logger   *slog.Logger

	k        *kernel
	mem      api.Memory // the guest's memory, for capabilities that write into it
	p        *Plugin
	opts     *CallOptions
	httpLast httpLast
	fault    *Error       // set by a host function before it traps, to classify the failure
	out      *outputState // the output capability's state, nil until first used
	stop     *atomic.Bool // the instance's stop, set when the call is to end
	tenant   string       // whose call it is: variables are kept per tenant
}

// Tenant is the tenant the call runs for ("" for the host's own calls).
func (c *Call) Tenant() string { return c.tenant }

type httpLast struct {
	status  int
	headers http.Header
}

type callKey struct{}

func callFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	if c == nil {
		// Host functions only run inside a call; anything else is a bug in the host.
		panic("agenthost: host function called outside a plugin call")
	}
	return c
}

// Read returns a copy of the kernel block at offset (0 reads as nil).
func (c *Call) Read(offset uint64) ([]byte, error) {
	if offset == 0 {
		return nil, nil
	}
	b, err := c.k.block(offset)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// Write stores b in kernel memory and returns its offset (0 for empty b).
func (c *Call) Write(b []byte) (uint64, error) { return c.k.write(b) }

// Free releases a kernel block the guest handed over.
func (c *Call) Free(offset uint64) { c.k.free(offset) }

// Progress reports progress to whoever started the call (no-op if nobody listens).
func (c *Call) Progress(fraction float64, message string) {
	if c.opts != nil && c.opts.OnProgress != nil {
		c.opts.OnProgress(Progress{Plugin: c.Plugin, Tool: c.Tool, Fraction: fraction, Message: message})
	}
}

// Fail records why a host function is about to trap, so the result carries a
// precise error code instead of a generic trap, and returns a value to panic with.
func (c *Call) Fail(code, format string, args ...any) error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	c.fault = e
	return e
}

// Progress is one progress report of a running call.
type Progress struct {
	Plugin, Tool string
	Fraction     float64 // 0..1
	Message      string
}
