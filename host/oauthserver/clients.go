package oauthserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Limits of what a client may register or describe.
const (
	maxRegistration = 16 << 10 // bytes of a registration request
	maxDocument     = 5 << 10  // bytes of a client ID metadata document (SEP-991 suggests 5 KB)
	maxRedirectURIs = 10
	maxURI          = 2000
	maxName         = 200
	documentTimeout = 5 * time.Second
)

var errBadClient = errors.New("invalid client metadata")

// checkRedirectURI admits the redirect URIs of RFC 8252 and OAuth 2.1:
// https; http only to a loopback address (a native app's listener); or a
// private-use scheme in reverse-domain form (com.example.app:/cb). No
// fragment, no credentials; never javascript:, data: or file:.
func checkRedirectURI(raw string) error {
	if len(raw) > maxURI {
		return fmt.Errorf("%w: a redirect URI is longer than %d characters", errBadClient, maxURI)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("%w: redirect URI %q is not an absolute URI", errBadClient, raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") || u.User != nil {
		return fmt.Errorf("%w: redirect URI %q has a fragment or credentials", errBadClient, raw)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
		if u.Host == "" {
			return fmt.Errorf("%w: redirect URI %q has no host", errBadClient, raw)
		}
	case scheme == "http":
		if !loopback(u.Hostname()) {
			return fmt.Errorf("%w: redirect URI %q: plain http is for loopback addresses only (RFC 8252)", errBadClient, raw)
		}
	case strings.Contains(scheme, "."):
		// A private-use scheme (RFC 8252 section 7.1): a domain reversed.
	default:
		return fmt.Errorf("%w: redirect URI %q: the scheme %q is not allowed (https, http to loopback, or a reverse-domain scheme)", errBadClient, raw, u.Scheme)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redirectMatches reports whether the request's redirect URI is one the
// client registered: exactly, except that a loopback http URI may name
// any port (RFC 8252 section 7.3: a native app's listener gets its port
// when it starts).
func redirectMatches(registered []string, got string) bool {
	gu, err := url.Parse(got)
	if err != nil {
		return false
	}
	for _, r := range registered {
		if r == got {
			return true
		}
		ru, err := url.Parse(r)
		if err != nil || ru.Scheme != "http" || gu.Scheme != "http" || !loopback(ru.Hostname()) {
			continue
		}
		if ru.Hostname() == gu.Hostname() && ru.EscapedPath() == gu.EscapedPath() && ru.RawQuery == gu.RawQuery && gu.User == nil && gu.Fragment == "" {
			return true
		}
	}
	return false
}

// handleRegister is dynamic client registration (RFC 7591) for public
// clients: no secret is issued (PKCE binds the code to the client's
// request), so token_endpoint_auth_method is "none" whatever was asked
// (the RFC lets the server replace values, section 3.2.1).
func (s *Server) handleRegister(c *fiber.Ctx) error {
	if len(c.Body()) > maxRegistration {
		return oauthError(c, fiber.StatusRequestEntityTooLarge, "invalid_client_metadata", fmt.Sprintf("a registration is at most %d bytes", maxRegistration))
	}
	var m oauthex.ClientRegistrationMetadata
	if err := json.Unmarshal(c.Body(), &m); err != nil {
		return oauthError(c, fiber.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON object of client metadata: "+err.Error())
	}
	cl, err := clientFrom(m)
	if err != nil {
		code := "invalid_client_metadata"
		if strings.Contains(err.Error(), "redirect URI") {
			code = "invalid_redirect_uri"
		}
		return oauthError(c, fiber.StatusBadRequest, code, err.Error())
	}
	var b [18]byte
	rand.Read(b[:])
	cl.ID, cl.Kind = "ahcl_"+base64.RawURLEncoding.EncodeToString(b[:]), store.ClientRegistered
	cl.CreatedAt = time.Now().UTC()
	if err := s.d.Store.PutOAuthClient(c.UserContext(), cl); err != nil {
		return err
	}
	s.d.Logger.Info("oauth: client registered", "client", cl.ID, "name", cl.Name, "ip", c.IP())
	c.Set(fiber.HeaderCacheControl, "no-store")
	out := fiber.Map{
		"client_id": cl.ID, "client_id_issued_at": cl.CreatedAt.Unix(), "client_name": cl.Name,
		"redirect_uris": cl.RedirectURIs, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"scope": strings.Join(Scopes(), " "),
	}
	// Absent, not empty: an empty client_uri is no URL (the TypeScript
	// SDK's schema refuses the whole response).
	if cl.ClientURI != "" {
		out["client_uri"] = cl.ClientURI
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// clientFrom checks registered or documented metadata.
func clientFrom(m oauthex.ClientRegistrationMetadata) (store.OAuthClient, error) {
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > maxRedirectURIs {
		return store.OAuthClient{}, fmt.Errorf("%w: 1 to %d redirect URIs are needed", errBadClient, maxRedirectURIs)
	}
	for _, r := range m.RedirectURIs {
		if err := checkRedirectURI(r); err != nil {
			return store.OAuthClient{}, err
		}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return store.OAuthClient{}, fmt.Errorf("%w: grant type %q is not offered (authorization_code, refresh_token)", errBadClient, g)
		}
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return store.OAuthClient{}, fmt.Errorf("%w: response type %q is not offered (code)", errBadClient, r)
		}
	}
	name := strings.TrimSpace(m.ClientName)
	if utf8.RuneCountInString(name) > maxName || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return store.OAuthClient{}, fmt.Errorf("%w: the client name is longer than %d characters or has control characters", errBadClient, maxName)
	}
	if m.ClientURI != "" {
		if u, err := url.Parse(m.ClientURI); err != nil || u.Scheme != "https" || len(m.ClientURI) > maxURI {
			return store.OAuthClient{}, fmt.Errorf("%w: client_uri must be an https URL", errBadClient)
		}
	}
	if name == "" {
		name = "Unnamed MCP client"
	}
	return store.OAuthClient{Name: name, ClientURI: m.ClientURI, RedirectURIs: append([]string{}, m.RedirectURIs...)}, nil
}

// isDocumentID reports whether a client_id is a client ID metadata
// document's URL (SEP-991): https with a path.
func isDocumentID(id string) bool { return strings.HasPrefix(id, "https://") }

// documentURL checks a document's URL as SEP-991 asks: https, a path, no
// fragment, no credentials, no dot segments.
func documentURL(id string) (*url.URL, error) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil || len(id) > maxURI {
		return nil, fmt.Errorf("%w: client_id %q is not an https URL with a path", errBadClient, id)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, fmt.Errorf("%w: client_id %q has dot segments", errBadClient, id)
		}
	}
	return u, nil
}

// client finds the client of an authorization request: a registered one
// in the store, or a document's, fetched (through the egress guard) when
// not cached or cached longer than DocumentTTL.
func (s *Server) client(ctx context.Context, id string) (store.OAuthClient, error) {
	cached, err := s.d.Store.OAuthClientByID(ctx, id)
	switch {
	case err == nil && (cached.Kind == store.ClientRegistered || time.Since(cached.FetchedAt) < s.cfg.DocumentTTL):
		return cached, nil
	case err != nil && !errors.Is(err, tenancy.ErrNotFound):
		return store.OAuthClient{}, err
	case !isDocumentID(id):
		return store.OAuthClient{}, fmt.Errorf("%w: unknown client_id %q (register first)", errBadClient, id)
	case s.d.Documents == nil:
		return store.OAuthClient{}, fmt.Errorf("%w: this server takes no client ID metadata documents", errBadClient)
	}
	if _, err := documentURL(id); err != nil {
		return store.OAuthClient{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, documentTimeout)
	defer cancel()
	res, err := s.d.Documents.Do(ctx, egress.Request{Method: "GET", URL: id, Headers: map[string]string{"Accept": "application/json"},
		// A document answers at its own URL: a redirect elsewhere is refused.
		Redirect: func(egress.Hop) error {
			return errors.New("a client ID metadata document is not fetched through redirects")
		}})
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("%w: the client ID metadata document %s could not be fetched: %v", errBadClient, id, err)
	}
	if res.Status != 200 {
		return store.OAuthClient{}, fmt.Errorf("%w: the client ID metadata document %s answered %d", errBadClient, id, res.Status)
	}
	if len(res.Body) > maxDocument {
		return store.OAuthClient{}, fmt.Errorf("%w: the client ID metadata document %s is larger than %d bytes", errBadClient, id, maxDocument)
	}
	var doc struct {
		oauthex.ClientRegistrationMetadata
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		return store.OAuthClient{}, fmt.Errorf("%w: the client ID metadata document %s is not JSON: %v", errBadClient, id, err)
	}
	// SEP-991: the document names itself, holds no secret, and a public
	// client authenticates with none.
	if doc.ClientID != id {
		return store.OAuthClient{}, fmt.Errorf("%w: the document's client_id %q is not its URL %s", errBadClient, doc.ClientID, id)
	}
	if doc.ClientSecret != "" || (doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none") {
		return store.OAuthClient{}, fmt.Errorf("%w: the document asks for client authentication %q; this server serves public clients (none)", errBadClient, doc.TokenEndpointAuthMethod)
	}
	cl, err := clientFrom(doc.ClientRegistrationMetadata)
	if err != nil {
		return store.OAuthClient{}, err
	}
	cl.ID, cl.Kind, cl.FetchedAt = id, store.ClientDocument, time.Now().UTC()
	if err := s.d.Store.PutOAuthClient(ctx, cl); err != nil {
		return store.OAuthClient{}, err
	}
	return cl, nil
}
