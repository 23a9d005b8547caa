package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// People is what people management (tenant admins) and a person's own
// settings need of the store. Everything is scoped by the caller's tenant.
type People interface {
	People(ctx context.Context, tenantID string) ([]store.Person, error)
	Person(ctx context.Context, tenantID, userID string) (store.Person, error)
	SetAdmin(ctx context.Context, tenantID, userID string, admin bool) error
	ActiveAdmins(ctx context.Context, tenantID string) (int, error)
	SetTenantMembership(ctx context.Context, tenantID string, m tenancy.Membership) error
	DeactivateUser(ctx context.Context, tenantID, userID string) error
	ReactivateUser(ctx context.Context, tenantID, userID string) error

	UserSessions(ctx context.Context, userID string) ([]tenancy.Session, error)
	EndUserSession(ctx context.Context, userID, sessionID string) error
	EndOtherSessions(ctx context.Context, userID, keepID string) (int, error)
	CreateToken(ctx context.Context, userID, name string, expires *time.Time) (tenancy.Token, string, error)
	UserTokens(ctx context.Context, userID string) ([]tenancy.Token, error)
	RevokeToken(ctx context.Context, p tenancy.Principal, tokenID string) error

	UserPreferences(ctx context.Context, p tenancy.Principal) (tenancy.Preferences, error)
	SetUserPreferences(ctx context.Context, p tenancy.Principal, prefs tenancy.Preferences) (tenancy.Preferences, error)
}

func requireAdmin(c *fiber.Ctx) (tenancy.Principal, error) {
	p := principal(c)
	if !p.Admin {
		return p, fmt.Errorf("%w: people are managed by the tenant's admins", tenancy.ErrForbidden)
	}
	return p, nil
}

func handleListPeople(pe People) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := requireAdmin(c)
		if err != nil {
			return err
		}
		out, err := pe.People(c.UserContext(), p.TenantID)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// personPatch is PATCH /people/:id's body: what to change (absent: as is).
type personPatch struct {
	Admin       *bool `json:"admin"`
	Deactivated *bool `json:"deactivated"`
}

// handlePatchPerson changes a person's admin flag or deactivates or
// reactivates them. An admin cannot do either to themselves, and the tenant
// keeps at least one active admin, so nobody locks the tenant out.
func handlePatchPerson(pe People, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := requireAdmin(c)
		if err != nil {
			return err
		}
		var r personPatch
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		ctx, id := c.UserContext(), c.Params("id")
		before, err := pe.Person(ctx, p.TenantID, id)
		if err != nil {
			return err
		}
		losesAdmin := before.Admin && before.DeactivatedAt == nil &&
			((r.Admin != nil && !*r.Admin) || (r.Deactivated != nil && *r.Deactivated))
		if id == p.UserID && losesAdmin {
			return fmt.Errorf("%w: you cannot deactivate yourself or take away your own admin role (ask another admin)", tenancy.ErrConflict)
		}
		if losesAdmin {
			if n, err := pe.ActiveAdmins(ctx, p.TenantID); err != nil {
				return err
			} else if n <= 1 {
				return fmt.Errorf("%w: %s is the organisation's last active admin", tenancy.ErrConflict, before.Email)
			}
		}
		if r.Admin != nil && *r.Admin != before.Admin {
			if err := pe.SetAdmin(ctx, p.TenantID, id, *r.Admin); err != nil {
				return err
			}
			recordAs(c, rec, p, audit.Entry{Action: AuditUserAdminChanged, TargetType: "user", TargetID: id,
				Detail: audit.Detail(map[string]any{"email": before.Email, "from": before.Admin, "to": *r.Admin})})
		}
		if r.Deactivated != nil && *r.Deactivated != (before.DeactivatedAt != nil) {
			action := AuditUserReactivated
			if *r.Deactivated {
				action = AuditUserDeactivated
				err = pe.DeactivateUser(ctx, p.TenantID, id)
			} else {
				err = pe.ReactivateUser(ctx, p.TenantID, id)
			}
			if err != nil {
				return err
			}
			recordAs(c, rec, p, audit.Entry{Action: action, TargetType: "user", TargetID: id,
				Detail: audit.Detail(map[string]any{"email": before.Email})})
		}
		after, err := pe.Person(ctx, p.TenantID, id)
		if err != nil {
			return err
		}
		return c.JSON(after)
	}
}

// handleSetPersonWorkspace is PUT /people/:id/workspaces/:ws {role}: a
// membership given or changed.
func handleSetPersonWorkspace(pe People, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r struct {
			Role tenancy.Role `json:"role"`
		}
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		if r.Role == "" {
			return fmt.Errorf("%w: role is required (DELETE removes the membership)", tenancy.ErrInvalid)
		}
		return changeMembership(c, pe, rec, r.Role)
	}
}

// handleRemovePersonWorkspace is DELETE /people/:id/workspaces/:ws.
func handleRemovePersonWorkspace(pe People, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error { return changeMembership(c, pe, rec, "") }
}

func changeMembership(c *fiber.Ctx, pe People, rec audit.Recorder, role tenancy.Role) error {
	p, err := requireAdmin(c)
	if err != nil {
		return err
	}
	ctx, id, ws := c.UserContext(), c.Params("id"), c.Params("ws")
	before, err := pe.Person(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	var from tenancy.Role
	for _, w := range before.Workspaces {
		if w.WorkspaceID == ws {
			from = w.Role
		}
	}
	if role == "" && from == "" {
		return fmt.Errorf("%w: %s is not a member of workspace %q", tenancy.ErrNotFound, before.Email, ws)
	}
	if err := pe.SetTenantMembership(ctx, p.TenantID, tenancy.Membership{WorkspaceID: ws, UserID: id, Role: role}); err != nil {
		return err
	}
	if role != from {
		action := audit.MembershipSet
		if role == "" {
			action = audit.MembershipRemoved
		}
		recordAs(c, rec, p, audit.Entry{Action: action, TargetType: "user", TargetID: id, WorkspaceID: ws,
			Detail: audit.Detail(map[string]any{"email": before.Email, "from": from, "to": role})})
	}
	after, err := pe.Person(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	return c.JSON(after)
}

// mySession is one of a person's sessions as their settings show it.
type mySession struct {
	ID        string    `json:"id"`
	Method    string    `json:"method"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// Current marks the session the request came with.
	Current bool `json:"current"`
}

func handleMySessions(pe People, ui *webui.UI) fiber.Handler {
	return func(c *fiber.Ctx) error {
		list, err := pe.UserSessions(c.UserContext(), principal(c).UserID)
		if err != nil {
			return err
		}
		cur, _ := currentSession(c, ui)
		out := make([]mySession, len(list))
		for i, s := range list {
			out[i] = mySession{ID: s.ID, Method: s.Method(), CreatedAt: s.CreatedAt, ExpiresAt: s.ExpiresAt, Current: s.ID == cur.ID}
		}
		return c.JSON(out)
	}
}

func currentSession(c *fiber.Ctx, ui *webui.UI) (tenancy.Session, bool) {
	if ui == nil || strings.HasPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ") {
		return tenancy.Session{}, false
	}
	return ui.CurrentSession(c)
}

func handleEndMySession(pe People, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		if err := pe.EndUserSession(c.UserContext(), p.UserID, c.Params("id")); err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: AuditSessionEnded, TargetType: "session", TargetID: c.Params("id")})
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// handleEndOtherSessions is DELETE /me/sessions: every session of the
// person but the one asking ends (with a bearer token: all of them).
func handleEndOtherSessions(pe People, ui *webui.UI, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		cur, _ := currentSession(c, ui)
		n, err := pe.EndOtherSessions(c.UserContext(), p.UserID, cur.ID)
		if err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: AuditSessionEnded, TargetType: "user", TargetID: p.UserID,
			Detail: audit.Detail(map[string]any{"ended": n, "kept": cur.ID})})
		return c.JSON(map[string]int{"ended": n})
	}
}

func handleMyTokens(pe People) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := pe.UserTokens(c.UserContext(), principal(c).UserID)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// maxTokenDays bounds a personal token's life.
const maxTokenDays = 366

// createdToken answers POST /me/tokens: the record and its secret, shown
// this once.
type createdToken struct {
	Token  tenancy.Token `json:"token"`
	Secret string        `json:"secret"`
}

func handleCreateMyToken(pe People, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r struct {
			Name          string `json:"name"`
			ExpiresInDays int    `json:"expiresInDays"`
		}
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		r.Name = strings.TrimSpace(r.Name)
		if r.Name == "" || len(r.Name) > 100 {
			return fmt.Errorf("%w: a token needs a name of 1 to 100 characters", tenancy.ErrInvalid)
		}
		if r.ExpiresInDays < 1 || r.ExpiresInDays > maxTokenDays {
			return fmt.Errorf("%w: expiresInDays must be 1 to %d", tenancy.ErrInvalid, maxTokenDays)
		}
		p := principal(c)
		exp := time.Now().Add(time.Duration(r.ExpiresInDays) * 24 * time.Hour)
		t, secret, err := pe.CreateToken(c.UserContext(), p.UserID, r.Name, &exp)
		if err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: audit.TokenCreated, TargetType: "token", TargetID: t.ID,
			Detail: audit.Detail(map[string]any{"name": t.Name, "expiresAt": t.ExpiresAt, "user": p.UserID})})
		c.Set("Cache-Control", "no-store")
		return c.Status(fiber.StatusCreated).JSON(createdToken{Token: t, Secret: secret})
	}
}

// handleRevokeMyToken revokes one of the person's own tokens (an admin's
// too: this is their own settings, not the tenant's).
func handleRevokeMyToken(pe People, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		own := tenancy.Principal{TenantID: p.TenantID, UserID: p.UserID}
		if err := pe.RevokeToken(c.UserContext(), own, c.Params("id")); err != nil {
			return err
		}
		recordAs(c, rec, p, audit.Entry{Action: audit.TokenRevoked, TargetType: "token", TargetID: c.Params("id"),
			Detail: audit.Detail(map[string]any{"user": p.UserID})})
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// handleMyPreferences: GET /me/preferences, the caller's own settings.
func handleMyPreferences(pe People) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := pe.UserPreferences(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// handleSetMyPreferences: PUT /me/preferences replaces the caller's own
// settings whole (the store refuses malformed ones).
func handleSetMyPreferences(pe People) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var in tenancy.Preferences
		if err := decodeJSON(c, &in); err != nil {
			return err
		}
		out, err := pe.SetUserPreferences(c.UserContext(), principal(c), in)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}
