package oauthserver

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// authRequest is an authorization request whose client and redirect URI
// have been checked: from here on its errors go back to the client.
type authRequest struct {
	client                   store.OAuthClient
	redirectURI, state       string
	challenge, resource      string
	resourceWS               string
	scopes                   []string
	params                   url.Values // what the consent form sends back
	responseType, method, sc string
}

// resourcePath is the path of a workspace's MCP endpoint (host/mcpserver).
var resourcePath = regexp.MustCompile(`^/api/v1/workspaces/([^/]+)/mcp$`)

// pageError is a request the server cannot send back to the client (no
// valid client or redirect URI): the person sees it, nothing is redirected.
type pageError struct{ msg string }

// redirectError is an error the client gets at its redirect URI.
type redirectError struct{ code, desc string }

// parse checks an authorization request. Until the client and its
// redirect URI are known good, errors are shown to the person and never
// redirected (no open redirect); after, they are the client's.
func (s *Server) parse(c *fiber.Ctx, get func(string) string) (authRequest, *pageError, *redirectError) {
	var r authRequest
	id := get("client_id")
	if id == "" {
		return r, &pageError{"The request names no client (client_id)."}, nil
	}
	cl, err := s.client(c.UserContext(), id)
	if err != nil {
		if !errors.Is(err, errBadClient) {
			s.d.Logger.Error("oauth: client", "client", id, "err", err)
			return r, &pageError{"The client could not be looked up; try again."}, nil
		}
		return r, &pageError{err.Error()}, nil
	}
	r.client = cl
	// Always named (and so always sent again to the token endpoint, which
	// compares the two): no default to one registered.
	r.redirectURI = get("redirect_uri")
	if r.redirectURI == "" {
		return r, &pageError{"The request names no redirect URI (redirect_uri)."}, nil
	}
	if !redirectMatches(cl.RedirectURIs, r.redirectURI) {
		return r, &pageError{fmt.Sprintf("The redirect URI %q is not one the client %q registered.", r.redirectURI, cl.Name)}, nil
	}
	r.state = get("state")
	r.responseType, r.challenge, r.method, r.resource, r.sc = get("response_type"), get("code_challenge"), get("code_challenge_method"), get("resource"), get("scope")
	if r.responseType != "code" {
		return r, nil, &redirectError{"unsupported_response_type", "response_type must be code"}
	}
	// OAuth 2.1 and the MCP spec: PKCE with S256, always.
	if r.method != "S256" || len(r.challenge) != 43 {
		return r, nil, &redirectError{"invalid_request", "PKCE is required: code_challenge (43 characters) with code_challenge_method S256"}
	}
	if r.resource != "" {
		u, err := url.Parse(r.resource)
		m := []string(nil)
		if err == nil {
			m = resourcePath.FindStringSubmatch(u.Path)
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" || m == nil {
			return r, nil, &redirectError{"invalid_target", "resource must be the URL of a workspace's MCP endpoint (…/api/v1/workspaces/ID/mcp)"}
		}
		r.resourceWS = m[1]
	}
	// Scopes not offered here are left out (RFC 6749 section 3.3 lets the
	// server grant less than asked); mcp:read is always part of a grant.
	r.scopes = []string{ScopeRead}
	if slices.Contains(strings.Fields(r.sc), ScopeWrite) {
		r.scopes = append(r.scopes, ScopeWrite)
	}
	r.params = url.Values{}
	for _, k := range []string{"client_id", "redirect_uri", "state", "response_type", "code_challenge", "code_challenge_method", "resource", "scope"} {
		if v := get(k); v != "" {
			r.params.Set(k, v)
		}
	}
	return r, nil, nil
}

// back sends the browser to the client's redirect URI with params, the
// state and the issuer (RFC 9207).
func (s *Server) back(c *fiber.Ctx, r authRequest, params url.Values) error {
	u, _ := url.Parse(r.redirectURI)
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if r.state != "" {
		q.Set("state", r.state)
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(u.String(), fiber.StatusSeeOther)
}

func (s *Server) backError(c *fiber.Ctx, r authRequest, e *redirectError) error {
	return s.back(c, r, url.Values{"error": {e.code}, "error_description": {e.desc}})
}

// session is the person's live session, unless its second factor is
// pending.
func (s *Server) session(c *fiber.Ctx) (tenancy.Session, bool) {
	if s.d.Sessions == nil {
		return tenancy.Session{}, false
	}
	se, ok := s.d.Sessions.CurrentSession(c)
	return se, ok && !se.SecondFactorPending
}

// handleAuthorize serves GET /oauth/authorize: the person signs in if they
// have no session, then sees what the client asks and picks a workspace.
func (s *Server) handleAuthorize(c *fiber.Ctx) error {
	get := func(k string) string { return c.Query(k) }
	r, pe, re := s.parse(c, get)
	if pe != nil {
		return s.page(c, fiber.StatusBadRequest, "This sign-in cannot go on", html.EscapeString(pe.msg))
	}
	if re != nil {
		return s.backError(c, r, re)
	}
	se, ok := s.session(c)
	if !ok {
		return s.signInPage(c)
	}
	return s.consentPage(c, r, se)
}

// signInPage asks a person without a session to sign in, then brings them
// back to this same request.
func (s *Server) signInPage(c *fiber.Ctx) error {
	here := AuthorizePath + "?" + string(c.Request().URI().QueryString())
	var b strings.Builder
	b.WriteString(`<p>An application asks to use your agenthost workspace. Sign in first:</p><ul>`)
	if s.d.Providers != nil {
		for _, p := range s.d.Providers.Providers() {
			b.WriteString(`<li><a class="button" href="` + html.EscapeString(p.URL+"?return="+url.QueryEscape(here)) + `">Sign in with ` + html.EscapeString(p.Label) + `</a></li>`)
		}
	}
	// A session opened in another tab (a token, a passkey) counts once the
	// page is loaded again from this site (the cookie is SameSite=Strict,
	// so a navigation started by another site does not carry it).
	b.WriteString(`<li><a href="/" target="_blank" rel="noopener">Sign in in the workspace UI</a>, then <a href="` + html.EscapeString(here) + `">continue here</a>.</li></ul>`)
	return s.page(c, fiber.StatusOK, "Sign in to continue", b.String())
}

// consentPage shows the client's request: the person picks a workspace
// (the one the client named, if it did) and whether it may write.
func (s *Server) consentPage(c *fiber.Ctx, r authRequest, se tenancy.Session) error {
	ws, err := s.d.Store.Workspaces(c.UserContext(), se.Principal)
	if err != nil {
		return err
	}
	if r.resourceWS != "" {
		ws = slices.DeleteFunc(ws, func(w tenancy.Workspace) bool { return w.ID != r.resourceWS })
		if len(ws) == 0 {
			return s.page(c, fiber.StatusForbidden, "Not your workspace",
				"The application asks for a workspace you are not a member of. Sign in as someone who is, or ask for access.")
		}
	}
	if len(ws) == 0 {
		return s.page(c, fiber.StatusForbidden, "No workspace", "You are a member of no workspace the application could use.")
	}
	var b strings.Builder
	name := html.EscapeString(r.client.Name)
	b.WriteString(`<p><strong>` + name + `</strong> asks to use the tools of an agenthost workspace as you`)
	if r.client.ClientURI != "" {
		b.WriteString(` (<a href="` + html.EscapeString(r.client.ClientURI) + `" rel="noopener noreferrer" target="_blank">` + html.EscapeString(r.client.ClientURI) + `</a>)`)
	}
	b.WriteString(`. It will get back to <code>` + html.EscapeString(r.redirectURI) + `</code>.</p>`)
	if r.client.Kind == store.ClientRegistered {
		b.WriteString(`<p class="note">The application registered itself; its name is its own claim.</p>`)
	}
	b.WriteString(`<form method="post" action="` + AuthorizePath + `">`)
	for k, vs := range r.params {
		for _, v := range vs {
			b.WriteString(`<input type="hidden" name="` + html.EscapeString(k) + `" value="` + html.EscapeString(v) + `">`)
		}
	}
	b.WriteString(`<input type="hidden" name="csrf" value="` + html.EscapeString(se.CSRF) + `">`)
	b.WriteString(`<label>Workspace <select name="workspace">`)
	for _, w := range ws {
		b.WriteString(`<option value="` + html.EscapeString(w.ID) + `">` + html.EscapeString(w.Name) + `</option>`)
	}
	b.WriteString(`</select></label>`)
	b.WriteString(`<fieldset><legend>It may</legend><label><input type="checkbox" checked disabled> list the tools and call those that only read</label><br>`)
	checked := ""
	if slices.Contains(r.scopes, ScopeWrite) {
		checked = " checked"
	}
	b.WriteString(`<label><input type="checkbox" name="write" value="1"` + checked + `> call the tools that write or act (as far as your role allows)</label></fieldset>`)
	b.WriteString(`<p>Access lasts until you revoke it in your settings (Settings → MCP clients).</p>`)
	b.WriteString(`<button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></form>`)
	return s.page(c, fiber.StatusOK, "Allow "+r.client.Name+"?", b.String())
}

// handleConsent serves POST /oauth/authorize: the consent form's answer.
// The request is checked again from the form, as on the page; the form
// must carry the session's CSRF token and come from this origin.
func (s *Server) handleConsent(c *fiber.Ctx) error {
	get := func(k string) string { return c.FormValue(k) }
	r, pe, re := s.parse(c, get)
	if pe != nil {
		return s.page(c, fiber.StatusBadRequest, "This sign-in cannot go on", html.EscapeString(pe.msg))
	}
	if re != nil {
		return s.backError(c, r, re)
	}
	se, ok := s.session(c)
	if !ok {
		return s.signInPage(c)
	}
	if err := webui.SameOrigin(c); err != nil {
		return s.page(c, fiber.StatusForbidden, "Refused", html.EscapeString(err.Error()))
	}
	if got := c.FormValue("csrf"); got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(se.CSRF)) != 1 {
		return s.page(c, fiber.StatusForbidden, "Refused", "This form is stale or came from another page: start the sign-in again from the application.")
	}
	if c.FormValue("decision") != "allow" {
		return s.backError(c, r, &redirectError{"access_denied", "the person did not allow the access"})
	}
	ctx := c.UserContext()
	ws := c.FormValue("workspace")
	if r.resourceWS != "" && ws != r.resourceWS {
		return s.backError(c, r, &redirectError{"invalid_target", "the workspace chosen is not the resource's"})
	}
	_, write, err := s.d.Store.Levels(ctx, se.Principal, ws)
	if err != nil {
		if errors.Is(err, tenancy.ErrNotFound) {
			return s.page(c, fiber.StatusForbidden, "Not your workspace", "You are not a member of the workspace chosen.")
		}
		return err
	}
	scopes := []string{ScopeRead}
	// Never more than the person may: write only if chosen and allowed.
	if c.FormValue("write") == "1" && write != tenancy.None {
		scopes = append(scopes, ScopeWrite)
	}
	g, code, err := s.d.Store.AuthorizeOAuth(ctx, se.Principal, store.OAuthAuthorization{ClientID: r.client.ID, ClientName: r.client.Name,
		WorkspaceID: ws, Scopes: scopes, Resource: r.resource, RedirectURI: r.redirectURI, Challenge: r.challenge, TTL: s.cfg.CodeTTL})
	if err != nil {
		return err
	}
	s.record(c, audit.Entry{TenantID: se.Principal.TenantID, Actor: audit.Actor{Kind: audit.ActorUser, ID: se.Principal.UserID, Via: audit.ViaSession},
		Action: audit.MCPClientAuthorized, TargetType: "mcp_client", TargetID: g.ID, WorkspaceID: ws,
		Detail: audit.Detail(map[string]any{"clientId": r.client.ID, "clientName": r.client.Name, "scopes": scopes, "redirectUri": r.redirectURI})})
	return s.back(c, r, url.Values{"code": {code}})
}

// pageCSP allows the page nothing but its own inline style; no frame may
// hold it (a consent page in a frame is clickjacking). No form-action:
// browsers apply it to the redirect that follows the form, which goes to
// the client.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"

// page answers a page of the server's own; body is HTML already escaped.
func (s *Server) page(c *fiber.Ctx, status int, title, body string) error {
	c.Set("Content-Security-Policy", pageCSP)
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).SendString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
		`<title>` + html.EscapeString(title) + ` · agenthost</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}` +
		`fieldset,label{display:block;margin:1em 0}.note{color:#666}button{font:inherit;padding:.4em 1.2em}</style></head><body><h1>` +
		html.EscapeString(title) + `</h1>` + body + `</body></html>`)
}
