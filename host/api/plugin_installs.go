package api

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// Installer installs, upgrades and removes plugins on the running host
// (installed.Dir), recording who asked.
type Installer interface {
	Install(ctx context.Context, module []byte, by installed.Actor) (*wasm.Plugin, error)
	Upgrade(ctx context.Context, module []byte, opts installed.UpgradeOptions) (*wasm.Plugin, *wasm.Plugin, []manifest.Change, error)
	Remove(ctx context.Context, name, version string, by installed.Actor) ([]*wasm.Plugin, error)
}

// actor is who makes the request.
func actor(c *fiber.Ctx) installed.Actor {
	p := principal(c)
	return installed.Actor{TenantID: p.TenantID, UserID: p.UserID}
}

// PluginAuditLog reads the plugin audit log (*store.DB).
type PluginAuditLog interface {
	PluginAudit(ctx context.Context, plugin string) ([]store.PluginAuditRecord, error)
}

// PluginAdmins says who may change the host's plugins: the admins of the
// named tenants. A plugin serves every tenant of the host, so a tenant's
// own admin may not change it unless the operator names that tenant.
type PluginAdmins struct {
	Installer Installer
	// Audit is the log of changes they read.
	Audit PluginAuditLog
	// Tenants are the tenants whose admins may install; none: nobody.
	Tenants []string
}

func (a PluginAdmins) check(c *fiber.Ctx) error {
	p := principal(c)
	switch {
	case a.Installer == nil || len(a.Tenants) == 0:
		return fmt.Errorf("%w: installing plugins on the running host is off (the operator starts serve with -plugin-admins TENANT)", tenancy.ErrForbidden)
	case !p.Admin || !slices.Contains(a.Tenants, p.TenantID):
		return fmt.Errorf("%w: plugins serve every tenant of this host; only admins of the operator's tenants (serve -plugin-admins) may change them", tenancy.ErrForbidden)
	}
	return nil
}

// pluginChange is the answer to an install, upgrade or removal.
type pluginChange struct {
	Plugin *pluginView `json:"plugin,omitempty"`
	// Replaced is the version an upgrade replaced; Removed the versions a
	// removal took out. Their running calls end on them.
	Replaced *pluginView  `json:"replaced,omitempty"`
	Removed  []pluginView `json:"removed,omitempty"`
	// Changes are what an upgrade changed in the manifest (each says
	// whether it widens).
	Changes []manifest.Change `json:"changes,omitempty"`
}

// wideningProblem is the 409 answer to an upgrade that widens the plugin
// unconfirmed: the problem document and each widening, as a list of
// sentences ("timeoutMs 1000 → 600000") and as changes.
type wideningProblem struct {
	Problem
	Widenings []string          `json:"widenings"`
	Changes   []manifest.Change `json:"changes"`
}

// installErr maps the runtime's refusals to statuses: a module refused is
// the caller's to fix (422), a name taken or not installed a conflict or
// absence.
func installErr(err error) error {
	switch {
	case errors.Is(err, wasm.ErrNotInstalled):
		return fmt.Errorf("%w: %w", tenancy.ErrNotFound, err)
	case errors.Is(err, installed.ErrNotManaged), errors.Is(err, wasm.ErrBuiltin):
		return fmt.Errorf("%w: %w", tenancy.ErrConflict, err)
	case errors.Is(err, wasm.ErrRefused):
		return fiber.NewError(fiber.StatusUnprocessableEntity, err.Error())
	}
	return err
}

func moduleBody(c *fiber.Ctx) ([]byte, error) {
	b := c.Body()
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: the body must be the plugin's .wasm file (Content-Type: application/wasm)", tenancy.ErrInvalid)
	}
	// fasthttp reuses the body's buffer; the runtime keeps the module.
	return append([]byte(nil), b...), nil
}

// handleInstallPlugin installs a plugin whose name is not loaded.
func handleInstallPlugin(a PluginAdmins) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := a.check(c); err != nil {
			return err
		}
		module, err := moduleBody(c)
		if err != nil {
			return err
		}
		p, err := a.Installer.Install(c.UserContext(), module, actor(c))
		if err != nil {
			return installErr(err)
		}
		v := viewOf(p)
		return c.Status(fiber.StatusCreated).JSON(pluginChange{Plugin: &v})
	}
}

// handleUpgradePlugin replaces an installed plugin with another version.
func handleUpgradePlugin(a PluginAdmins) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := a.check(c); err != nil {
			return err
		}
		module, err := moduleBody(c)
		if err != nil {
			return err
		}
		if m, err := readManifest(module); err == nil && m != c.Params("name") {
			return fmt.Errorf("%w: the module is plugin %q, not %q", tenancy.ErrInvalid, m, c.Params("name"))
		}
		p, old, changes, err := a.Installer.Upgrade(c.UserContext(), module,
			installed.UpgradeOptions{Keep: c.QueryBool("keep"), ConfirmWidening: c.QueryBool("confirmWidening"), Actor: actor(c)})
		var we *installed.WideningError
		if errors.As(err, &we) {
			ws := make([]string, len(we.Widenings))
			for i, w := range we.Widenings {
				ws[i] = w.String()
			}
			return c.Status(fiber.StatusConflict).JSON(wideningProblem{
				Problem: Problem{Type: "about:blank", Title: "Upgrade Widens The Plugin", Status: fiber.StatusConflict,
					Detail: err.Error() + "; nothing changed: send it again with ?confirmWidening=true to apply it"},
				Widenings: ws, Changes: changes}, "application/problem+json")
		}
		if p == nil && err != nil {
			return installErr(err)
		}
		v, o := viewOf(p), viewOf(old)
		if err != nil {
			// Running, but not persisted: said as a failure, with what runs.
			return problem(c, fiber.StatusInternalServerError, "Upgraded But Not Kept", err.Error())
		}
		return c.JSON(pluginChange{Plugin: &v, Replaced: &o, Changes: changes})
	}
}

// handleRemovePlugin removes an installed plugin, or a kept version of it.
func handleRemovePlugin(a PluginAdmins) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := a.check(c); err != nil {
			return err
		}
		gone, err := a.Installer.Remove(c.UserContext(), c.Params("name"), c.Query("version"), actor(c))
		if len(gone) == 0 && err != nil {
			return installErr(err)
		}
		out := pluginChange{Removed: []pluginView{}}
		for _, p := range gone {
			out.Removed = append(out.Removed, viewOf(p))
		}
		if err != nil {
			return problem(c, fiber.StatusInternalServerError, "Removed But Files Remain", err.Error())
		}
		return c.JSON(out)
	}
}

// handlePluginAudit answers the plugin audit log (of ?plugin=NAME, or all).
func handlePluginAudit(a PluginAdmins) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := a.check(c); err != nil {
			return err
		}
		if a.Audit == nil {
			return fmt.Errorf("%w: this host keeps no plugin audit log", tenancy.ErrNotFound)
		}
		recs, err := a.Audit.PluginAudit(c.UserContext(), c.Query("plugin"))
		if err != nil {
			return err
		}
		return c.JSON(recs)
	}
}
