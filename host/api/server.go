// Package api is agenthost's HTTP surface (Fiber): health, plugin and tool
// listings now; workflows, events, files and the workspace UI as they land.
// Every route is listed in routes.go, and handlers are built from explicit
// dependencies.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/webui"
	"github.com/agenthost/agenthost/host/workflows"
)

// Plugins is what the API needs of the plugin runtime.
type Plugins interface {
	Plugins() []*wasm.Plugin
	Tools() []wasm.ToolInfo
}

// Deps are the server's dependencies.
type Deps struct {
	Logger *slog.Logger
	// SignIn signs people in through identity providers; nil: none.
	SignIn SignIn
	// Invitations are a tenant admin's invitations; nil: those routes
	// answer 404.
	Invitations Invitations
	Plugins     Plugins
	// PluginAdmins install, upgrade and remove plugins on the running
	// host; zero: those routes answer 403.
	PluginAdmins PluginAdmins
	// Ready reports whether start-up work (plugin warm-up) has finished.
	Ready func() error
	// Auth, Workspaces and Files serve the authenticated API; without them
	// only health and the plugin listings are served.
	Auth       Authenticator
	Workspaces Workspaces
	Files      *files.Service
	// Workflows, Workspace, Tools and WorkspaceTools serve workflows, their
	// event stream and the tools of workspaces.
	Workflows      *workflows.Service
	Workspace      *rounds.Service
	Tools          *tools.Registry
	WorkspaceTools WorkspaceTools
	// Knowledge and IndexStates serve search and files' indexing state.
	Knowledge   Knowledge
	IndexStates IndexStates
	// Reindexer queues a failed file's content to be indexed again
	// (POST /files/:id/reindex); nil serves no such route.
	Reindexer Reindexer
	// FilePasswords takes the passwords of encrypted files
	// (POST /files/:id/password); nil serves no such route.
	FilePasswords FilePasswords
	// ContainerEntries lists container files' entries.
	ContainerEntries ContainerEntries
	// FileObjects reads files' content objects for the UI's preview
	// (GET /files/:id/objects); nil serves no such route.
	FileObjects FileObjects
	// PagePDFs copies a PDF's page on its own for the preview.
	PagePDFs PagePDFs
	// MaxBody bounds request bodies (uploads); default 1 GiB + 1 MiB.
	MaxBody int
	// Timeouts bound slow and idle clients (see Timeouts; zero values take
	// the defaults).
	Timeouts Timeouts
	// Tokens lists and revokes API tokens (GET/DELETE /tokens).
	Tokens Tokens
	// OAuth is the authorization server of MCP clients that sign in like
	// people, and MCPClients the clients each person authorised
	// (/me/mcp-clients); nil: none.
	OAuth      AuthorizationServer
	MCPClients MCPClients
	// MCPServers administers the tenant's external MCP servers (/mcp-servers).
	MCPServers MCPServers
	// Connections keeps users' connections to external providers; nil
	// (no secret key configured) serves no connection routes.
	Connections Connections
	// DataSources keeps users' data sources and syncs them; nil serves no
	// data source routes.
	DataSources DataSources
	// Billing serves usage reports and the tenant's budget, and refuses to
	// start workflows of a tenant over its limits; nil serves neither.
	Billing Billing
	// Background starts, lists and cancels background jobs; nil serves
	// none.
	Background Background
	// Rate bounds each tenant's requests that start work, over all hosts.
	Rate RateLimit
	// Telemetry instruments every request and serves /metrics; nil does
	// neither. MetricsToken lets non-loopback clients read /metrics.
	Telemetry    Telemetry
	MetricsToken string
	// TraceHealth makes spans of health checks and metric scrapes too
	// (by default they have none).
	TraceHealth bool
	// Model names the agent's model for the status page; nil or "" when no
	// model is configured (the page then says what to set).
	Model func() string
	// Voice transcribes recorded speech and speaks answers (the model
	// layer's transcription and speech chains); nil serves no voice routes.
	Voice Voice
	// Passkeys signs people in with passkeys and lets them manage their
	// own; nil (no public URL configured) serves no passkey routes.
	Passkeys Passkeys
	// SecondFactor keeps each tenant's "require a passkey as second
	// factor" setting; nil (or no Passkeys) serves no second-factor routes.
	SecondFactor SecondFactorSettings
	// People serves people management to tenant admins (/people) and a
	// person's own sessions and tokens (/me); nil serves neither.
	People People
	// UI is the workspace UI in the browser, served at / with its session
	// routes; nil serves the status page at / instead.
	UI *webui.UI
	// Audit records the changes made through the API (tokens, passkeys,
	// people, roles, MCP servers, connections, sign-outs) in the tenant's
	// audit log; nil records none. AuditLog serves the log to tenant
	// admins (/audit); nil serves no audit routes.
	Audit    audit.Recorder
	AuditLog audit.Searcher
	// SCIM serves SCIM 2.0 provisioning at /scim/v2; nil serves none.
	SCIM fiber.Handler
	// Notifications tells people of ended jobs and syncs and of waiting
	// approvals (/me/notifications); nil serves no such routes.
	Notifications Notifications
}

// Server is the Fiber app with every route. Its Shutdown first ends the
// event streams, which otherwise hold their connections until a write fails.
type Server struct {
	*fiber.App
	streams      *eventStreams
	stopStreams  context.CancelFunc
	stopRequests context.CancelFunc
	timeouts     Timeouts
}

// Listener serves on ln, with request bodies read under a deadline per read
// (see Timeouts). It shadows fiber.App's, which has no such deadline.
func (s *Server) Listener(ln net.Listener) error {
	return s.App.Listener(progressListener{Listener: ln, bodyRead: s.timeouts.BodyRead})
}

// Listen serves on addr (see Listener).
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Listener(ln)
}

// Shutdown ends the event streams, then shuts the app down gracefully,
// waiting for running requests however long they take.
func (s *Server) Shutdown() error {
	s.stopStreams()
	err := s.App.Shutdown()
	s.streams.wait()
	return err
}

// ShutdownWithContext is Shutdown with a deadline. When ctx has one, requests
// still running at half of the time left are cancelled (their contexts end: a
// plugin call stops at its next check, a model call returns), so that a
// shutdown usually completes before the deadline instead of waiting for a
// long tool call; it returns ctx's error when connections are still open at
// the deadline.
func (s *Server) ShutdownWithContext(ctx context.Context) error {
	s.stopStreams()
	if dl, ok := ctx.Deadline(); ok {
		t := time.AfterFunc(time.Until(dl)/2, s.stopRequests)
		defer t.Stop()
	}
	err := s.App.ShutdownWithContext(ctx)
	// The streams' goroutines end once their context has (a write to a
	// client that stopped reading, within streamWriteTimeout).
	done := make(chan struct{})
	go func() { s.streams.wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

// New builds the server with every route.
func New(d Deps) *Server {
	if d.MaxBody <= 0 {
		d.MaxBody = 1<<30 + 1<<20
	}
	timeouts := d.Timeouts.withDefaults()
	app := fiber.New(fiber.Config{
		AppName: "agenthost",
		// Values of a request (route parameters, headers, queries) are
		// copies: several outlive their handler (event streams, rounds and
		// jobs started in the background), and fasthttp reuses a request's
		// buffers for the next one.
		Immutable:             true,
		DisableStartupMessage: true,
		ErrorHandler:          problemHandler(d.Logger),
		BodyLimit:             d.MaxBody,
		// Uploads stream from the connection instead of being buffered whole.
		StreamRequestBody: true,
		// fasthttp's read timeout is set when a request starts and covers
		// its header; the body's reads get theirs from progressConn.
		ReadTimeout: timeouts.Header,
		IdleTimeout: timeouts.Idle,
	})
	// Event streams take their connections over from fasthttp (see
	// handleEvents): the server must leave those to them.
	app.Server().KeepHijackedConns = true
	streamsCtx, stop := context.WithCancel(context.Background())
	streams := &eventStreams{ctx: streamsCtx}
	// Every request runs under one context that a shutdown may cancel.
	requests, stopRequests := context.WithCancel(context.Background())
	app.Use(func(c *fiber.Ctx) error {
		c.SetUserContext(requests)
		withRequestMeta(c)
		return c.Next()
	})
	if d.Telemetry != nil {
		app.Use(instrument(d.Telemetry, d.TraceHealth))
		app.Get("/metrics", handleMetrics(d.Telemetry, d.MetricsToken))
	}
	routes(app, d, streams)
	return &Server{App: app, streams: streams, stopStreams: stop, stopRequests: stopRequests, timeouts: timeouts}
}

// ErrShutdownTimeout is Serve's error when requests were still running at
// the end of the shutdown's grace period.
var ErrShutdownTimeout = errors.New("requests still running at the end of the shutdown grace period")

// Serve runs the app on addr until ctx ends, then shuts down within grace
// (see ShutdownWithContext): it returns nil after a clean shutdown, and an
// error wrapping ErrShutdownTimeout when connections were still open at the
// end of grace. A ctx that ends before the server listens (a stop during
// start-up) returns nil without serving.
func Serve(ctx context.Context, app *Server, addr string, grace time.Duration) error {
	if ctx.Err() != nil {
		return nil
	}
	// Listening here, not in the goroutine, reports a bad address at once and
	// leaves no window in which a shutdown could miss a listener that is
	// only about to exist.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err = app.ShutdownWithContext(sctx)
	ln.Close() // in case the app had not taken it over yet
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (%v)", ErrShutdownTimeout, grace)
	}
	return err
}
