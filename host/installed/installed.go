// Package installed keeps the plugins an operator installs on a running
// host (the API's POST/PUT/DELETE /plugins, `agenthost plugin
// install|upgrade|remove`): it applies each change to the plugin runtime,
// which checks it exactly as at start-up, and persists it in a directory
// under the data directory, so that a restart loads the same plugins.
//
// An upgrade that widens a plugin (a higher limit, a tool, write access,
// a capability, a host: manifest.Compare) is refused unless the admin
// confirms it or the operator's policy lets upgrades widen; every install,
// upgrade, refused widening and removal is written to the audit log with
// who asked and what changed.
//
// The directory holds NAME.wasm, the loaded version of each installed
// plugin, and NAME@VERSION.wasm for earlier versions an upgrade kept for
// tool sets pinned to them. Files are written through a rename, so a crash
// leaves either the old file or the new one.
package installed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// Runtime is what the directory needs of the plugin runtime (wasm.Host).
type Runtime interface {
	Load(ctx context.Context, src wasm.Source) (*wasm.Plugin, error)
	Keep(ctx context.Context, src wasm.Source) (*wasm.Plugin, error)
	Install(ctx context.Context, src wasm.Source) (*wasm.Plugin, error)
	Upgrade(ctx context.Context, src wasm.Source, opts wasm.UpgradeOptions) (*wasm.Plugin, *wasm.Plugin, error)
	Remove(name, version string) ([]*wasm.Plugin, error)
	Plugin(name string) (*wasm.Plugin, bool)
}

// ErrNotManaged is returned for an upgrade or removal of a plugin this
// directory did not install (a built-in, or one of the operator's -plugins
// directory: those change with the binary or the directory and a restart).
var ErrNotManaged = errors.New("not installed through the API")

// ErrWidening is wrapped by a WideningError.
var ErrWidening = errors.New("the upgrade widens the plugin")

// WideningError refuses an upgrade that widens the plugin without the
// admin's confirmation or the operator's policy; it lists each widening.
type WideningError struct {
	Plugin, From, To string
	Widenings        []manifest.Change
}

func (e *WideningError) Error() string {
	ws := make([]string, len(e.Widenings))
	for i, w := range e.Widenings {
		ws[i] = w.String()
	}
	return fmt.Sprintf("upgrading %s %s to %s widens it: %s", e.Plugin, e.From, e.To, strings.Join(ws, "; "))
}

func (e *WideningError) Unwrap() error { return ErrWidening }

// Audit is where changes are recorded, and read back at a start (*store.DB).
type Audit interface {
	RecordPluginChange(ctx context.Context, r store.PluginAuditRecord) (store.PluginAuditRecord, error)
	PluginAudit(ctx context.Context, plugin string) ([]store.PluginAuditRecord, error)
}

// Options are the directory's policy and audit log.
type Options struct {
	// MayWiden lets an upgrade widen a plugin unconfirmed (serve
	// -plugin-upgrades-may-widen); the widening is still logged and
	// recorded.
	MayWiden bool
	// Audit records every change; nil records none (a worker, which
	// changes nothing).
	Audit Audit
	// Tenants records every change in the audit log of the tenant whose
	// admin asked for it (host/audit), beside the host-wide plugin log:
	// nil records none there.
	Tenants audit.Recorder
}

// Actor is who asks for a change: an admin of a tenant the operator names.
type Actor struct {
	TenantID, UserID string
}

// UpgradeOptions are an upgrade's.
type UpgradeOptions struct {
	// Keep keeps the replaced version for pinned tool sets.
	Keep bool
	// ConfirmWidening is the admin's yes to the widenings listed.
	ConfirmWidening bool
	Actor           Actor
}

// Dir is the installed plugins' directory and the runtime they run in. It
// is safe for concurrent use; changes are applied one at a time.
type Dir struct {
	path   string
	rt     Runtime
	logger *slog.Logger
	opts   Options

	mu      sync.Mutex
	managed map[string]bool // plugin names installed here
}

// Open loads the plugins of path (made if missing) into rt: each NAME.wasm,
// then the kept NAME@VERSION.wasm files. A file the runtime refuses (a
// signature no longer trusted, a grant withdrawn), or one that is not what
// the audit log last installed (asRecorded), is logged and skipped; the
// others serve.
func Open(ctx context.Context, path string, rt Runtime, logger *slog.Logger, opts Options) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("installed plugins: %w", err)
	}
	d := &Dir{path: path, rt: rt, logger: logger, opts: opts, managed: map[string]bool{}}
	files, err := filepath.Glob(filepath.Join(path, "*.wasm"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var kept []string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "@") {
			kept = append(kept, f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			logger.Error("installed plugin unreadable", "file", f, "err", err)
			continue
		}
		if !d.asRecorded(ctx, strings.TrimSuffix(filepath.Base(f), ".wasm"), f, b) {
			continue
		}
		p, err := rt.Load(ctx, wasm.Source{Origin: f, Module: b})
		if err != nil {
			logger.Error("installed plugin refused", "file", f, "err", err)
			continue
		}
		d.managed[p.Name()] = true
	}
	for _, f := range kept {
		b, err := os.ReadFile(f)
		if err == nil {
			_, err = rt.Keep(ctx, wasm.Source{Origin: f, Module: b})
		}
		if err != nil {
			logger.Error("kept plugin version refused", "file", f, "err", err)
		}
	}
	return d, nil
}

// asRecorded reports whether the file of plugin name is a build the audit
// log saw installed or upgraded through the API (on this host or another
// sharing the database). A file copied into the directory behind the API's
// back would be an upgrade nobody compared: it is not loaded, unless the
// operator's policy lets upgrades widen. A plugin the log does not know
// (installed before it was kept) loads as before.
func (d *Dir) asRecorded(ctx context.Context, name, file string, module []byte) bool {
	if d.opts.Audit == nil {
		return true
	}
	recs, err := d.opts.Audit.PluginAudit(ctx, name)
	if err != nil {
		d.logger.Error("installed plugin not loaded: the audit log is unreadable", "file", file, "err", err)
		return false
	}
	sum := sha256.Sum256(module)
	got := hex.EncodeToString(sum[:])
	var recorded []string
	for _, r := range recs {
		if r.Action == store.PluginInstalled || r.Action == store.PluginUpgraded {
			if r.ToSHA256 == got {
				return true
			}
			recorded = append(recorded, r.ToSHA256)
		}
	}
	if len(recorded) == 0 {
		return true
	}
	if d.opts.MayWiden {
		d.logger.Warn("installed plugin file changed outside the API: loaded, as the operator lets upgrades widen", "file", file, "sha256", got)
		return true
	}
	d.logger.Error("installed plugin file changed outside the API: NOT loaded (upgrade it through the API, which compares it with the version that ran)",
		"file", file, "sha256", got, "last_recorded", recorded[len(recorded)-1])
	return false
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

// Managed reports whether the named plugin was installed here.
func (d *Dir) Managed(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.managed[name]
}

// Install installs a plugin whose name is not loaded: checked, compiled and
// verified by the runtime, then written to the directory.
func (d *Dir) Install(ctx context.Context, module []byte, by Actor) (*wasm.Plugin, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := manifest.Read(module)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", wasm.ErrRefused, err)
	}
	p, err := d.rt.Install(ctx, wasm.Source{Origin: "install:" + m.Name, Module: module})
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(d.file(m.Name, ""), module); err != nil {
		// Not kept means not installed: a restart would lose it silently.
		if _, rerr := d.rt.Remove(m.Name, ""); rerr != nil {
			d.logger.Error("undoing an install that could not be kept", "plugin", m.Name, "err", rerr)
		}
		return nil, fmt.Errorf("keeping %s: %w", m.Name, err)
	}
	d.managed[m.Name] = true
	d.logger.Info("plugin installed", "plugin", p.Name(), "version", p.Manifest().Version, "sha256", p.SHA256(), "tenant", by.TenantID, "user", by.UserID)
	d.record(ctx, store.PluginAuditRecord{ActorTenant: by.TenantID, ActorUser: by.UserID, Action: store.PluginInstalled, Plugin: p.Name(),
		ToVersion: p.Manifest().Version, ToSHA256: p.SHA256()})
	return p, nil
}

// record appends r to the audit log. The change it records is made
// already (a running upgrade is not undone under its calls), so a failure
// is logged as loudly as the log allows.
func (d *Dir) record(ctx context.Context, r store.PluginAuditRecord) {
	d.recordTenant(ctx, r)
	if d.opts.Audit == nil {
		return
	}
	if _, err := d.opts.Audit.RecordPluginChange(context.WithoutCancel(ctx), r); err != nil {
		d.logger.Error("plugin change NOT recorded in the audit log", "action", r.Action, "plugin", r.Plugin,
			"from", r.FromVersion, "to", r.ToVersion, "tenant", r.ActorTenant, "user", r.ActorUser, "err", err)
	}
}

// tenantActions are the tenant audit log's names of the plugin log's.
var tenantActions = map[string]string{
	store.PluginInstalled:      audit.PluginInstalled,
	store.PluginUpgraded:       audit.PluginUpgraded,
	store.PluginUpgradeRefused: audit.PluginUpgradeRefused,
	store.PluginRemoved:        audit.PluginRemoved,
}

// recordTenant records r in the asking tenant's audit log too, with the
// change as its detail; an applied widening is also a grant.changed entry
// (the plugin was given more than it had: hosts, capabilities, limits).
func (d *Dir) recordTenant(ctx context.Context, r store.PluginAuditRecord) {
	if d.opts.Tenants == nil || r.ActorTenant == "" {
		return
	}
	e := audit.Entry{TenantID: r.ActorTenant, Action: tenantActions[r.Action], TargetType: "plugin", TargetID: r.Plugin,
		Detail: audit.Detail(map[string]any{"fromVersion": r.FromVersion, "toVersion": r.ToVersion, "fromSha256": r.FromSHA256,
			"toSha256": r.ToSHA256, "changes": r.Changes, "widened": r.Widened, "allowedBy": r.AllowedBy})}
	if _, ok := audit.ActorFrom(ctx); !ok && r.ActorUser != "" {
		e.Actor = audit.Actor{Kind: audit.ActorUser, ID: r.ActorUser}
	}
	_ = d.opts.Tenants.Record(ctx, e)
	if r.Action == store.PluginUpgraded && r.Widened {
		e.Action = audit.GrantChanged
		e.Detail = audit.Detail(map[string]any{"plugin": r.Plugin, "version": r.ToVersion, "widenings": manifest.Widenings(r.Changes),
			"allowedBy": r.AllowedBy})
		_ = d.opts.Tenants.Record(ctx, e)
	}
}

// effective is m with the limits p runs under (a manifest's 0 is the
// host's default): what two versions are compared by.
func effective(p *wasm.Plugin) *manifest.Manifest {
	m := *p.Manifest()
	l := p.Limits()
	m.Limits.MemoryMiB, m.Limits.TimeoutMs = l.MemoryMiB, int(l.TimeoutMs)
	m.Limits.MaxOutputBytes, m.Limits.MaxHTTPResponseBytes = l.MaxOutputBytes, l.MaxHTTPResponseBytes
	return &m
}

func changeStrings(cs []manifest.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// Upgrade replaces an installed plugin with another version of it; Keep
// keeps the replaced version for pinned tool sets. A version that widens
// the plugin is refused with a *WideningError (recorded, nothing changed)
// unless the admin confirms it or the operator's policy allows it. It
// returns the new plugin, the one replaced and the manifest's changes.
func (d *Dir) Upgrade(ctx context.Context, module []byte, opts UpgradeOptions) (*wasm.Plugin, *wasm.Plugin, []manifest.Change, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := manifest.Read(module)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", wasm.ErrRefused, err)
	}
	if err := d.checkManaged(m.Name); err != nil {
		return nil, nil, nil, err
	}
	// The replaced version's file is needed when it is kept.
	cur := d.file(m.Name, "")
	prev, err := os.ReadFile(cur)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("installed plugin %s: %w", m.Name, err)
	}
	by := opts.Actor
	rec := store.PluginAuditRecord{ActorTenant: by.TenantID, ActorUser: by.UserID, Action: store.PluginUpgraded, Plugin: m.Name}
	var changes []manifest.Change
	check := func(old, p *wasm.Plugin) error {
		// The versions as they run, limits in force included.
		changes = manifest.Compare(effective(old), effective(p))
		rec.FromVersion, rec.FromSHA256, rec.ToVersion, rec.ToSHA256 = old.Manifest().Version, old.SHA256(), p.Manifest().Version, p.SHA256()
		rec.Changes = changes
		w := manifest.Widenings(changes)
		rec.Widened = len(w) > 0
		switch {
		case len(w) == 0:
		case opts.ConfirmWidening:
			rec.AllowedBy = "confirmed"
		case d.opts.MayWiden:
			rec.AllowedBy = "policy"
		default:
			return &WideningError{Plugin: m.Name, From: rec.FromVersion, To: rec.ToVersion, Widenings: w}
		}
		return nil
	}
	p, old, err := d.rt.Upgrade(ctx, wasm.Source{Origin: "upgrade:" + m.Name, Module: module}, wasm.UpgradeOptions{Keep: opts.Keep, Check: check})
	if err != nil {
		var we *WideningError
		if errors.As(err, &we) {
			d.logger.Warn("plugin upgrade refused: it widens the plugin and nobody confirmed it; the loaded version keeps serving",
				"plugin", m.Name, "from", we.From, "to", we.To, "widenings", strings.Join(changeStrings(we.Widenings), "; "), "tenant", by.TenantID, "user", by.UserID)
			rec.Action = store.PluginUpgradeRefused
			d.record(ctx, rec)
		}
		return nil, nil, changes, err
	}
	d.logger.Info("plugin upgraded", "plugin", m.Name, "from", rec.FromVersion, "to", rec.ToVersion, "sha256", rec.ToSHA256,
		"changes", strings.Join(changeStrings(changes), "; "), "widened", rec.Widened, "allowed_by", rec.AllowedBy, "tenant", by.TenantID, "user", by.UserID)
	d.record(ctx, rec)
	if opts.Keep {
		if err := writeAtomic(d.file(m.Name, old.Manifest().Version), prev); err != nil {
			d.logger.Error("keeping the replaced version for a restart", "plugin", m.Name, "version", old.Manifest().Version, "err", err)
		}
	}
	if err := writeAtomic(cur, module); err != nil {
		// The runtime runs the new version; a restart would bring back
		// the old one. Said loudly rather than undone under running calls.
		d.logger.Error("the upgrade runs but could not be kept: a restart loads the previous version", "plugin", m.Name, "err", err)
		return p, old, changes, fmt.Errorf("upgraded, but keeping %s failed (a restart loads %s): %w", m.Name, old.Manifest().Version, err)
	}
	return p, old, changes, nil
}

// Remove removes an installed plugin (every version when version is ""),
// or one kept version of it.
func (d *Dir) Remove(ctx context.Context, name, version string, by Actor) ([]*wasm.Plugin, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkManaged(name); err != nil {
		return nil, err
	}
	gone, err := d.rt.Remove(name, version)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, p := range gone {
		f := d.file(name, p.Manifest().Version)
		if version == "" && p == gone[0] {
			f = d.file(name, "")
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if version == "" {
		delete(d.managed, name)
	}
	for _, p := range gone {
		d.logger.Info("plugin removed", "plugin", name, "version", p.Manifest().Version, "tenant", by.TenantID, "user", by.UserID)
		d.record(ctx, store.PluginAuditRecord{ActorTenant: by.TenantID, ActorUser: by.UserID, Action: store.PluginRemoved, Plugin: name,
			FromVersion: p.Manifest().Version, FromSHA256: p.SHA256()})
	}
	if err := errors.Join(errs...); err != nil {
		return gone, fmt.Errorf("removed, but its files remain (a restart loads them again): %w", err)
	}
	return gone, nil
}

func (d *Dir) checkManaged(name string) error {
	if d.managed[name] {
		return nil
	}
	if _, ok := d.rt.Plugin(name); ok {
		return fmt.Errorf("%s: %w (a built-in, or from the operator's -plugins directory: replace it there and restart)", name, ErrNotManaged)
	}
	return fmt.Errorf("%w %q", wasm.ErrNotInstalled, name)
}

// file is NAME.wasm, or NAME@VERSION.wasm for a kept version.
func (d *Dir) file(name, version string) string {
	if version == "" {
		return filepath.Join(d.path, name+".wasm")
	}
	return filepath.Join(d.path, name+"@"+version+".wasm")
}

// writeAtomic writes b through a temporary file and a rename.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
