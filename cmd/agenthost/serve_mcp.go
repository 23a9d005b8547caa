package main

import (
	"flag"
	"os"
	"strings"

	"github.com/agenthost/agenthost/host/server"
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
		addr: fs.String("mcp-addr", "127.0.0.1:8081",
			"listen address of the MCP endpoint (/api/v1/workspaces/ID/mcp); \"off\" serves none"),
		hosts:   &stringList{},
		origins: &stringList{},
	}
	if v := os.Getenv("AGENTHOST_MCP_HOSTS"); v != "" {
		*f.hosts = strings.Split(v, ",")
	}
	if v := os.Getenv("AGENTHOST_MCP_CORS_ORIGINS"); v != "" {
		*f.origins = strings.Split(v, ",")
	}
	fs.Var(f.origins, "mcp-cors-origin", "an origin (scheme://host[:port]) of browser-based MCP clients allowed across origins: its preflights are answered and its responses carry CORS headers (repeatable)")
	fs.Var(f.hosts, "mcp-host", "a Host (host or host:port) the MCP endpoint answers besides localhost and loopback addresses, e.g. the public name behind a proxy (repeatable); others are refused (DNS rebinding)")
	return f
}

// config is the MCP endpoint's listener.
func (f mcpFlags) config() server.MCP {
	return server.MCP{Addr: *f.addr, Hosts: *f.hosts, Origins: *f.origins}
}
