package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// Passkeys runs passkey ceremonies (host/passkey's Service).
type Passkeys interface {
	BeginRegistration(ctx context.Context, p tenancy.Principal) (string, *protocol.CredentialCreation, error)
	FinishRegistration(ctx context.Context, p tenancy.Principal, ceremonyID, name string, response []byte) (store.Passkey, error)
	BeginSignIn(ctx context.Context, email string) (string, *protocol.CredentialAssertion, error)
	FinishSignIn(ctx context.Context, ceremonyID string, response []byte) (tenancy.User, store.Passkey, error)
	BeginInvitation(ctx context.Context, secret string) (string, *protocol.CredentialCreation, string, error)
	FinishInvitation(ctx context.Context, secret, ceremonyID, name string, response []byte) (tenancy.User, store.Passkey, error)
	List(ctx context.Context, p tenancy.Principal) ([]store.Passkey, error)
	Remove(ctx context.Context, p tenancy.Principal, passkeyID string) (store.Passkey, error)
	BeginSecondFactor(ctx context.Context, p tenancy.Principal) (string, *protocol.CredentialAssertion, error)
	FinishSecondFactor(ctx context.Context, p tenancy.Principal, ceremonyID string, response []byte) (store.Passkey, error)
}

// Audit actions of people management and self-service settings (sign-ins,
// memberships and tokens use package audit's names).
const (
	AuditPasskeyAdded   = "passkey.added"
	AuditPasskeyRemoved = "passkey.removed"
	// Second factor (secondfactor.go): the tenant setting changed, a
	// pending session's passkey proved or refused, the step given up.
	AuditSecondFactorSetting   = "second_factor.setting_changed"
	AuditSecondFactorPassed    = "second_factor.passed"
	AuditSecondFactorFailed    = "second_factor.failed"
	AuditSecondFactorCancelled = "second_factor.cancelled"
	AuditUserDeactivated       = "user.deactivated"
	AuditUserReactivated       = "user.reactivated"
	AuditUserAdminChanged      = "user.admin_changed"
	AuditSessionEnded          = "session.ended"
	AuditInvitationUsed        = "invitation.accepted"
	auditViaPasskey            = "passkey"
	maxCredentialJSONBytes     = 64 << 10
)

// recordAs appends to the audit log as p (who may not be the request's principal yet: a sign-in), from the request's address; a
// lost record is logged and the change stands (package audit).
func recordAs(c *fiber.Ctx, r audit.Recorder, p tenancy.Principal, e audit.Entry) {
	if r == nil {
		return
	}
	if e.TenantID == "" {
		e.TenantID = p.TenantID
	}
	if e.Actor.Kind == "" {
		e.Actor = audit.Actor{Kind: audit.ActorUser, ID: p.UserID, Via: via(c)}
	}
	e.IP, e.UserAgent = c.IP(), c.Get(fiber.HeaderUserAgent)
	if err := r.Record(c.UserContext(), e); err != nil {
		slog.Default().Error("audit record lost", "action", e.Action, "err", err)
	}
}

// via says how the request authenticated: a bearer token or the UI's
// session cookie.
func via(c *fiber.Ctx) string {
	if strings.HasPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ") {
		return audit.ViaToken
	}
	return audit.ViaSession
}

// ceremonyStart answers the start of a passkey ceremony: its id, and the
// options for navigator.credentials.create or .get (their publicKey member).
type ceremonyStart struct {
	CeremonyID string `json:"ceremonyId"`
	Options    any    `json:"options"`
	// Email is the invited address (invitation ceremonies).
	Email string `json:"email,omitempty"`
}

// ceremonyFinish is the answer of the browser: the PublicKeyCredential
// (toJSON) and, for a registration, the passkey's name.
type ceremonyFinish struct {
	CeremonyID string          `json:"ceremonyId"`
	Name       string          `json:"name"`
	Credential json.RawMessage `json:"credential"`
	// Invitation is the invitation link's secret (invitation ceremonies).
	Invitation string `json:"invitation"`
}

func decodeFinish(c *fiber.Ctx) (ceremonyFinish, error) {
	var r ceremonyFinish
	if len(c.Body()) > maxCredentialJSONBytes {
		return r, fmt.Errorf("%w: the passkey answer is larger than %d bytes", tenancy.ErrInvalid, maxCredentialJSONBytes)
	}
	if err := decodeJSON(c, &r); err != nil {
		return r, err
	}
	if r.CeremonyID == "" || len(r.Credential) == 0 {
		return r, fmt.Errorf("%w: ceremonyId and credential are required", tenancy.ErrInvalid)
	}
	return r, nil
}

// handlePasskeySignInOptions is POST /session/passkey/options: a sign-in
// ceremony, narrowed to a person when an e-mail address is given.
func handlePasskeySignInOptions(pk Passkeys) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := webui.SameOrigin(c); err != nil {
			return err
		}
		var r struct {
			Email string `json:"email"`
		}
		if len(c.Body()) > 0 {
			if err := decodeJSON(c, &r); err != nil {
				return err
			}
		}
		id, opts, err := pk.BeginSignIn(c.UserContext(), r.Email)
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(ceremonyStart{CeremonyID: id, Options: opts.Response})
	}
}

// handlePasskeySignIn is POST /session/passkey: the assertion; a verified
// one opens a session (the cookie) as POST /session does.
func handlePasskeySignIn(pk Passkeys, ui *webui.UI, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := webui.SameOrigin(c); err != nil {
			return err
		}
		r, err := decodeFinish(c)
		if err != nil {
			return err
		}
		u, k, err := pk.FinishSignIn(c.UserContext(), r.CeremonyID, r.Credential)
		if err != nil {
			return err
		}
		p := tenancy.Principal{TenantID: u.TenantID, UserID: u.ID, Admin: u.Admin}
		recordAs(c, rec, p, audit.Entry{Action: audit.SignInSucceeded, Actor: audit.Actor{Kind: audit.ActorUser, ID: u.ID, Via: auditViaPasskey},
			TargetType: "passkey", TargetID: k.ID, Detail: audit.Detail(map[string]any{"passkey": k.Name, "email": u.Email})})
		return ui.SignInAs(c, u.ID, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey, Subject: k.ID})
	}
}

// handleInvitationPasskeyOptions is POST /invitation/passkey/options: a
// registration for the person an invitation link invites.
func handleInvitationPasskeyOptions(pk Passkeys) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := webui.SameOrigin(c); err != nil {
			return err
		}
		var r struct {
			Invitation string `json:"invitation"`
		}
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		id, opts, email, err := pk.BeginInvitation(c.UserContext(), strings.TrimSpace(r.Invitation))
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(ceremonyStart{CeremonyID: id, Options: opts.Response, Email: email})
	}
}

// handleInvitationPasskey is POST /invitation/passkey: the new passkey;
// the invitation is accepted and the person signed in.
func handleInvitationPasskey(pk Passkeys, ui *webui.UI, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := webui.SameOrigin(c); err != nil {
			return err
		}
		r, err := decodeFinish(c)
		if err != nil {
			return err
		}
		u, k, err := pk.FinishInvitation(c.UserContext(), strings.TrimSpace(r.Invitation), r.CeremonyID, r.Name, r.Credential)
		if err != nil {
			return err
		}
		p := tenancy.Principal{TenantID: u.TenantID, UserID: u.ID, Admin: u.Admin}
		actor := audit.Actor{Kind: audit.ActorUser, ID: u.ID, Via: auditViaPasskey}
		recordAs(c, rec, p, audit.Entry{Action: AuditInvitationUsed, Actor: actor, TargetType: "user", TargetID: u.ID,
			Detail: audit.Detail(map[string]any{"email": u.Email, "method": "passkey"})})
		recordAs(c, rec, p, audit.Entry{Action: AuditPasskeyAdded, Actor: actor, TargetType: "passkey", TargetID: k.ID,
			Detail: audit.Detail(map[string]any{"name": k.Name, "user": u.ID})})
		recordAs(c, rec, p, audit.Entry{Action: audit.SignInSucceeded, Actor: actor, TargetType: "passkey", TargetID: k.ID,
			Detail: audit.Detail(map[string]any{"passkey": k.Name, "email": u.Email})})
		return ui.SignInAs(c, u.ID, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey, Subject: k.ID})
	}
}

func handleListPasskeys(pk Passkeys) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := pk.List(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

func handlePasskeyOptions(pk Passkeys) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, opts, err := pk.BeginRegistration(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(ceremonyStart{CeremonyID: id, Options: opts.Response})
	}
}

func handleAddPasskey(pk Passkeys, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		r, err := decodeFinish(c)
		if err != nil {
			return err
		}
		p := principal(c)
		k, err := pk.FinishRegistration(c.UserContext(), p, r.CeremonyID, r.Name, r.Credential)
		if err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: AuditPasskeyAdded, TargetType: "passkey", TargetID: k.ID,
			Detail: audit.Detail(map[string]any{"name": k.Name, "user": p.UserID})})
		return c.Status(fiber.StatusCreated).JSON(k)
	}
}

func handleRemovePasskey(pk Passkeys, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		k, err := pk.Remove(c.UserContext(), p, c.Params("id"))
		if err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: AuditPasskeyRemoved, TargetType: "passkey", TargetID: k.ID,
			Detail: audit.Detail(map[string]any{"name": k.Name, "user": p.UserID})})
		return c.SendStatus(fiber.StatusNoContent)
	}
}
