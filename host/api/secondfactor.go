package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
)

// SecondFactorSettings keeps each tenant's "require a passkey as second
// factor" setting (the store).
type SecondFactorSettings interface {
	PasskeySecondFactor(ctx context.Context, tenantID string) (bool, error)
	SetPasskeySecondFactor(ctx context.Context, p tenancy.Principal, on bool) error
}

// secondFactorSetting is GET and PUT /api/v1/tenant/second-factor's body.
type secondFactorSetting struct {
	// PasskeyRequired: browser sign-ins by API token or identity provider
	// wait for a passkey of the person's before they can do anything.
	PasskeyRequired bool `json:"passkeyRequired"`
}

func handleGetSecondFactorSetting(st SecondFactorSettings) fiber.Handler {
	return func(c *fiber.Ctx) error {
		on, err := st.PasskeySecondFactor(c.UserContext(), principal(c).TenantID)
		if err != nil {
			return err
		}
		return c.JSON(secondFactorSetting{PasskeyRequired: on})
	}
}

func handleSetSecondFactorSetting(st SecondFactorSettings, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r secondFactorSetting
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		p := principal(c)
		if err := st.SetPasskeySecondFactor(c.UserContext(), p, r.PasskeyRequired); err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: AuditSecondFactorSetting, TargetType: "tenant", TargetID: p.TenantID,
			Detail: audit.Detail(map[string]any{"passkeyRequired": r.PasskeyRequired})})
		return c.JSON(r)
	}
}

// secondFactorState is GET /api/v1/session/second-factor: what the pending
// session's person has to do next.
type secondFactorState struct {
	// Next is "assert" (prove a passkey) or "register" (the person has
	// none: register one, then prove it).
	Next string `json:"next"`
	CSRF string `json:"csrf"`
}

// secondFactorRoutes serve a session that waits for its second factor
// (webui.UI.PendingSession); nothing else does. A person without a passkey
// may register one on it, and only then: otherwise a stolen first factor
// could add the thief's passkey.
func secondFactorRoutes(v1 fiber.Router, d Deps) {
	pk, ui, rec := d.Passkeys, d.UI, d.Audit
	pending := func(c *fiber.Ctx) (tenancy.Principal, bool, error) {
		s, err := ui.PendingSession(c)
		if err != nil {
			return tenancy.Principal{}, false, err
		}
		keys, err := pk.List(c.UserContext(), s.Principal)
		if err != nil {
			return tenancy.Principal{}, false, err
		}
		return s.Principal, len(keys) > 0, nil
	}
	v1.Get("/session/second-factor", func(c *fiber.Ctx) error {
		s, err := ui.PendingSession(c)
		if err != nil {
			return err
		}
		keys, err := pk.List(c.UserContext(), s.Principal)
		if err != nil {
			return err
		}
		st := secondFactorState{Next: "assert", CSRF: s.CSRF}
		if len(keys) == 0 {
			st.Next = "register"
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(st)
	})
	v1.Post("/session/second-factor/options", func(c *fiber.Ctx) error {
		p, _, err := pending(c)
		if err != nil {
			return err
		}
		id, opts, err := pk.BeginSecondFactor(c.UserContext(), p)
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(ceremonyStart{CeremonyID: id, Options: opts.Response})
	})
	v1.Post("/session/second-factor", func(c *fiber.Ctx) error {
		s, err := ui.PendingSession(c)
		if err != nil {
			return err
		}
		r, err := decodeFinish(c)
		if err != nil {
			return err
		}
		k, err := pk.FinishSecondFactor(c.UserContext(), s.Principal, r.CeremonyID, r.Credential)
		if err != nil {
			if errors.Is(err, tenancy.ErrUnauthenticated) {
				recordAs(c, rec, s.Principal, audit.Entry{Action: AuditSecondFactorFailed, TargetType: "user", TargetID: s.Principal.UserID,
					Detail: audit.Detail(map[string]any{"reason": err.Error(), "method": s.Method()})})
			}
			return err
		}
		recordAs(c, rec, s.Principal, audit.Entry{Action: AuditSecondFactorPassed, TargetType: "passkey", TargetID: k.ID,
			Detail: audit.Detail(map[string]any{"passkey": k.Name, "method": s.Method()})})
		return ui.CompleteSecondFactor(c, s)
	})
	v1.Delete("/session/second-factor", func(c *fiber.Ctx) error {
		s, err := ui.PendingSession(c)
		if err != nil {
			return err
		}
		recordAs(c, rec, s.Principal, audit.Entry{Action: AuditSecondFactorCancelled, TargetType: "user", TargetID: s.Principal.UserID,
			Detail: audit.Detail(map[string]any{"method": s.Method()})})
		return ui.CancelSecondFactor(c)
	})
	v1.Post("/session/second-factor/passkeys/options", func(c *fiber.Ctx) error {
		p, has, err := pending(c)
		if err != nil {
			return err
		}
		if has {
			return errRegisterOnPending
		}
		id, opts, err := pk.BeginRegistration(c.UserContext(), p)
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(ceremonyStart{CeremonyID: id, Options: opts.Response})
	})
	v1.Post("/session/second-factor/passkeys", func(c *fiber.Ctx) error {
		p, has, err := pending(c)
		if err != nil {
			return err
		}
		if has {
			return errRegisterOnPending
		}
		r, err := decodeFinish(c)
		if err != nil {
			return err
		}
		k, err := pk.FinishRegistration(c.UserContext(), p, r.CeremonyID, r.Name, r.Credential)
		if err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: AuditPasskeyAdded, TargetType: "passkey", TargetID: k.ID,
			Detail: audit.Detail(map[string]any{"name": k.Name, "user": p.UserID, "pendingSession": true})})
		return c.Status(fiber.StatusCreated).JSON(k)
	})
}

// errRegisterOnPending: a pending session registers a first passkey only.
var errRegisterOnPending = fmt.Errorf("%w: you have a passkey already: prove it to finish signing in (a pending session registers a first passkey only)", tenancy.ErrForbidden)
