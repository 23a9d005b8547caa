package api

import (
	"errors"
	"html"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// handleConnectionCallback is GET /connections/callback, where the
// provider sends the user's browser back (the OAuth redirect URI). The
// state was bound to the user who started the grant, so a code another
// session smuggles in is refused.
//
// It answers two kinds of caller. An API client (it sends Authorization)
// gets the connection as JSON (201) or a problem, as on every route. A
// browser (no Authorization: the UI's session cookie) is sent back to the
// workspace UI's Connections view with the outcome in the query,
// /connections?connection=ok&provider=<provider> or
// /connections?connection=error&reason=<reason>, and never a code, token
// or state.
//
// The session cookie is SameSite=Strict, so a browser arriving from the
// provider's site (a cross-site navigation) does not send it. Such a
// request first gets a page that loads the callback again from this site
// (a meta refresh, no script), and that request carries the cookie.
func handleConnectionCallback(s Connections, a Authenticator, ui *webui.UI, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if c.Get(fiber.HeaderAuthorization) != "" || ui == nil {
			p, _, err := authenticate(c, a, ui)
			if err != nil {
				return err
			}
			if e := c.Query("error"); e != "" {
				return problem(c, fiber.StatusBadRequest, "Authorization refused", e+": "+c.Query("error_description"))
			}
			out, err := s.CompleteAuthorization(c.UserContext(), p, c.Query("state"), c.Query("code"))
			if err != nil {
				return err
			}
			recordConnection(c, rec, p, out)
			return c.Status(fiber.StatusCreated).JSON(out)
		}
		// The code is in this URL: no page loaded from here passes it on.
		c.Set("Referrer-Policy", "no-referrer")
		c.Set(fiber.HeaderCacheControl, "no-store")
		p, has, err := ui.Principal(c)
		if !has {
			if c.Query("resumed") != "" {
				return backToUI(c, "", "signed_out")
			}
			return resumePage(c)
		}
		if err != nil {
			return backToUI(c, "", "signed_out")
		}
		if e := c.Query("error"); e != "" {
			return backToUI(c, "", providerReason(e))
		}
		out, err := s.CompleteAuthorization(c.UserContext(), p, c.Query("state"), c.Query("code"))
		switch {
		case err == nil:
			recordConnection(c, rec, p, out)
			return backToUI(c, out.Provider, "")
		case errors.Is(err, tenancy.ErrNotFound):
			// Unknown, used, expired, or another user's state.
			return backToUI(c, "", "expired")
		case errors.Is(err, tenancy.ErrInvalid):
			return backToUI(c, "", "invalid")
		default:
			// The provider refused the code (nothing was stored).
			return backToUI(c, "", "rejected")
		}
	}
}

// backToUI redirects the browser to the workspace UI with the outcome.
func backToUI(c *fiber.Ctx, provider, reason string) error {
	q := url.Values{}
	if reason == "" {
		q.Set("connection", "ok")
		q.Set("provider", provider)
	} else {
		q.Set("connection", "error")
		q.Set("reason", reason)
	}
	return c.Redirect("/connections?"+q.Encode(), fiber.StatusSeeOther)
}

// resumePage loads the callback again from this site, marked resumed so
// that a browser that still sends no session is not bounced for ever.
func resumePage(c *fiber.Ctx) error {
	q := url.Values{"resumed": {"1"}}
	for _, k := range []string{"state", "code", "error", "error_description"} {
		if v := c.Query(k); v != "" {
			q.Set(k, v)
		}
	}
	target := html.EscapeString(c.Path() + "?" + q.Encode())
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	return c.SendString(`<!doctype html><html lang="en"><head><meta charset="utf-8">` +
		`<meta http-equiv="refresh" content="0;url=` + target + `"><title>agenthost</title></head>` +
		`<body><p><a href="` + target + `">Continue to agenthost</a></p></body></html>`)
}

// providerReason keeps an OAuth error code (RFC 6749 section 4.1.2.1:
// access_denied, …) as a short word; anything else the provider sent is
// not echoed.
func providerReason(e string) string {
	if len(e) > 40 || e == "" || strings.Trim(e, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return "provider_error"
	}
	return e
}
