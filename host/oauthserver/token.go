package oauthserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// clientID is the public client of a token or revocation request: the
// client_id field, or HTTP Basic with an empty password (RFC 6749 section
// 2.3.1). This server issues no secrets, so one presented is refused.
func clientID(c *fiber.Ctx) (string, bool) {
	id := c.FormValue("client_id")
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		raw, ok := strings.CutPrefix(h, "Basic ")
		b, err := base64.StdEncoding.DecodeString(raw)
		user, pass, found := strings.Cut(string(b), ":")
		if !ok || err != nil || !found || pass != "" || (id != "" && id != user) {
			return "", false
		}
		id = user
	}
	if c.FormValue("client_secret") != "" {
		return "", false
	}
	return id, id != ""
}

// handleToken is the token endpoint: the authorization code grant (with
// the PKCE verifier) and the refresh token grant (rotation).
func (s *Server) handleToken(c *fiber.Ctx) error {
	id, ok := clientID(c)
	if !ok {
		return oauthError(c, fiber.StatusUnauthorized, "invalid_client", "a public client sends its client_id and no secret")
	}
	ttl := store.TokenTTLs{Access: s.cfg.AccessTTL, Refresh: s.cfg.RefreshTTL}
	ctx := c.UserContext()
	var tok store.OAuthTokens
	var err error
	switch c.FormValue("grant_type") {
	case "authorization_code":
		// The code is spent first: a wrong verifier or redirect URI costs
		// the code, so none can be guessed at.
		code, terr := s.d.Store.TakeOAuthCode(ctx, c.FormValue("code"))
		if terr != nil {
			return s.grantError(c, terr)
		}
		g := code.Grant
		switch {
		case g.ClientID != id:
			return oauthError(c, fiber.StatusBadRequest, "invalid_grant", "the code was issued to another client")
		case c.FormValue("redirect_uri") != code.RedirectURI:
			return oauthError(c, fiber.StatusBadRequest, "invalid_grant", "redirect_uri is not the authorization request's")
		case !verifierMatches(c.FormValue("code_verifier"), code.Challenge):
			return oauthError(c, fiber.StatusBadRequest, "invalid_grant", "the PKCE code_verifier does not match the code_challenge")
		case c.FormValue("resource") != "" && c.FormValue("resource") != g.Resource:
			return oauthError(c, fiber.StatusBadRequest, "invalid_target", "resource is not the authorization request's")
		}
		tok, err = s.d.Store.IssueOAuthTokens(ctx, g.ID, ttl)
	case "refresh_token":
		tok, err = s.d.Store.RefreshOAuthTokens(ctx, id, c.FormValue("refresh_token"), ttl)
		if err == nil && c.FormValue("resource") != "" && c.FormValue("resource") != tok.Grant.Resource {
			// The new tokens stand (the old refresh token is spent); the
			// client learns it asked for another resource.
			return oauthError(c, fiber.StatusBadRequest, "invalid_target", "resource is not the grant's")
		}
	default:
		return oauthError(c, fiber.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
	if err != nil {
		return s.grantError(c, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Pragma", "no-cache")
	return c.JSON(fiber.Map{
		"access_token": tok.Access, "token_type": "Bearer", "expires_in": int(time.Until(tok.AccessExpiresAt).Round(time.Second).Seconds()),
		"refresh_token": tok.Refresh, "scope": strings.Join(tok.Grant.Scopes, " "),
	})
}

// grantError answers a refused code or refresh token as invalid_grant; a
// reuse is recorded, since it revoked a grant.
func (s *Server) grantError(c *fiber.Ctx, err error) error {
	var reuse *store.OAuthReuseError
	if errors.As(err, &reuse) {
		g := reuse.Grant
		s.d.Logger.Warn("oauth: a code or refresh token was presented twice; its grant is revoked", "grant", g.ID, "client", g.ClientID, "ip", c.IP())
		s.record(c, audit.Entry{TenantID: g.TenantID, Actor: audit.Actor{Kind: audit.ActorSystem}, Action: audit.MCPClientReuse,
			TargetType: "mcp_client", TargetID: g.ID, WorkspaceID: g.WorkspaceID,
			Detail: audit.Detail(map[string]any{"clientId": g.ClientID, "clientName": g.ClientName, "userId": g.UserID})})
	}
	if errors.Is(err, tenancy.ErrUnauthenticated) || errors.Is(err, tenancy.ErrNotFound) {
		return oauthError(c, fiber.StatusBadRequest, "invalid_grant", strings.TrimPrefix(err.Error(), tenancy.ErrUnauthenticated.Error()+": "))
	}
	return err
}

// verifierMatches checks a PKCE verifier against its S256 challenge
// (RFC 7636 section 4.6); the verifier is 43 to 128 characters.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// handleRevoke is token revocation (RFC 7009): the answer is 200 whether
// the token was known or not, so it tells nobody about others' tokens.
func (s *Server) handleRevoke(c *fiber.Ctx) error {
	id, ok := clientID(c)
	if !ok {
		return oauthError(c, fiber.StatusUnauthorized, "invalid_client", "a public client sends its client_id and no secret")
	}
	tok := c.FormValue("token")
	if tok == "" {
		return oauthError(c, fiber.StatusBadRequest, "invalid_request", "token is required")
	}
	g, err := s.d.Store.RevokeOAuthToken(c.UserContext(), id, tok)
	if err != nil {
		return err
	}
	if g != nil {
		s.record(c, audit.Entry{TenantID: g.TenantID, Actor: audit.Actor{Kind: audit.ActorUser, ID: g.UserID, Via: audit.ViaToken},
			Action: audit.MCPClientRevoked, TargetType: "mcp_client", TargetID: g.ID, WorkspaceID: g.WorkspaceID,
			Detail: audit.Detail(map[string]any{"clientId": g.ClientID, "clientName": g.ClientName, "by": "client"})})
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.SendStatus(fiber.StatusOK)
}
