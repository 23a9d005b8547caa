package webui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// FirstRun is what the setup page needs of the store: a fresh server has no
// tenant, and whoever holds the setup link its host printed creates the
// first organisation and becomes its admin.
type FirstRun interface {
	NeedsSetup(ctx context.Context) (bool, error)
	CompleteSetup(ctx context.Context, secret, org, email, name string, tokenTTL time.Duration) (store.FirstRun, error)
}

// setupRequest is POST /api/v1/setup's body.
type setupRequest struct {
	Link         string `json:"link"`
	Organisation string `json:"organisation"`
	Email        string `json:"email"`
	Name         string `json:"name"`
}

// setupState is GET /api/v1/setup's answer.
type setupState struct {
	Needed bool `json:"needed"`
}

// setupDone is what a completed setup answers: the admin's session, and
// the API token it was opened with, shown this once (for programs and the
// command line; the browser needs only the cookie).
type setupDone struct {
	sessionInfo
	Token string `json:"token"`
}

// HandleSetupState answers whether the server still waits for its setup,
// so the page can lead a first visitor to the link in the log.
func (u *UI) HandleSetupState() fiber.Handler {
	return func(c *fiber.Ctx) error {
		needed := false
		if u.cfg.Setup != nil {
			var err error
			if needed, err = u.cfg.Setup.NeedsSetup(c.UserContext()); err != nil {
				return err
			}
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(setupState{Needed: needed})
	}
}

// HandleSetup uses a setup link: it makes the organisation, its admin and a
// first workspace, and signs the browser in as the admin.
func (u *UI) HandleSetup(decode func(*fiber.Ctx, any) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := sameOrigin(c); err != nil {
			return err
		}
		if u.cfg.Setup == nil {
			return fmt.Errorf("%w: this server is set up by its operator (agenthost admin bootstrap)", tenancy.ErrNotFound)
		}
		var r setupRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		if strings.TrimSpace(r.Organisation) == "" {
			return fmt.Errorf("%w: the organisation's name is required", tenancy.ErrInvalid)
		}
		run, err := u.cfg.Setup.CompleteSetup(c.UserContext(), strings.TrimSpace(r.Link), r.Organisation, r.Email, r.Name, u.cfg.SetupTokenTTL)
		if err != nil {
			return err
		}
		s, secret, err := u.sessions.OpenSession(c.UserContext(), run.Token, u.cfg.SessionTTL)
		if err != nil {
			return err
		}
		u.setCookies(c, secret, s.ExpiresAt, nil)
		info, err := u.info(c.UserContext(), s, nil)
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.Status(fiber.StatusCreated).JSON(setupDone{sessionInfo: info, Token: run.Token})
	}
}
