package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/settings"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm"
)

// Role is what a process of agenthost does.
type Role int

const (
	// Serve is `agenthost serve`: the API, the MCP endpoint, the agent and
	// every job queue, background runs and data source syncs included.
	Serve Role = iota
	// Worker is `agenthost worker`: the indexing and storage jobs, with
	// /metrics on an address of its own and no API.
	Worker
)

func (r Role) String() string {
	if r == Worker {
		return "worker"
	}
	return "serve"
}

// Config is everything a server is made of: the commands fill it from their
// flags (which their variables reach, checked, when the command line does
// not give them) and from the configuration file, read once by ReadFile. The settings that have no flag
// are read from Env by New, strictly (see readEnv).
type Config struct {
	Role Role
	// Logger receives the server's log; required.
	Logger *slog.Logger
	// Env is the environment as start-up read it, secrets included (they
	// are no longer in the process's own); nil reads nothing.
	Env func(string) string
	// File is the configuration file.
	File File
	// DataDir is the data directory: the embedded database, blobs,
	// installed plugins, staging. Serve makes it private (0700).
	DataDir string
	// Store opens the database; Migrate applies PostgreSQL's pending
	// migrations (the embedded database always is migrated).
	Store   store.Config
	Migrate bool
	// Plugins is the plugin host's configuration.
	Plugins Plugins
	// Extractors is the operator's choice of extractor plugins.
	Extractors extract.OperatorChoice
	// Billing is the plugin compute price and the budget's overdraft.
	Billing Billing
	// Telemetry says where spans go and who reads /metrics.
	Telemetry Telemetry
	// Sweep is the storage sweep's and the audit log's retention.
	Sweep Sweep

	// Serve only.

	// Addr is the API's listen address.
	Addr string
	// MCP is the MCP endpoint's listener; MCPClients the stdio commands
	// tenant admins may add as MCP servers, and who runs them.
	MCP        MCP
	MCPClients MCPClients
	// TenantRate is the requests that start work per tenant and minute; 0: none.
	TenantRate int64
	// MaxUpload is the largest accepted upload in bytes.
	MaxUpload int64
	// PluginAdmins are the tenants whose admins may install plugins;
	// UpgradesMayWiden lets an upgrade widen a plugin unconfirmed.
	PluginAdmins     []string
	UpgradesMayWiden bool
	// SetupTokenTTL is the lifetime of the token the setup page makes.
	SetupTokenTTL time.Duration
	// ShutdownTimeout bounds a stop; at its end the process exits through
	// Exit (nil: os.Exit), saying why on Stderr.
	ShutdownTimeout time.Duration
	Exit            func(code int)
	Stderr          io.Writer

	// Worker only.

	// MetricsAddr serves /metrics ("off" or "": none).
	MetricsAddr string
	// StopTimeout is how long running jobs may finish at a stop (default 30 s).
	StopTimeout time.Duration
}

// Plugins is the plugin host: the built-in plugins and the operator's.
type Plugins struct {
	// Wasm is the host's configuration as the operator's flags make it
	// (verifier, grants, limits, compile cache, protected paths); New adds
	// the capabilities and protects DataDir and the configuration file.
	Wasm wasm.Config
	// Egress is the operator's egress settings (-allow-host, -resolve).
	Egress wasm.EgressOptions
	// Dir is the directory of third-party plugins ("" for none).
	Dir string
	// Enable names opt-in built-ins to load (builtin.OptIn).
	Enable []string
}

// Billing is the plugin compute price and the budget.
type Billing struct {
	// PluginPerHour is the price of tool calls' wall time in CHF per hour.
	PluginPerHour money.Amount
	Budget        billing.BudgetConfig
}

// Telemetry says where spans go and who may read /metrics.
type Telemetry struct {
	OTLPEndpoint string
	MetricsToken string
	TraceHealth  bool
}

// MCP is serve's MCP endpoint.
type MCP struct {
	// Addr is its listen address; "off" or "" serves none.
	Addr    string
	Hosts   []string
	Origins []string
}

// MCPClients is who runs tenants' stdio MCP servers.
type MCPClients struct {
	Commands []string
	// User and UIDs are -mcp-user and -mcp-uids.
	User, UIDs string
}

// Sweep is the storage sweeper's settings (host/sweep) and the audit log's
// retention.
type Sweep struct {
	Versions, Trash, Grace, Every time.Duration
	Audit                         time.Duration
}

// envSettings are the settings without a flag, read from Config.Env.
type envSettings struct {
	agentMaxRounds int64
	agentMaxCost   money.Amount
	entityCache    bool
	titles         bool
	approvalTTL    time.Duration
	approvalSweep  time.Duration
	dataSourceTick time.Duration
	cookieSecure   bool
	publicURL      string
	secretKey      string
}

// readEnv reads the settings that have no flag and that role reads from env, each through its
// entry in the registry (host/settings): a value that does not read as its
// kind is an error naming the setting and the value, never its default.
func readEnv(role Role, env func(string) string) (envSettings, error) {
	e := envSettings{agentMaxRounds: 25, titles: true, approvalTTL: rounds.DefaultApprovalTTL,
		approvalSweep: 10 * time.Second, dataSourceTick: 30 * time.Second}
	var errs []error
	get := func(name string) (string, bool) {
		v := env(name)
		if v == "" {
			return "", false // empty is unset, as settings.CheckEnv reads it
		}
		s, ok := settings.ByEnv(name)
		if !ok {
			errs = append(errs, fmt.Errorf("server: %s is not in the settings registry", name))
			return "", false
		}
		if !slices.Contains(strings.Fields(s.Commands), role.String()) {
			return "", false // another command's setting: not this role's to refuse
		}
		if err := s.Check(v); err != nil {
			errs = append(errs, err)
			return "", false
		}
		return v, true
	}
	if v, ok := get("AGENTHOST_AGENT_MAX_ROUNDS"); ok {
		e.agentMaxRounds, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := get("AGENTHOST_AGENT_MAX_COST_CHF"); ok {
		e.agentMaxCost, _ = money.Parse(v)
	}
	for name, dst := range map[string]*bool{"AGENTHOST_AGENT_ENTITY_CACHE": &e.entityCache, "AGENTHOST_AGENT_TITLES": &e.titles,
		"AGENTHOST_COOKIE_SECURE": &e.cookieSecure} {
		if v, ok := get(name); ok {
			*dst, _ = strconv.ParseBool(v)
		}
	}
	for name, dst := range map[string]*time.Duration{"AGENTHOST_APPROVAL_TTL": &e.approvalTTL,
		"AGENTHOST_APPROVAL_SWEEP": &e.approvalSweep, "AGENTHOST_DATASOURCE_TICK": &e.dataSourceTick} {
		if v, ok := get(name); ok {
			*dst, _ = time.ParseDuration(v)
		}
	}
	e.publicURL, _ = get("AGENTHOST_PUBLIC_URL")
	e.secretKey = env("AGENTHOST_SECRET_KEY")
	return e, errors.Join(errs...)
}
