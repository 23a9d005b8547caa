// Package api is agenthost's HTTP surface (Fiber): health, plugin and tool
// listings now; workflows, events, files and the workspace UI as they land.
// Every route is listed in routes.go, and handlers are built from explicit
// dependencies.
package api

import (
	"context"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/workspace"
)

// Plugins is what the API needs of the plugin runtime.
type Plugins interface {
	Plugins() []*wasm.Plugin
	Tools() []wasm.ToolInfo
}

// Deps are the server's dependencies.
type Deps struct {
	Logger  *slog.Logger
	Plugins Plugins
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
	Workspace      *workspace.Service
	Tools          *tools.Registry
	WorkspaceTools WorkspaceTools
	// Knowledge and IndexStates serve search and files' indexing state.
	Knowledge   Knowledge
	IndexStates IndexStates
	// ContainerEntries lists container files' entries.
	ContainerEntries ContainerEntries
	// MaxBody bounds request bodies (uploads); default 1 GiB + 1 MiB.
	MaxBody int
}

// Server is the Fiber app with every route. Its Shutdown first ends the
// event streams, which otherwise hold their connections until a write fails.
type Server struct {
	*fiber.App
	stopStreams context.CancelFunc
}

// Shutdown ends the event streams, then shuts the app down gracefully.
func (s *Server) Shutdown() error {
	s.stopStreams()
	return s.App.Shutdown()
}

// ShutdownWithContext is Shutdown with a deadline.
func (s *Server) ShutdownWithContext(ctx context.Context) error {
	s.stopStreams()
	return s.App.ShutdownWithContext(ctx)
}

// New builds the server with every route.
func New(d Deps) *Server {
	if d.MaxBody <= 0 {
		d.MaxBody = 1<<30 + 1<<20
	}
	app := fiber.New(fiber.Config{
		AppName:               "agenthost",
		DisableStartupMessage: true,
		ErrorHandler:          problemHandler(d.Logger),
		BodyLimit:             d.MaxBody,
		// Uploads stream from the connection instead of being buffered whole.
		StreamRequestBody: true,
	})
	streams, stop := context.WithCancel(context.Background())
	routes(app, d, streams)
	return &Server{App: app, stopStreams: stop}
}

// Serve runs the app on addr until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, app *Server, addr string) error {
	errc := make(chan error, 1)
	go func() { errc <- app.Listen(addr) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return app.ShutdownWithContext(context.WithoutCancel(ctx))
	}
}
