package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// signInWiring is sign-in through identity providers and invitations, as
// the signIn: section of the configuration file sets them up
// (docs/sso.md). The UI's session opener is attached after the UI is
// built, since the UI asks the service where a signed-out browser goes.
type signInWiring struct {
	svc *signin.Service // nil without providers
	inv *signin.Invitations
	ui  *webui.UI
}

// newSignIn builds the services of the signIn: section (cfg); without one
// there are no providers, and invitation links are shown to copy.
func newSignIn(cfg signin.Config, db *store.DB, logger *slog.Logger) (*signInWiring, error) {
	var err error
	w := &signInWiring{}
	rec := audit.NewLog(db, logger)
	if len(cfg.Providers) > 0 {
		if w.svc, err = signin.New(cfg, signin.Deps{Store: db, Sessions: w, Logger: logger, Audit: rec}); err != nil {
			return nil, err
		}
		for _, p := range w.svc.Config().Providers {
			// The URIs to register at the provider (never the secret).
			logger.Info("sign-in provider", "name", p.Name, "issuer", p.Issuer, "tenant", p.Tenant,
				"redirectURI", w.svc.RedirectURI(p.Name), "backChannelLogoutURI", w.svc.BackChannelLogoutURI(p.Name))
		}
	}
	var mail signin.Mailer
	if cfg.SMTP != nil {
		mail = signin.NewSMTPMailer(*cfg.SMTP)
	}
	w.inv = signin.NewInvitations(db, mail, w.svc, cfg)
	w.inv.Audit = rec
	return w, nil
}

// SignInUser opens the session through the UI (signin.Sessions).
func (w *signInWiring) SignInUser(c *fiber.Ctx, userID string, o tenancy.SessionOrigin) (tenancy.Session, error) {
	if w.ui == nil {
		return tenancy.Session{}, fmt.Errorf("signin: the UI is not attached")
	}
	return w.ui.SignInUser(c, userID, o)
}

// logoutURL is the UI's LogoutURL: the provider's end-session page.
func (w *signInWiring) logoutURL(ctx context.Context, s tenancy.Session) string {
	if w.svc == nil {
		return ""
	}
	return w.svc.LogoutURL(ctx, s)
}

// attach gives the service the UI's sessions.
func (w *signInWiring) attach(ui *webui.UI) { w.ui = ui }

// deps returns the API's sign-in dependencies (nil interfaces when absent).
func (w *signInWiring) deps() (api.SignIn, api.Invitations) {
	if w.svc == nil {
		return nil, w.inv
	}
	return w.svc, w.inv
}
