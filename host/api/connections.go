package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Connections is what the API needs of connections.Service: a user's own
// connections to external providers. No route ever answers a secret.
type Connections interface {
	List(ctx context.Context, p tenancy.Principal) ([]connections.Connection, error)
	AddToken(ctx context.Context, p tenancy.Principal, n connections.NewToken) (connections.Connection, error)
	Revoke(ctx context.Context, p tenancy.Principal, id string) error
	StartAuthorization(ctx context.Context, p tenancy.Principal, provider, label string, services ...string) (string, error)
	CompleteAuthorization(ctx context.Context, p tenancy.Principal, state, code string) (connections.Connection, error)
	// Providers lists the configured providers and how to connect to each
	// (connection_providers.go).
	Providers() []connections.ProviderInfo
}

func handleListConnections(s Connections) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := s.List(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		if out == nil {
			out = []connections.Connection{}
		}
		return c.JSON(out)
	}
}

type newConnectionRequest struct {
	Provider string `json:"provider"`
	Label    string `json:"label"`
	// Services are the services the user chose to connect (microsoft:
	// files, outlook, teams): only their scopes are asked for.
	Services []string `json:"services,omitempty"`
	Auth     string   `json:"auth"`
	BaseURL  string   `json:"baseUrl"`
	// Deployment is the provider's deployment (Jira: cloud or datacenter).
	Deployment string `json:"deployment"`
	Account    string `json:"account"`
	Token      string `json:"token"`
	// HostKey and PrivateKey are an SFTP connection's.
	HostKey    string `json:"hostKey"`
	PrivateKey string `json:"privateKey"`
}

// recordConnection records a connection's creation (its view: never a
// secret).
func recordConnection(c *fiber.Ctx, rec audit.Recorder, p tenancy.Principal, out connections.Connection) {
	_ = audit.Record(c.UserContext(), rec, audit.Entry{TenantID: p.TenantID, Actor: audit.Actor{Kind: audit.ActorUser, ID: p.UserID},
		Action: audit.ConnectionCreated, TargetType: "connection", TargetID: out.ID, Detail: audit.Detail(out)})
}

func handleCreateConnection(s Connections, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r newConnectionRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		out, err := s.AddToken(c.UserContext(), principal(c), connections.NewToken{Provider: r.Provider, Label: r.Label, Auth: r.Auth,
			BaseURL: r.BaseURL, Deployment: r.Deployment, Account: r.Account, Token: r.Token, HostKey: r.HostKey, PrivateKey: r.PrivateKey})
		if err != nil {
			return err
		}
		recordConnection(c, rec, principal(c), out)
		return c.Status(fiber.StatusCreated).JSON(out)
	}
}

func handleRevokeConnection(s Connections, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := s.Revoke(c.UserContext(), principal(c), c.Params("id")); err != nil {
			return err
		}
		recordChange(c, rec, audit.Entry{Action: audit.ConnectionRevoked, TargetType: "connection", TargetID: c.Params("id")})
		return c.SendStatus(fiber.StatusNoContent)
	}
}

type authorizeRequest struct {
	Provider string `json:"provider"`
	Label    string `json:"label"`
	// Services are the services the user chose to connect (microsoft:
	// files, outlook, teams): only their scopes are asked for.
	Services []string `json:"services,omitempty"`
}

func handleAuthorizeConnection(s Connections) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r authorizeRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		u, err := s.StartAuthorization(c.UserContext(), principal(c), r.Provider, r.Label, r.Services...)
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"authorizationUrl": u})
	}
}
