package main

import (
	"context"
	"flag"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/mcpserver"
)

// mcpFlags are serve's flags of the MCP endpoint, which listens beside the
// API on a net/http server of its own (docs/mcp.md says why).
type mcpFlags struct {
	addr    *string
	hosts   *stringList
	origins *stringList
}

func addMCPFlags(fs *flag.FlagSet) mcpFlags {
	f := mcpFlags{
		addr: fs.String("mcp-addr", envOr("AGENTHOST_MCP_ADDR", "127.0.0.1:8081"),
			"listen address of the MCP endpoint (/api/v1/workspaces/ID/mcp); \"off\" serves none"),
		hosts:   &stringList{},
		origins: &stringList{},
	}
	if v := envOr("AGENTHOST_MCP_HOSTS", ""); v != "" {
		*f.hosts = strings.Split(v, ",")
	}
	if v := envOr("AGENTHOST_MCP_CORS_ORIGINS", ""); v != "" {
		*f.origins = strings.Split(v, ",")
	}
	fs.Var(f.origins, "mcp-cors-origin", "an origin (scheme://host[:port]) of browser-based MCP clients allowed across origins: its preflights are answered and its responses carry CORS headers (repeatable)")
	fs.Var(f.hosts, "mcp-host", "a Host (host or host:port) the MCP endpoint answers besides localhost and loopback addresses, e.g. the public name behind a proxy (repeatable); others are refused (DNS rebinding)")
	return f
}

// serve starts the MCP endpoint in the background; it stops with ctx, or
// when the returned function is called, within grace. The function waits
// for it to stop: serve calls it before it closes what calls use.
func (f mcpFlags) serve(ctx context.Context, logger *slog.Logger, d mcpserver.Deps, grace time.Duration) (stop func()) {
	if *f.addr == "off" || *f.addr == "" {
		return func() {}
	}
	d.Hosts = *f.hosts
	d.Origins = *f.origins
	srv := mcpserver.New(d)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := mcpserver.Serve(ctx, srv, *f.addr, grace, func(a net.Addr) {
			logger.Info("MCP endpoint listening", "addr", a.String(), "path", mcpserver.Path)
		})
		if err != nil {
			logger.Error("MCP endpoint", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
