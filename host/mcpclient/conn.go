package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Failure back-off: after a failed connection the next try waits
// backoffMin, doubling with each failure in a row up to backoffMax; calls
// in between fail at once, naming the failure.
const (
	backoffMin = time.Second
	backoffMax = 5 * time.Minute
)

// conn is one registered server as a tool source: connected on first use,
// its tool list cached until the server says it changed, reconnected after
// the session ends, held off after failures.
type conn struct {
	srv    mcpconfig.Server
	sec    mcpconfig.Secrets
	m      *Manager
	logger *slog.Logger

	lock chan struct{} // held while connecting; a channel so waiting honours ctx
	// life ends when the connection closes for good: calls in flight end
	// with it (the SDK's Close waits for them otherwise).
	life context.Context
	end  context.CancelFunc

	mu       sync.Mutex
	session  *mcp.ClientSession
	proc     *process // stdio
	faults   *faults
	tools    []tool
	byName   map[string]tool
	refused  []string // tools left out, with why
	stale    bool     // the server said its tool list changed
	failures int
	deaths   int // calls in a row the server died in
	lastErr  error
	// downSince is when the failures in a row began (or the session was
	// lost before them); lostAt when a session last ended unasked.
	downSince time.Time
	lostAt    time.Time
	retryAt   time.Time
	lastUsed  time.Time
	inflight  int // calls running
	closed    bool
}

func newConn(m *Manager, srv mcpconfig.Server, sec mcpconfig.Secrets) *conn {
	life, end := context.WithCancel(context.Background())
	return &conn{srv: srv, sec: sec, m: m, logger: m.logger.With("mcp_server", srv.Name, "mcp_server_id", srv.ID),
		lock: make(chan struct{}, 1), life: life, end: end}
}

// Name is the source's name in errors and usage records.
func (c *conn) Name() string { return "mcp:" + c.srv.Name }

// Tools lists the server's tools as a set shows them, connecting first if
// needed.
//
// A server that cannot be reached now but listed its tools before keeps
// them in the list, each marked Unavailable with the reason: a workspace's
// set (and its agent runs, and its MCP endpoint) still shows them, and a
// call says why it fails. A server never listed has nothing to show: the
// error is the set's problem.
func (c *conn) Tools(ctx context.Context) ([]tools.Tool, error) {
	_, err := c.ready(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && len(c.tools) == 0 {
		return nil, err
	}
	out := make([]tools.Tool, 0, len(c.tools))
	var reason string
	if err != nil {
		reason = c.downReasonLocked(err)
	}
	for _, t := range c.tools {
		if err != nil {
			t.Unavailable = reason
			if !c.downSince.IsZero() {
				since := c.downSince
				t.UnavailableSince = &since
			}
		}
		out = append(out, t.Tool)
	}
	return out, nil
}

// downReasonLocked is why the server's tools are unavailable, in words
// that stay the same while it stays down the same way (no count, no next
// try: a listing that changes each second would announce a changed tool
// list to every MCP client each time).
func (c *conn) downReasonLocked(err error) string {
	if c.lastErr == nil || c.downSince.IsZero() {
		return err.Error()
	}
	if why, ok := unreachable(c.lastErr); ok {
		return fmt.Sprintf("the MCP server %q is not reachable since %s (%s)", c.srv.Name, clock(c.downSince), why)
	}
	return fmt.Sprintf("the MCP server %q fails since %s: %v", c.srv.Name, clock(c.downSince), c.lastErr)
}

// ready returns a live session with a current tool list.
func (c *conn) ready(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	c.lastUsed = c.m.now()
	if c.session != nil && !c.stale {
		s := c.session
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.lock }()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("the MCP server %q was removed", c.srv.Name)
	}
	if c.session != nil && !c.stale {
		s := c.session
		c.mu.Unlock()
		return s, nil
	}
	if c.session == nil && c.m.now().Before(c.retryAt) {
		wait := c.retryAt.Sub(c.m.now()).Round(time.Second)
		var err error = said{fmt.Sprintf("the MCP server %q failed %d times in a row since %s (last: %v); next try in %s",
			c.srv.Name, c.failures, clock(c.downSince), c.lastErr, wait), c.lastErr}
		if why, ok := unreachable(c.lastErr); ok {
			err = said{fmt.Sprintf("the MCP server %q is not reachable since %s (%s, %d times in a row); next try in %s",
				c.srv.Name, clock(c.downSince), why, c.failures, wait), c.lastErr}
		}
		c.mu.Unlock()
		return nil, err
	}
	s := c.session
	c.stale = false
	c.mu.Unlock()

	cctx, cancel := context.WithTimeout(ctx, c.m.cfg.ConnectTimeout)
	defer cancel()
	if s == nil {
		var err error
		if s, err = c.connect(cctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // the caller gave up: not the server's failure
			}
			return nil, c.failed(fmt.Errorf("connecting: %w", err))
		}
	}
	list, refused, err := c.list(cctx, s)
	if err != nil {
		c.drop(s)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.failed(fmt.Errorf("listing its tools: %w", err))
	}
	c.mu.Lock()
	c.tools, c.refused, c.failures, c.lastErr = list, refused, 0, nil
	c.downSince, c.lostAt = time.Time{}, time.Time{}
	c.byName = make(map[string]tool, len(list))
	for _, t := range list {
		c.byName[t.Name] = t
	}
	c.mu.Unlock()
	for _, r := range refused {
		c.logger.Warn("mcp server tool refused", "why", r)
	}
	return s, nil
}

// deathsBeforeBackoff is how many calls in a row a server may die in
// before it is held off like a server that cannot start.
const deathsBeforeBackoff = 3

// died counts a server's death during a call; it says whether that makes
// the server held off.
func (c *conn) died(err error) bool {
	c.mu.Lock()
	c.deaths++
	n := c.deaths
	c.mu.Unlock()
	if n < deathsBeforeBackoff {
		return false
	}
	_ = c.failed(err)
	return true
}

// failed counts a failure and sets the back-off; it returns err, named.
func (c *conn) failed(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures++
	c.lastErr = err
	if c.failures == 1 {
		c.downSince = c.m.now()
		if !c.lostAt.IsZero() {
			c.downSince = c.lostAt // the server went away before the failures began
		}
	}
	d := backoffMin << min(c.failures-1, 20)
	c.retryAt = c.m.now().Add(min(d, backoffMax))
	c.logger.Warn("mcp server failed", "failures", c.failures, "err", err)
	if why, ok := unreachable(err); ok {
		return said{fmt.Sprintf("the MCP server %q is not reachable since %s (%s)", c.srv.Name, clock(c.downSince), why), err}
	}
	return fmt.Errorf("the MCP server %q: %w", c.srv.Name, err)
}

func (c *conn) connect(ctx context.Context) (*mcp.ClientSession, error) {
	f := &faults{}
	var t mcp.Transport
	var st *stdioTransport
	switch c.srv.Config.Transport {
	case mcpconfig.Stdio:
		// Checked again before each start: the store's row may predate the
		// operator's current allow list, or not come from Admin.Add.
		if err := mcpconfig.AllowedCommand(c.m.cfg.Commands, c.srv.Config.Command, mcpconfig.EnvNames(c.srv.Config.Env, c.sec.Env)); err != nil {
			return nil, err
		}
		st = &stdioTransport{cfg: c.srv.Config, sec: c.sec, root: c.m.cfg.WorkRoot, ids: c.m.ids,
			limit: c.srv.Config.ResultLimit(), faults: f, logger: c.logger}
		t = st
	case mcpconfig.HTTP:
		ht, err := httpTransport(c.srv.Config, c.sec, c.m.cfg.HTTPTransport, f)
		if err != nil {
			return nil, err
		}
		t = ht
	default:
		return nil, fmt.Errorf("unknown transport %q", c.srv.Config.Transport)
	}
	var self *mcp.ClientSession
	client := mcp.NewClient(&mcp.Implementation{Name: "agenthost", Version: c.m.cfg.Version}, &mcp.ClientOptions{
		Logger: c.logger,
		// No roots, sampling or elicitation: the server gets nothing of ours.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			if c.session == self {
				c.stale = true
			}
			c.mu.Unlock()
		},
	})
	s, err := client.Connect(ctx, t, nil)
	if err != nil {
		if st != nil && st.proc != nil {
			st.proc.stop()
			if d := st.proc.describe(); d != "" {
				err = fmt.Errorf("%w (%s)", err, d)
			}
		}
		if ferr := f.get(); ferr != nil && !errors.Is(err, ferr) {
			err = fmt.Errorf("%w: %v", err, ferr)
		}
		return nil, err
	}
	c.mu.Lock()
	if c.closed {
		// Removed while it connected.
		c.mu.Unlock()
		_ = s.Close()
		return nil, fmt.Errorf("the MCP server %q was removed", c.srv.Name)
	}
	self = s
	c.session, c.faults, c.proc = s, f, nil
	if st != nil {
		c.proc = st.proc
	}
	c.mu.Unlock()
	go func() {
		// A session that ends (the server exited, the connection broke) is
		// forgotten: the next use connects again.
		_ = s.Wait()
		c.lost(s)
		c.drop(s)
	}()
	c.logger.Info("mcp server connected", "transport", c.srv.Config.Transport)
	return s, nil
}

// lost notes when a session that is still the current one ended unasked
// (the server exited, the connection broke): if connecting again fails,
// the server is down since then.
func (c *conn) lost(s *mcp.ClientSession) {
	c.mu.Lock()
	if c.session == s && !c.closed {
		c.lostAt = c.m.now()
	}
	c.mu.Unlock()
}

// clock is a time as a message shows it (UTC, to the second).
func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// drop closes a session and forgets it if it is still the current one.
func (c *conn) drop(s *mcp.ClientSession) {
	c.mu.Lock()
	if c.session == s {
		c.session = nil
	}
	c.mu.Unlock()
	_ = s.Close()
}

// close ends the connection for good (the server was removed, the host
// stops): calls in flight end first, and a stdio server is stopped before
// the session closes, so that nothing waits for a server's answer.
func (c *conn) close() {
	c.end()
	c.mu.Lock()
	c.closed = true
	s, p := c.session, c.proc
	c.session = nil
	c.mu.Unlock()
	if s != nil {
		if p != nil {
			p.stop()
		}
		_ = s.Close()
	}
}

// idle closes the session if unused since before and no call runs; it
// connects again on use. The close runs apart: a stdio server may take its
// grace to exit, and nobody waits for that.
func (c *conn) idle(before time.Time) {
	c.mu.Lock()
	s := c.session
	if s == nil || c.inflight > 0 || c.lastUsed.After(before) {
		c.mu.Unlock()
		return
	}
	c.session = nil
	c.mu.Unlock()
	c.logger.Info("mcp server idle: disconnected")
	go s.Close()
}

// Call runs one of the server's tools: arguments validated against its
// schema, bounded by the server's timeout and result size, traced and
// billed; every failure is a Result.
func (c *conn) Call(ctx context.Context, name string, args []byte) wasm.Result {
	start := c.m.now()
	c.mu.Lock()
	t, ok := c.byName[name]
	c.mu.Unlock()
	if !ok {
		return failure(wasm.CodeUnknownTool, "the MCP server %q has no tool %q (any more)", c.srv.Name, name)
	}
	if err := t.schema.ValidateJSON(args); err != nil {
		return failure(wasm.CodeInvalidArguments, "%v", err)
	}
	var settle func(context.Context, string, time.Duration) error
	if c.m.cfg.Meter != nil {
		// Connecting and the call may take their time-outs; that is held
		// against the caller's limits before anything starts.
		var err error
		if settle, err = c.m.cfg.Meter.HoldCompute(ctx, name, c.m.cfg.ConnectTimeout+c.srv.Config.Timeout()); err != nil {
			return failure(wasm.CodeSpendingLimit, "%v", err)
		}
	}
	ctx, span := c.m.tracer.Start(ctx, "mcp tools/call "+name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.tool.name", name), attribute.String("mcp.server", c.srv.Name),
			attribute.String("mcp.method.name", "tools/call"), attribute.String("mcp.transport", c.srv.Config.Transport)))
	res := c.call(ctx, t, args)
	res.Stats.Duration = c.m.now().Sub(start)
	res.Stats.InputBytes = len(args)
	if res.Error != nil {
		span.SetStatus(codes.Error, res.Error.Code+": "+res.Error.Message)
	}
	span.SetAttributes(attribute.Int("agenthost.output_bytes", res.Stats.OutputBytes))
	span.End()
	if settle != nil {
		// A stopped call still used what it used.
		if err := settle(context.WithoutCancel(ctx), c.Name(), res.Stats.Duration); err != nil {
			c.logger.Error("billing: mcp tool call not recorded", "tool", name, "err", err)
		}
	}
	return res
}

func (c *conn) call(ctx context.Context, t tool, args []byte) wasm.Result {
	s, err := c.ready(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return failure(wasm.CodeCanceled, "the call was stopped while connecting to the MCP server %q", c.srv.Name)
		}
		if isUnreachable(err) {
			return failure(wasm.CodeNotReachable, "%v; the call did not reach it", err)
		}
		return failure(wasm.CodeUnavailable, "%v", err)
	}
	c.mu.Lock()
	f, p := c.faults, c.proc
	c.inflight++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inflight--
		c.lastUsed = c.m.now()
		c.mu.Unlock()
	}()
	timeout := c.srv.Config.Timeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	out, err := c.callTool(cctx, s, p, &mcp.CallToolParams{Name: t.orig, Arguments: json.RawMessage(args)})
	if err == nil {
		c.mu.Lock()
		c.deaths = 0
		c.mu.Unlock()
		return result(out, c.srv.Config.ResultLimit())
	}
	return c.callFailed(ctx, cctx, s, f, p, timeout, err)
}

// stuckGrace is how long a call may outlive its context before its
// session is torn down: the SDK writes to a stdio server without a
// deadline, so a server that stops reading its input would hold the call.
const stuckGrace = time.Second

// callTool is CallTool bounded by ctx even when the SDK cannot give up: a
// call still running stuckGrace after ctx ended stops the stdio server
// (closing its input unblocks the write) and ends with ctx's error.
func (c *conn) callTool(ctx context.Context, s *mcp.ClientSession, p *process, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := s.CallTool(ctx, params)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
	}
	select {
	case a := <-done:
		return a.res, a.err
	case <-time.After(stuckGrace):
	}
	c.logger.Warn("mcp server: a call outlived its timeout (the server does not read its input); stopping it", "tool", params.Name)
	c.mu.Lock()
	if c.session == s {
		c.session = nil // the next call starts the server again
	}
	c.mu.Unlock()
	if p != nil {
		p.stop()
	}
	go s.Close()
	return nil, errStuck
}

// errStuck says a call outlived its timeout and its server was stopped.
var errStuck = errors.New("the call outlived its timeout")

// callFailed turns a failed call into its Result and drops a session the
// failure broke.
func (c *conn) callFailed(ctx, cctx context.Context, s *mcp.ClientSession, f *faults, p *process, timeout time.Duration, err error) wasm.Result {
	var werr *mcpError
	switch {
	case c.life.Err() != nil:
		return failure(wasm.CodeUnavailable, "the MCP server %q was removed, or the host stops, during the call", c.srv.Name)
	case errors.Is(err, errStuck):
		return failure(wasm.CodeTimeout, "the MCP server %q did not answer within %s (timeoutMs), nor read its input: it was stopped, and starts again on the next call", c.srv.Name, timeout)
	case ctx.Err() != nil:
		return failure(wasm.CodeCanceled, "the call to the MCP server %q was stopped", c.srv.Name)
	case isUnreachable(err) || isRejected(err):
		// The SDK wraps the network's failure in an error of JSON-RPC's
		// shape (ErrRejected, -32005): nothing answered.
		c.mu.Lock()
		if c.session == s {
			c.lostAt = c.m.now()
		}
		c.mu.Unlock()
		c.drop(s)
		why, ok := unreachable(err)
		if !ok {
			why = "the connection to it was lost"
		}
		return failure(wasm.CodeNotReachable, "the MCP server %q is not reachable (%s); the call did not reach it", c.srv.Name, why)
	case errors.As(err, &werr):
		// The server answered with an error: the session is fine.
		return failure(wasm.CodePluginError, "the MCP server %q answered with error %d: %s", c.srv.Name, werr.Code, clip(werr.Message, 2000))
	}
	fault := f.get()
	if fault == nil && strings.Contains(err.Error(), "SSE event exceeded") {
		// The SDK bounds an event (MaxEventSize) with an unexported error.
		fault = fmt.Errorf("%w: %v", ErrTooLarge, err)
	}
	switch {
	case fault == nil && strings.Contains(err.Error(), "failed to reconnect"):
		// The SDK lost the call's response stream and could not open it
		// again (its error has no type of its own): the server went away
		// while it ran.
		c.mu.Lock()
		if c.session == s {
			c.lostAt = c.m.now()
		}
		c.mu.Unlock()
		c.drop(s)
		why := "its connection broke and could not be opened again"
		if strings.Contains(err.Error(), "connection refused") {
			why = "connection refused when reconnecting"
		}
		return failure(wasm.CodeNotReachable, "the MCP server %q went away during the call and is not reachable (%s); the call may have run in part", c.srv.Name, why)
	case fault != nil && errors.Is(fault, ErrTooLarge):
		c.drop(s)
		return failure(wasm.CodeOutputTooLarge, "the MCP server %q sent a message larger than its bound of %d bytes; it was refused unread (maxResultBytes)", c.srv.Name, c.srv.Config.ResultLimit())
	case fault != nil && errors.Is(fault, errServerExited):
		c.drop(s)
		msg := fmt.Sprintf("the MCP server %q stopped during the call", c.srv.Name)
		if p != nil {
			if d := p.describe(); d != "" {
				msg += " (" + d + ")"
			}
		}
		if c.died(errors.New(msg)) {
			return failure(wasm.CodeUnavailable, "%s, %d times in a row: it is held off for a while", msg, deathsBeforeBackoff)
		}
		return failure(wasm.CodeUnavailable, "%s; it is started again on the next call", msg)
	case fault != nil:
		c.drop(s)
		return failure(wasm.CodeInvalidOutput, "the MCP server %q broke the protocol (%s); the connection was closed and opens again on the next call", c.srv.Name, clip(fault.Error(), 300))
	case cctx.Err() != nil:
		return failure(wasm.CodeTimeout, "the MCP server %q did not answer within %s (timeoutMs)", c.srv.Name, timeout)
	case isDecodeError(err):
		return failure(wasm.CodeInvalidOutput, "the MCP server %q sent a result that is not a tool result: %s", c.srv.Name, clip(err.Error(), 300))
	}
	c.drop(s)
	return failure(wasm.CodeUnavailable, "the MCP server %q: %s", c.srv.Name, clip(err.Error(), 500))
}

func failure(code, format string, args ...any) wasm.Result {
	return wasm.Result{Error: &wasm.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// status is what an admin sees of a server's connection.
func (c *conn) status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Connected: c.session != nil, Failures: c.failures, Refused: append([]string{}, c.refused...)}
	if c.lastErr != nil {
		st.LastError = c.lastErr.Error()
	}
	if !c.retryAt.IsZero() && c.failures > 0 {
		st.RetryAt = &c.retryAt
	}
	for _, t := range c.tools {
		st.Tools = append(st.Tools, t.Tool)
	}
	return st
}

// Status is a server's connection as the admin API shows it.
type Status struct {
	Connected bool         `json:"connected"`
	Tools     []tools.Tool `json:"tools"`
	// Refused lists the tools left out, each with why.
	Refused   []string   `json:"refused,omitempty"`
	Failures  int        `json:"failures"`
	LastError string     `json:"lastError,omitempty"`
	RetryAt   *time.Time `json:"retryAt,omitempty"`
}
