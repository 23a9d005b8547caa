package oauthserver

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// metadata is the server's RFC 8414 document. The MCP spec (2025-11-25,
// "Authorization Server Metadata Discovery") has clients try RFC 8414 and
// OpenID Connect discovery and servers offer at least one: this server
// issues no ID tokens, so it is no OpenID provider and offers RFC 8414 only.
func (s *Server) metadata() map[string]any {
	iss := s.cfg.Issuer
	m := oauthex.AuthServerMeta{
		Issuer:                            iss,
		AuthorizationEndpoint:             iss + AuthorizePath,
		TokenEndpoint:                     iss + TokenPath,
		RegistrationEndpoint:              iss + RegistrationPath,
		RevocationEndpoint:                iss + RevocationPath,
		ScopesSupported:                   Scopes(),
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: []string{"none"},
		// Public clients only: PKCE (S256) stands in for a client secret.
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		ClientIDMetadataDocumentSupported:          s.d.Documents != nil,
		AuthorizationResponseIssParameterSupported: true,
		ServiceDocumentation:                       "https://github.com/agenthost/agenthost/blob/main/docs/mcp.md",
	}
	// The SDK's type always writes jwks_uri, which RFC 8414 requires only
	// of servers that have keys; this one signs nothing.
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	delete(out, "jwks_uri")
	return out
}

func (s *Server) handleMetadata(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.JSON(s.metadata())
}

// oauthError answers an RFC 6749 error (section 5.2) as JSON.
func oauthError(c *fiber.Ctx, status int, code, desc string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Pragma", "no-cache")
	if status == fiber.StatusUnauthorized {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="agenthost"`)
	}
	return c.Status(status).JSON(fiber.Map{"error": code, "error_description": desc})
}
