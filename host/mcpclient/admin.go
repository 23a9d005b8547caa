package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Registrations is what administering servers needs of the SQL store; the
// store refuses everyone but the tenant's admin.
type Registrations interface {
	CreateMCPServer(ctx context.Context, p tenancy.Principal, s mcpconfig.Server) (mcpconfig.Server, error)
	MCPServers(ctx context.Context, p tenancy.Principal) ([]mcpconfig.Server, error)
	MCPServer(ctx context.Context, p tenancy.Principal, id string) (mcpconfig.Server, error)
	DeleteMCPServer(ctx context.Context, p tenancy.Principal, id string) error
}

// NewServer is a server as an admin adds it: its configuration and its
// secrets in the clear, before they are validated and sealed.
type NewServer struct {
	Name string `json:"name"`
	// WorkspaceID: empty adds the server to every workspace of the tenant.
	WorkspaceID string   `json:"workspaceId,omitempty"`
	Transport   string   `json:"transport"`
	Command     []string `json:"command,omitempty"`
	// Env is kept in the clear; SecretEnv sealed.
	Env       map[string]string `json:"env,omitempty"`
	SecretEnv map[string]string `json:"secretEnv,omitempty"`
	URL       string            `json:"url,omitempty"`
	// BearerToken is sent as Authorization: Bearer …; Headers are sent as
	// given; both are sealed.
	BearerToken    string            `json:"bearerToken,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	ReadOnly       []string          `json:"readOnly,omitempty"`
	TimeoutMs      int64             `json:"timeoutMs,omitempty"`
	MaxResultBytes int               `json:"maxResultBytes,omitempty"`
}

// Admin registers and removes a tenant's servers: it validates them, seals
// their secrets with the host's key and closes removed servers'
// connections.
type Admin struct {
	Store   Registrations
	Sealer  *Sealer
	Manager *Manager // nil: no live connections to close (the admin CLI)
	// Commands are the stdio commands the operator allows (AllowedCommand),
	// as the manager's: a server that would not run is refused when added.
	Commands []string
}

// Add validates, seals and stores a new server.
func (a Admin) Add(ctx context.Context, p tenancy.Principal, n NewServer) (mcpconfig.Server, error) {
	sec := mcpconfig.Secrets{Env: n.SecretEnv, Headers: map[string]string{}}
	for k, v := range n.Headers {
		sec.Headers[k] = v
	}
	if n.BearerToken != "" {
		for k := range sec.Headers {
			if strings.EqualFold(k, "Authorization") {
				return mcpconfig.Server{}, fmt.Errorf("%w: give bearerToken or an Authorization header, not both", tenancy.ErrInvalid)
			}
		}
		sec.Headers["Authorization"] = "Bearer " + n.BearerToken
	}
	if len(sec.Headers) == 0 {
		sec.Headers = nil
	}
	s := mcpconfig.Server{TenantID: p.TenantID, WorkspaceID: n.WorkspaceID, Name: n.Name, Config: mcpconfig.Config{
		Transport: n.Transport, Command: n.Command, Env: n.Env, URL: n.URL, ReadOnly: n.ReadOnly,
		TimeoutMs: n.TimeoutMs, MaxResultBytes: n.MaxResultBytes}}
	if err := mcpconfig.Validate(s, sec); err != nil {
		return mcpconfig.Server{}, err
	}
	if s.Config.Transport == mcpconfig.Stdio {
		if err := mcpconfig.AllowedCommand(a.Commands, s.Config.Command, mcpconfig.EnvNames(n.Env, n.SecretEnv)); err != nil {
			return mcpconfig.Server{}, fmt.Errorf("%w: %w", tenancy.ErrForbidden, err)
		}
	}
	if s.Config.Transport == mcpconfig.HTTP && a.Manager != nil {
		if err := a.Manager.CheckDestination(ctx, s.Config.URL); err != nil {
			return mcpconfig.Server{}, fmt.Errorf("%w: the server's address is refused: %w", tenancy.ErrForbidden, err)
		}
	}
	for k := range sec.Env {
		s.Config.SecretEnv = append(s.Config.SecretEnv, k)
	}
	for k := range sec.Headers {
		s.Config.SecretHeaders = append(s.Config.SecretHeaders, k)
	}
	slices.Sort(s.Config.SecretEnv)
	slices.Sort(s.Config.SecretHeaders)
	sealed, err := a.Sealer.Seal(p.TenantID, s.Name, sec)
	if errors.Is(err, ErrNoSecretKey) {
		return mcpconfig.Server{}, fmt.Errorf("%w: the server has secrets, and this host keeps none: %w", tenancy.ErrInvalid, err)
	}
	if err != nil {
		return mcpconfig.Server{}, err
	}
	s.Secrets = sealed
	return a.Store.CreateMCPServer(ctx, p, s)
}

// List lists the tenant's servers.
func (a Admin) List(ctx context.Context, p tenancy.Principal) ([]mcpconfig.Server, error) {
	return a.Store.MCPServers(ctx, p)
}

// Get returns one of the tenant's servers.
func (a Admin) Get(ctx context.Context, p tenancy.Principal, id string) (mcpconfig.Server, error) {
	return a.Store.MCPServer(ctx, p, id)
}

// Status connects to one of the tenant's servers (if not connected) and
// reports its tools and failures.
func (a Admin) Status(ctx context.Context, p tenancy.Principal, id string) (mcpconfig.Server, Status, error) {
	s, err := a.Store.MCPServer(ctx, p, id)
	if err != nil || a.Manager == nil {
		return s, Status{}, err
	}
	st, err := a.Manager.Status(ctx, s)
	return s, st, err
}

// Remove deletes one of the tenant's servers and stops its connection on
// this host (other hosts close theirs when idle; no set offers it again).
func (a Admin) Remove(ctx context.Context, p tenancy.Principal, id string) error {
	if err := a.Store.DeleteMCPServer(ctx, p, id); err != nil {
		return err
	}
	if a.Manager != nil {
		a.Manager.Forget(id)
	}
	return nil
}
