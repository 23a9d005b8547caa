package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// mcpAdminFlags are the flags of `admin mcp`: a tenant's external MCP
// servers. Secrets never come on the command line (where ps shows them):
// flags name the environment variables that hold them.
type mcpAdminFlags struct {
	command, url, env, secretEnv, bearerEnv, headerEnv, readOnly, remove *string
	timeout                                                              *time.Duration
	maxResult                                                            *int
}

func addMCPAdminFlags(fs *flag.FlagSet) *mcpAdminFlags {
	return &mcpAdminFlags{
		command:   fs.String("command", "", `stdio server: the program and its arguments, split at spaces or as a JSON array ("[\"node\",\"/srv/my server.js\"]"); no shell (mcp)`),
		url:       fs.String("url", "", "HTTP server: its streamable-HTTP endpoint (mcp)"),
		env:       fs.String("env", "", "stdio server: variables K=V,K2=V2 kept in the clear; ${WORKDIR} is the server's directory (mcp)"),
		secretEnv: fs.String("secret-env", "", "stdio server: variables K=VAR,… whose values are read from this process's variable VAR and sealed (mcp)"),
		bearerEnv: fs.String("bearer-env", "", "HTTP server: the variable holding its bearer token, sealed (mcp)"),
		headerEnv: fs.String("header-env", "", "HTTP server: headers Name=VAR,… whose values are read from VAR and sealed (mcp)"),
		readOnly:  fs.String("read-only", "", `tools whose readOnlyHint you trust, comma-separated ("*": all) (mcp)`),
		remove:    fs.String("remove", "", "remove the MCP server with this id (mcp)"),
		timeout:   fs.Duration("timeout", 0, "bound of one tool call (default 60s) (mcp)"),
		maxResult: fs.Int("max-result-bytes", 0, "bound of one message from the server (default 4 MiB) (mcp)"),
	}
}

// pairs parses "K=V,K2=V2"; with fromEnv each V names a variable to read.
func pairs(flagName, s string, fromEnv bool) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-%s: %q is not NAME=VALUE", flagName, kv)
		}
		if fromEnv {
			val, ok := os.LookupEnv(v)
			if !ok {
				return nil, fmt.Errorf("-%s: the variable %s is not set", flagName, v)
			}
			v = val
		}
		out[k] = v
	}
	return out, nil
}

// run lists, adds or removes the tenant's MCP servers.
func (f *mcpAdminFlags) run(ctx context.Context, db *store.DB, tenant, name, workspace string, list bool, stdout io.Writer) error {
	admin := tenancy.Principal{TenantID: tenant, Admin: true}
	key, err := secretKey(os.Getenv)
	if err != nil {
		return err
	}
	sealer, err := mcpclient.NewSealer(key)
	if err != nil {
		return err
	}
	a := mcpclient.Admin{Store: db, Sealer: sealer, Commands: envMCPCommands()}
	switch {
	case list:
		servers, err := a.List(ctx, admin)
		if err != nil {
			return err
		}
		printMCPServers(stdout, servers)
		return nil
	case *f.remove != "":
		if err := a.Remove(ctx, admin, *f.remove); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "MCP server %s removed\n", *f.remove)
		return nil
	}
	n := mcpclient.NewServer{Name: name, WorkspaceID: workspace, URL: *f.url, TimeoutMs: f.timeout.Milliseconds(), MaxResultBytes: *f.maxResult}
	switch {
	case *f.command != "" && *f.url != "":
		return fmt.Errorf("admin mcp: -command (stdio) or -url (HTTP), not both")
	case *f.command != "":
		n.Transport = mcpconfig.Stdio
		if strings.HasPrefix(strings.TrimSpace(*f.command), "[") {
			if err := json.Unmarshal([]byte(*f.command), &n.Command); err != nil {
				return fmt.Errorf("admin mcp: -command: %w", err)
			}
		} else {
			n.Command = strings.Fields(*f.command)
		}
	case *f.url != "":
		n.Transport = mcpconfig.HTTP
	default:
		return fmt.Errorf("admin mcp: -command (stdio) or -url (HTTP) required, or -list, or -remove ID")
	}
	if n.Env, err = pairs("env", *f.env, false); err != nil {
		return err
	}
	if n.SecretEnv, err = pairs("secret-env", *f.secretEnv, true); err != nil {
		return err
	}
	if n.Headers, err = pairs("header-env", *f.headerEnv, true); err != nil {
		return err
	}
	if *f.bearerEnv != "" {
		tok, ok := os.LookupEnv(*f.bearerEnv)
		if !ok || tok == "" {
			return fmt.Errorf("admin mcp: -bearer-env: the variable %s is not set", *f.bearerEnv)
		}
		n.BearerToken = tok
	}
	for _, t := range strings.Split(*f.readOnly, ",") {
		if t = strings.TrimSpace(t); t != "" {
			n.ReadOnly = append(n.ReadOnly, t)
		}
	}
	s, err := a.Add(ctx, admin, n)
	if err != nil {
		return err
	}
	scope := "every workspace of the tenant"
	if s.WorkspaceID != "" {
		scope = "workspace " + s.WorkspaceID
	}
	fmt.Fprintf(stdout, "MCP server %s (%s): its tools join %s as %s_TOOL\n", s.ID, s.Name, scope, s.Name)
	return nil
}

func printMCPServers(w io.Writer, servers []mcpconfig.Server) {
	if len(servers) == 0 {
		fmt.Fprintln(w, "no MCP servers")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWORKSPACE\tTRANSPORT\tTARGET\tSECRETS")
	for _, s := range servers {
		target := s.Config.URL
		if s.Config.Transport == mcpconfig.Stdio {
			target = strings.Join(s.Config.Command, " ")
		}
		ws := s.WorkspaceID
		if ws == "" {
			ws = "(all)"
		}
		secrets := strings.Join(append(append([]string{}, s.Config.SecretEnv...), s.Config.SecretHeaders...), ",")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, ws, s.Config.Transport, target, secrets)
	}
	tw.Flush()
}

// mcpCommandFlag is serve's -mcp-command: the stdio commands tenant admins
// may add, beside AGENTHOST_MCP_COMMANDS (entries separated by ";"), and
// -mcp-user and -mcp-uids, who runs them when serve is root.
type mcpCommandFlag struct {
	items      *stringList
	user, uids *string
}

func addMCPCommandFlag(fs *flag.FlagSet) mcpCommandFlag {
	f := mcpCommandFlag{items: &stringList{}}
	fs.Var(f.items, "mcp-command", settingUsage("mcp-command", `the program and optionally its first arguments: "/usr/bin/node /srv/mcp/memory/index.js"`))
	f.user = fs.String("mcp-user", "", settingUsage("mcp-user", "none given: nobody"))
	f.uids = fs.String("mcp-uids", "", settingUsage("mcp-uids", "ids nothing else on the machine uses"))
	return f
}

// addSecretKeyFileFlag is -secret-key-file: the secret key read from a file
// rather than AGENTHOST_SECRET_KEY.
func addSecretKeyFileFlag(fs *flag.FlagSet) *string {
	return fs.String("secret-key-file", "", settingUsage("secret-key-file", "32 random bytes, base64"))
}

// secretKey is AGENTHOST_SECRET_KEY, or the content of the file
// AGENTHOST_SECRET_KEY_FILE names.
func secretKey(getenv func(string) string) (string, error) {
	key, file := getenv("AGENTHOST_SECRET_KEY"), getenv(secretKeyFileEnv)
	if file == "" {
		return key, nil
	}
	if key != "" {
		return "", fmt.Errorf("the secret key comes from AGENTHOST_SECRET_KEY or %s, not both", secretKeyFileEnv)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("the secret key file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (f mcpCommandFlag) list() []string { return append(envMCPCommands(), *f.items...) }

// config is who may be run as a tenant's stdio MCP server, and as whom.
func (f mcpCommandFlag) config() server.MCPClients {
	return server.MCPClients{Commands: f.list(), User: *f.user, UIDs: *f.uids}
}

// envMCPCommands reads AGENTHOST_MCP_COMMANDS.
func envMCPCommands() []string {
	var out []string
	for _, c := range strings.Split(os.Getenv("AGENTHOST_MCP_COMMANDS"), ";") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}
