package wasm

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
	logs     callLogs
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

// Plugin log output is bounded, because a guest decides how much it logs and
// the host's log is shared by every tenant and operator: one call once wrote
// 74 MB to it. Per call at most logMaxMessages messages and logMaxCallBytes
// bytes are forwarded, each message clipped to logMaxMessage bytes; across
// calls a token bucket per plugin (logBucketBytes, refilled at
// logRefillBytes a second, each message costing its length plus
// logMessageCost) bounds the rate. What is dropped is counted and reported in
// one warning at the end of the call, at most one such warning a second per
// plugin (drops in between are added to the next one).
const (
	logMaxMessages  = 100
	logMaxCallBytes = 64 << 10
	logMaxMessage   = 4 << 10
	logBucketBytes  = 256 << 10
	logRefillBytes  = 8 << 10
	logMessageCost  = 128
	logSummaryEvery = time.Second
)

// callLogs counts one call's forwarded and dropped log messages.
type callLogs struct {
	messages, bytes, dropped int
}

// log forwards one guest log message within the call's and the plugin's
// budgets; msg is only read, never kept.
func (c *Call) log(ctx context.Context, level slog.Level, msg []byte) {
	if c.Logger == nil || !c.Logger.Enabled(ctx, level) {
		return
	}
	text := clipLogMessage(msg)
	if c.logs.messages >= logMaxMessages || c.logs.bytes+len(text) > logMaxCallBytes ||
		(c.p != nil && !c.p.logRate.take(time.Now(), float64(len(text)+logMessageCost))) {
		c.logs.dropped++
		return
	}
	c.logs.messages++
	c.logs.bytes += len(text)
	c.Logger.Log(ctx, level, text, "plugin", c.Plugin, "tool", c.Tool)
}

// endLogs reports the log messages the call's limits dropped. Whoever ends a
// call calls it once.
func (c *Call) endLogs(ctx context.Context) {
	n := c.logs.dropped
	c.logs.dropped = 0
	if c.p != nil {
		var ok bool
		if n, ok = c.p.logRate.summary(time.Now(), n); !ok {
			return
		}
	}
	if n == 0 || c.Logger == nil {
		return
	}
	c.Logger.LogAttrs(ctx, slog.LevelWarn, fmt.Sprintf("plugin log output truncated: %d messages dropped", n),
		slog.String("plugin", c.Plugin), slog.String("tool", c.Tool), slog.Int("dropped", n))
}

// clipLogMessage returns msg as valid UTF-8 of at most logMaxMessage bytes
// plus a note of what was cut.
func clipLogMessage(msg []byte) string { return clipText(msg, logMaxMessage) }

// maxErrorMessage bounds the error message a guest sets (error_set): it
// reaches results, API responses and logs.
const maxErrorMessage = 8 << 10

// clipText returns b as valid UTF-8 of at most max bytes (cut at a rune
// boundary) plus a note of how much was cut. Only the kept part is copied.
func clipText(b []byte, max int) string {
	if len(b) <= max {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := max
	for cut > max-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + fmt.Sprintf(" … [%d more bytes clipped]", len(b)-cut)
}

// logBucket rate-limits one plugin's log output across its calls and
// instances. The zero value is a full bucket.
type logBucket struct {
	mu          sync.Mutex
	tokens      float64
	last        time.Time
	pending     int // dropped messages not yet reported
	lastSummary time.Time
}

// take spends cost tokens if the bucket holds them.
func (b *logBucket) take(now time.Time, cost float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.tokens = logBucketBytes
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(logBucketBytes, b.tokens+d.Seconds()*logRefillBytes)
	}
	b.last = now
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
}

// summary adds a call's dropped messages to those not yet reported and says
// whether to report them now (at most once every logSummaryEvery).
func (b *logBucket) summary(now time.Time, dropped int) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending += dropped
	if b.pending == 0 || (!b.lastSummary.IsZero() && now.Sub(b.lastSummary) < logSummaryEvery) {
		return 0, false
	}
	n := b.pending
	b.pending = 0
	b.lastSummary = now
	return n, true
}

// SetHTTPResponse records the status and headers that Extism's
// http_status_code and http_headers answer after an http_request (for a
// capability that serves http_request otherwise, such as a simulation).
func (c *Call) SetHTTPResponse(status int, headers http.Header) {
	c.httpLast = httpLast{status: status, headers: headers}
}

// Runner is the plugin the call runs in, for capabilities whose answer
// depends on what its manifest declares (a connector's provider and hosts).
func (c *Call) Runner() *Plugin { return c.p }
