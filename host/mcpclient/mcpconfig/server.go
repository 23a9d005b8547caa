package mcpconfig

import (
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/host/tenancy"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Transport kinds of a server.
const (
	Stdio = "stdio"
	HTTP  = "http"
)

// Limits of a server's configuration and answers.
const (
	// DefaultTimeout bounds one tool call when the server names none.
	DefaultTimeout = 60 * time.Second
	// MaxTimeout is the most a server's configuration may allow one call.
	MaxTimeout = 10 * time.Minute
	// DefaultMaxResultBytes bounds one message from the server (a tool
	// call's result, the tool list) when the server names no other bound.
	DefaultMaxResultBytes = 4 << 20
	// MaxResultBytes is the most a server's configuration may allow.
	MaxResultBytes = 64 << 20
	// MaxTools is the most tools one server may offer; more are refused.
	MaxTools = 256
)

// Server is an external MCP server registered for a tenant's workspaces.
type Server struct {
	ID       string `json:"id"`
	TenantID string `json:"tenantId"`
	// WorkspaceID is the workspace whose tool set gets the server's tools;
	// empty: every workspace of the tenant.
	WorkspaceID string `json:"workspaceId,omitempty"`
	// Name prefixes the server's tools in a set ("memory" → memory_read_graph);
	// it is unique in the tenant.
	Name   string `json:"name"`
	Config Config `json:"config"`
	// Secrets are the sealed Secrets (Sealer): never logged, never returned.
	Secrets   []byte    `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
}

// Config is a server's configuration in the clear: what the API shows.
type Config struct {
	// Transport is Stdio or HTTP.
	Transport string `json:"transport"`
	// Command is the program and its arguments (stdio): run directly, no
	// shell; a program without a slash is looked up in SafePath.
	Command []string `json:"command,omitempty"`
	// Env is the stdio server's environment beyond PATH, in the clear
	// (secrets go in Secrets.Env); "${WORKDIR}" in a value is the server's
	// working directory.
	Env map[string]string `json:"env,omitempty"`
	// URL is the streamable-HTTP endpoint (http).
	URL string `json:"url,omitempty"`
	// SecretEnv and SecretHeaders name the sealed variables and headers
	// (their values are in Secrets only).
	SecretEnv     []string `json:"secretEnv,omitempty"`
	SecretHeaders []string `json:"secretHeaders,omitempty"`
	// ReadOnly lists the tools whose readOnlyHint the admin trusts ("*":
	// all). A tool is read-only only if it announces readOnlyHint (and no
	// destructiveHint) and is listed here: annotations are the server's
	// claims, and read-only tools are retried and run in parallel.
	ReadOnly []string `json:"readOnly,omitempty"`
	// TimeoutMs bounds one tool call [DefaultTimeout, at most MaxTimeout].
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// MaxResultBytes bounds one message from the server [DefaultMaxResultBytes].
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
}

// Secrets are a server's confidential settings, kept sealed at rest.
type Secrets struct {
	// Env adds variables to a stdio server's environment.
	Env map[string]string `json:"env,omitempty"`
	// Headers are sent with every request to an HTTP server (a bearer
	// token is Authorization: Bearer …), and only to its origin.
	Headers map[string]string `json:"headers,omitempty"`
}

// Timeout is the bound of one tool call.
func (c Config) Timeout() time.Duration {
	if c.TimeoutMs <= 0 {
		return DefaultTimeout
	}
	return time.Duration(c.TimeoutMs) * time.Millisecond
}

// ResultLimit is the bound of one message from the server.
func (c Config) ResultLimit() int {
	if c.MaxResultBytes <= 0 {
		return DefaultMaxResultBytes
	}
	return c.MaxResultBytes
}

// TrustsReadOnly says whether the admin trusts tool's readOnlyHint.
func (c Config) TrustsReadOnly(tool string) bool {
	return slices.Contains(c.ReadOnly, "*") || slices.Contains(c.ReadOnly, tool)
}

var (
	serverName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,23}$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
)

// reservedHeaders are the transport's own: an admin's header may not replace them.
var reservedHeaders = []string{"Content-Type", "Accept", "Content-Length", "Host", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Connection", "Transfer-Encoding"}

// Validate checks a server's configuration and secrets before they are
// stored; every error wraps tenancy.ErrInvalid and names the field.
func Validate(s Server, sec Secrets) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", tenancy.ErrInvalid, fmt.Sprintf(format, args...))
	}
	if !serverName.MatchString(s.Name) {
		return bad("name %q: 1 to 24 lower-case letters, digits and '-', starting with a letter (it prefixes the server's tools)", s.Name)
	}
	c := s.Config
	switch c.Transport {
	case Stdio:
		if len(c.Command) == 0 || strings.TrimSpace(c.Command[0]) == "" {
			return bad("command: a stdio server needs a program to run")
		}
		for i, a := range c.Command {
			if strings.ContainsRune(a, 0) || len(a) > 4096 {
				return bad("command[%d]: NUL byte or longer than 4096 bytes", i)
			}
		}
		if c.URL != "" || len(sec.Headers) > 0 {
			return bad("url and headers are for http servers")
		}
		if strings.Contains(c.Command[0], "/") && !filepath.IsAbs(c.Command[0]) {
			return bad("command %q: a program is an absolute path or a name found in %s", c.Command[0], SafePath)
		}
		for k, v := range c.Env {
			if !envName.MatchString(k) || k == "PATH" || strings.ContainsRune(v, 0) {
				return bad("env %q: a variable name (PATH is the host's) without NUL in its value", k)
			}
		}
		for k, v := range sec.Env {
			if _, clash := c.Env[k]; clash || !envName.MatchString(k) || k == "PATH" || strings.ContainsRune(v, 0) {
				return bad("secret env %q: a variable name not also in env (PATH is the host's), without NUL in its value", k)
			}
		}
		for _, m := range []map[string]string{c.Env, sec.Env} {
			for k := range m {
				if deniedEnvName(k) {
					return bad("env %q would make the program load code the operator did not allow", k)
				}
			}
		}
	case HTTP:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return bad("url %q: an http(s) URL with a host and no user info (credentials go in headers)", c.URL)
		}
		if len(c.Command) > 0 || len(c.Env) > 0 || len(sec.Env) > 0 {
			return bad("command and env are for stdio servers")
		}
		for k, v := range sec.Headers {
			if !headerName.MatchString(k) || strings.ContainsAny(v, "\r\n\x00") {
				return bad("header %q: a header name, and a value without line breaks", k)
			}
			for _, r := range reservedHeaders {
				if strings.EqualFold(k, r) {
					return bad("header %q is the transport's own", k)
				}
			}
		}
	default:
		return bad("transport %q: %q or %q", c.Transport, Stdio, HTTP)
	}
	if c.TimeoutMs < 0 || time.Duration(c.TimeoutMs)*time.Millisecond > MaxTimeout {
		return bad("timeoutMs %d: at most %d", c.TimeoutMs, MaxTimeout.Milliseconds())
	}
	if c.MaxResultBytes < 0 || c.MaxResultBytes > MaxResultBytes {
		return bad("maxResultBytes %d: at most %d", c.MaxResultBytes, MaxResultBytes)
	}
	return nil
}

// ErrEnvNotAllowed says a stdio server sets a variable the operator did not
// allow for its command.
var ErrEnvNotAllowed = errors.New("a variable the operator does not allow for this command")

// commandEntry is one of the operator's entries (-mcp-command): the first
// words of the commands it allows, and the variables a tenant admin may set
// for them.
type commandEntry struct {
	words []string
	env   []string
}

// parseCommand reads an entry: words "env=NAME,NAME2" before the program
// name the variables a tenant admin may set ("env=MEMORY_FILE_PATH
// /usr/bin/node /srv/mcp/memory/index.js"); the rest is the command's
// beginning. A variable that loads code (deniedEnv) or PATH cannot be
// allowed at all.
func parseCommand(s string) (commandEntry, error) {
	var e commandEntry
	for _, w := range strings.Fields(s) {
		if len(e.words) == 0 && strings.HasPrefix(w, "env=") {
			for _, k := range strings.Split(strings.TrimPrefix(w, "env="), ",") {
				switch {
				case k == "":
				case !envName.MatchString(k):
					return e, fmt.Errorf("the MCP command %q: env %q is not a variable name", s, k)
				case k == "PATH" || deniedEnvName(k):
					return e, fmt.Errorf("the MCP command %q: env %s cannot be allowed (PATH is the host's; the others make a program load other code)", s, k)
				default:
					e.env = append(e.env, k)
				}
			}
			continue
		}
		e.words = append(e.words, w)
	}
	if len(e.words) == 0 {
		return e, fmt.Errorf("the MCP command %q names no program", s)
	}
	if strings.Contains(e.words[0], "/") && !filepath.IsAbs(e.words[0]) {
		return e, fmt.Errorf("the MCP command %q: a program is an absolute path or a name found in %s", s, SafePath)
	}
	return e, nil
}

// CheckCommands checks the operator's entries (AllowedCommand), so that a
// mistyped one is refused at start-up rather than when a server starts.
func CheckCommands(allowed []string) error {
	for _, a := range allowed {
		if _, err := parseCommand(a); err != nil {
			return err
		}
	}
	return nil
}

// AllowedCommand says whether the operator allows a stdio server's command
// with the variables env (their names: the clear and the sealed ones). A
// stdio server runs a program on the host, so tenant admins may only run
// what the operator listed: each entry is the beginning of a command, the
// program and optionally its first arguments separated by spaces
// ("/usr/bin/node /srv/mcp/server-memory/dist/index.js"); a command is
// allowed when its first words are exactly an entry's. Allowing a bare
// interpreter ("/usr/bin/node") allows any code it can run.
//
// Variables are an allow list too, written before the program
// ("env=MEMORY_FILE_PATH,API_TOKEN /usr/bin/node …"): a variable can change
// what a program runs (GIT_CONFIG_*, GIT_SSH_COMMAND, npm_config_*, HOME,
// proxies), so a server may set only variables one entry that allows its
// command names, and none without one.
func AllowedCommand(allowed []string, command []string, env []string) error {
	var best *commandEntry
	for _, a := range allowed {
		e, err := parseCommand(a)
		if err != nil {
			return err
		}
		if len(command) < len(e.words) || !slices.Equal(command[:len(e.words)], e.words) {
			continue
		}
		if missingEnv(e, env) == "" {
			return nil
		}
		if best == nil || len(e.words) > len(best.words) {
			best = &e
		}
	}
	if best != nil {
		allows := "none"
		if len(best.env) > 0 {
			allows = strings.Join(best.env, ", ")
		}
		return fmt.Errorf("%w: the operator does not allow the variable %s for the command %q (it allows %s; an operator allows variables as env=NAME,… before the command in -mcp-command)",
			ErrEnvNotAllowed, missingEnv(*best, env), clip(strings.Join(best.words, " "), 200), allows)
	}
	if len(allowed) == 0 {
		return fmt.Errorf("this host runs no stdio MCP servers: the operator allows none (-mcp-command, AGENTHOST_MCP_COMMANDS)")
	}
	return fmt.Errorf("the command %q is not one the operator allows (-mcp-command, AGENTHOST_MCP_COMMANDS): %s",
		clip(strings.Join(command, " "), 200), strings.Join(allowed, "; "))
}

// missingEnv is the first of env (sorted) that e does not allow; "": none.
func missingEnv(e commandEntry, env []string) string {
	names := slices.Sorted(slices.Values(env))
	for _, k := range names {
		if !slices.Contains(e.env, k) {
			return k
		}
	}
	return ""
}

// EnvNames are the names of a stdio server's variables, the clear and the sealed.
func EnvNames(env ...map[string]string) []string {
	var out []string
	for _, m := range env {
		for k := range m {
			out = append(out, k)
		}
	}
	return out
}

// deniedEnv are variables that would make a stdio server's program load code
// the operator did not allow (NODE_OPTIONS=--require …, LD_PRELOAD, …).
var deniedEnv = []string{"LD_", "DYLD_", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
	"PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
	"BASH_ENV", "ENV", "GCONV_PATH", "HOSTALIASES", "LOCPATH", "MALLOC_", "GLIBC_TUNABLES"}

func deniedEnvName(k string) bool {
	for _, d := range deniedEnv {
		if k == d || (strings.HasSuffix(d, "_") && strings.HasPrefix(k, d)) {
			return true
		}
	}
	return false
}
