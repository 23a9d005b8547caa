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
		addr:    fs.String("mcp-addr", "127.0.0.1:8081", settingUsage("mcp-addr")),
		hosts:   &stringList{},
		origins: &stringList{},
	}
	if v := os.Getenv("AGENTHOST_MCP_HOSTS"); v != "" {
		*f.hosts = strings.Split(v, ",")
	}
	if v := os.Getenv("AGENTHOST_MCP_CORS_ORIGINS"); v != "" {
		*f.origins = strings.Split(v, ",")
	}
	fs.Var(f.origins, "mcp-cors-origin", settingUsage("mcp-cors-origin"))
	fs.Var(f.hosts, "mcp-host", settingUsage("mcp-host"))
	return f
}

// config is the MCP endpoint's listener.
func (f mcpFlags) config() server.MCP {
	return server.MCP{Addr: *f.addr, Hosts: *f.hosts, Origins: *f.origins}
}
