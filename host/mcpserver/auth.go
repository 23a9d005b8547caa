package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
)

// Scopes of OAuth access tokens (host/oauthserver): scopeRead lists the
// tools and calls those that only read, scopeWrite the others too. An API
// token has both: it acts with its user's full rights, as at the API.
const (
	scopeRead  = "mcp:read"
	scopeWrite = "mcp:write"
)

// OAuthTokens checks the access tokens the authorization server issued
// (store.DB).
type OAuthTokens interface {
	AuthenticateOAuth(ctx context.Context, access string) (store.OAuthAccess, error)
}

// metadataPrefix is where RFC 9728 puts a resource's metadata: the
// well-known path followed by the resource's own path.
const metadataPrefix = "/.well-known/oauth-protected-resource"

type principalKey struct{}

func principalFrom(ctx context.Context) tenancy.Principal {
	p, _ := ctx.Value(principalKey{}).(tenancy.Principal)
	return p
}

// principalOf is the principal of a tools/call: the SDK hands each request
// the TokenInfo of the HTTP request that carried it.
func principalOf(ti *auth.TokenInfo) (tenancy.Principal, bool) {
	if ti == nil {
		return tenancy.Principal{}, false
	}
	p, ok := ti.Extra["principal"].(tenancy.Principal)
	return p, ok
}

// authenticate admits requests with `Authorization: Bearer <API token>`.
// A 401 names the resource's metadata (WWW-Authenticate resource_metadata,
// as the MCP authorization spec asks of HTTP servers). The SDK binds each
// session to the user who opened it (TokenInfo.UserID): another user's
// token cannot continue it.
func (s *Server) authenticate(next http.Handler) http.Handler {
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		if strings.HasPrefix(token, store.OAuthAccessPrefix) && s.d.OAuth != nil {
			return s.verifyOAuth(ctx, token, r)
		}
		p, err := s.d.Auth.Authenticate(ctx, token)
		if errors.Is(err, tenancy.ErrUnauthenticated) {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if err != nil {
			return nil, err
		}
		// API tokens expire in the store, which Authenticate checks on
		// every request; the SDK needs no expiry of its own.
		return &auth.TokenInfo{UserID: p.TenantID + "/" + p.UserID, Scopes: []string{scopeRead, scopeWrite},
			Extra: map[string]any{"principal": p}}, nil
	}
	withPrincipal := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principalOf(auth.TokenInfoFromContext(r.Context()))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL:    metadataURL(r),
			Scopes:                 []string{scopeRead},
			AllowMissingExpiration: true,
		})(withPrincipal).ServeHTTP(w, r)
	})
}

// verifyOAuth admits an OAuth access token at the one workspace it was
// granted for, and at the resource it names (RFC 8707: a token for another
// resource is refused, so a token obtained for one endpoint is no key to
// another). The person's rights are checked on every request and call, as
// for API tokens.
func (s *Server) verifyOAuth(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	a, err := s.d.OAuth.AuthenticateOAuth(ctx, token)
	if errors.Is(err, tenancy.ErrUnauthenticated) {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	if err != nil {
		return nil, err
	}
	if a.WorkspaceID != r.PathValue("ws") || (a.Resource != "" && a.Resource != resourceURL(r)) {
		return nil, fmt.Errorf("%w: the token was granted for another resource", auth.ErrInvalidToken)
	}
	p := a.Principal
	return &auth.TokenInfo{UserID: p.TenantID + "/" + p.UserID, Scopes: a.Scopes, Expiration: a.ExpiresAt,
		Extra: map[string]any{"principal": p}}, nil
}

// mayWrite reports whether the request's credential was granted the
// writing tools (the person's role is checked besides).
func mayWrite(ti *auth.TokenInfo) bool { return ti != nil && slices.Contains(ti.Scopes, scopeWrite) }

// resourceURL is the endpoint's canonical URI as the client reached it
// (the Host header has been checked against the allowed hosts).
func resourceURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/api/v1/workspaces/" + r.PathValue("ws") + "/mcp"
}

func metadataURL(r *http.Request) string {
	u := resourceURL(r)
	i := strings.Index(u, "/api/")
	return u[:i] + metadataPrefix + u[i:]
}

// serveMetadata answers RFC 9728 protected-resource metadata: the bearer
// token goes in the header, and the authorization server (Deps.Issuer,
// host/oauthserver) issues tokens for it; API tokens work besides.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodOptions {
		w.Header().Set("Allow", "GET, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var servers []string
	if s.d.Issuer != "" {
		servers = []string{s.d.Issuer}
	}
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resourceURL(r),
		AuthorizationServers:   servers,
		ScopesSupported:        []string{scopeRead, scopeWrite},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agenthost workspace " + r.PathValue("ws"),
		ResourceDocumentation:  "https://github.com/agenthost/agenthost/blob/main/docs/mcp.md",
	}).ServeHTTP(w, r)
}

// writeError answers a refusal of the store as a JSON problem with the
// status it stands for.
func writeError(w http.ResponseWriter, err error) {
	status := status(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		msg = "internal error"
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(status), "status": status, "detail": msg})
}

// status is the HTTP status a store error stands for.
func status(err error) int {
	switch {
	case errors.Is(err, tenancy.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, tenancy.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, tenancy.ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, tenancy.ErrInvalid), errors.Is(err, tools.ErrBadSet):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
