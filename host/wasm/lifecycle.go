package wasm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// A running host installs, upgrades and removes third-party plugins without a
// restart. What a call started on, it ends on: a plugin counts its running
// calls, and an upgrade or a removal only retires it (no call starts on it
// any more); the last call to end closes its instances and compiled code.
// Every check of Load applies (signature policy, grants, ceilings, imports),
// so an upgrade gains no capability the operator did not grant its name.

// ErrNotInstalled is returned for an upgrade or removal of a plugin that is
// not loaded.
var ErrNotInstalled = errors.New("no such plugin")

// ErrBuiltin is returned for an upgrade or removal of a built-in plugin.
var ErrBuiltin = errors.New("built-in plugins ship with the binary")

// acquire counts a call starting on p; false once p is retired.
func (p *Plugin) acquire() bool {
	p.life.Lock()
	defer p.life.Unlock()
	if p.retired {
		return false
	}
	p.inflight++
	return true
}

// release counts a call's end; the last one on a retired plugin closes it.
func (p *Plugin) release() {
	p.life.Lock()
	p.inflight--
	last := p.retired && p.inflight == 0
	if p.inflight == 0 {
		p.lastCall = time.Now()
		p.armCodeExpiry()
	}
	p.life.Unlock()
	if last {
		p.closeRetired()
	}
}

// retire stops new calls; p closes now if none runs, else when the last ends.
func (p *Plugin) retire() {
	p.life.Lock()
	p.retired = true
	idle := p.inflight == 0
	p.life.Unlock()
	if idle {
		p.closeRetired()
		return
	}
	p.h.retiring.Store(p, true)
}

func (p *Plugin) closeRetired() {
	p.close(context.Background())
	p.h.retiring.Delete(p)
}

// Running is the number of calls running on the plugin now.
func (p *Plugin) Running() int {
	p.life.Lock()
	defer p.life.Unlock()
	return p.inflight
}

// Retired reports whether an upgrade or removal took the plugin out of
// service (its running calls still end on it).
func (p *Plugin) Retired() bool {
	p.life.Lock()
	defer p.life.Unlock()
	return p.retired
}

func (p *Plugin) retiredError() error {
	return fmt.Errorf("plugin %s %s was upgraded or removed", p.Name(), p.m.Version)
}

// pinned finds the plugin of a version that declares tool: the loaded one
// or one an upgrade kept. The caller holds h.mu.
func (h *Host) pinned(tool, version string) (*Plugin, bool) {
	for name, p := range h.plugins {
		for _, q := range append([]*Plugin{p}, h.kept[name]...) {
			if q.m.Version == version && q.m.Kind != manifest.KindExtractor && q.HasTool(tool) {
				return q, true
			}
		}
	}
	return nil, false
}

// Install loads a third-party plugin whose name is not loaded yet. Unlike
// Load, it compiles the plugin and checks its code against its manifest
// before its tools appear, so an install that succeeds can serve, and one
// that cannot is refused with the reason.
func (h *Host) Install(ctx context.Context, src Source) (*Plugin, error) {
	if src.Builtin {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, src.Origin, ErrBuiltin)
	}
	p, err := h.open(src)
	if err != nil {
		return nil, err
	}
	if err := h.checkFree(p, src.Origin, nil); err != nil {
		return nil, err
	}
	if err := p.Warm(ctx); err != nil {
		p.close(ctx)
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, p.Name(), err)
	}
	h.mu.Lock()
	err = h.register(p, src.Origin, nil)
	h.mu.Unlock()
	if err != nil {
		p.close(ctx)
		return nil, err
	}
	return p, nil
}

// checkFree refuses early what register would: a name or tool taken.
func (h *Host) checkFree(p *Plugin, origin string, replacing *Plugin) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if _, ok := h.plugins[p.Name()]; ok && replacing == nil {
		return fmt.Errorf("%w: %s: a plugin named %q is already loaded (upgrade it instead)", ErrRefused, origin, p.Name())
	}
	if p.m.Kind == manifest.KindExtractor {
		return nil
	}
	for _, t := range p.m.Tools {
		if other, ok := h.tools[t.Name]; ok && other != replacing {
			return fmt.Errorf("%w: %s: tool %q is already provided by plugin %q", ErrRefused, p.Name(), t.Name, other.Name())
		}
	}
	return nil
}

// UpgradeOptions say what becomes of the version an upgrade replaces.
type UpgradeOptions struct {
	// Keep keeps the replaced version loaded for tool sets pinned to it
	// ("tool@1.2.0"); otherwise it is retired: its running calls end on it
	// and it is closed after the last.
	Keep bool
	// Check, when set, sees the loaded version and the new one once the
	// new one is read and checked (limits in force, tools, grants) and
	// before anything is compiled or swapped: its error refuses the
	// upgrade (installed: a widening nobody confirmed).
	Check func(old, new *Plugin) error
}

// Upgrade replaces the loaded plugin of src's name with src, another
// version: compiled and checked first, then swapped in one step. Calls
// running on the old version end on it; calls from then on run the new one.
// It returns the new plugin and the one it replaced.
func (h *Host) Upgrade(ctx context.Context, src Source, opts UpgradeOptions) (*Plugin, *Plugin, error) {
	if src.Builtin {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrRefused, src.Origin, ErrBuiltin)
	}
	p, err := h.open(src)
	if err != nil {
		return nil, nil, err
	}
	old, ok := h.Plugin(p.Name())
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("%w: %s: %w %q to upgrade (install it instead)", ErrRefused, src.Origin, ErrNotInstalled, p.Name())
	case old.builtin:
		return nil, nil, fmt.Errorf("%w: %s: %s: %w", ErrRefused, src.Origin, p.Name(), ErrBuiltin)
	}
	if err := h.checkVersion(p, old); err != nil {
		return nil, nil, err
	}
	if err := h.checkFree(p, src.Origin, old); err != nil {
		return nil, nil, err
	}
	if opts.Check != nil {
		if err := opts.Check(old, p); err != nil {
			p.close(ctx)
			return nil, nil, err
		}
	}
	if err := p.Warm(ctx); err != nil {
		p.close(ctx)
		return nil, nil, fmt.Errorf("%w: %s %s: %w", ErrRefused, p.Name(), p.m.Version, err)
	}
	h.mu.Lock()
	if cur := h.plugins[p.Name()]; cur != old {
		h.mu.Unlock()
		p.close(ctx)
		return nil, nil, fmt.Errorf("%w: %s: another upgrade or removal of %s came first; try again", ErrRefused, src.Origin, p.Name())
	}
	if err := h.register(p, src.Origin, old); err != nil {
		h.mu.Unlock()
		p.close(ctx)
		return nil, nil, err
	}
	if opts.Keep {
		h.kept[p.Name()] = append(h.kept[p.Name()], old)
	}
	h.mu.Unlock()
	if !opts.Keep {
		old.retire()
	}
	return p, old, nil
}

// checkVersion refuses an upgrade to a version that is loaded already (the
// same version with other bytes would make pins ambiguous).
func (h *Host) checkVersion(p, old *Plugin) error {
	if p.sha256 == old.sha256 {
		return fmt.Errorf("%w: %s %s: this module is already loaded", ErrRefused, p.Name(), p.m.Version)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, q := range append([]*Plugin{old}, h.kept[p.Name()]...) {
		if q.m.Version == p.m.Version {
			return fmt.Errorf("%w: %s: version %s is loaded already (give the new build a new version)", ErrRefused, p.Name(), p.m.Version)
		}
	}
	return nil
}

// Remove takes a third-party plugin out of service: every version of it
// when version is "", else one kept version. Its tools disappear at once;
// calls running on it end on it, and it is closed after the last.
func (h *Host) Remove(name, version string) ([]*Plugin, error) {
	h.mu.Lock()
	cur, ok := h.plugins[name]
	if !ok {
		h.mu.Unlock()
		return nil, fmt.Errorf("%w %q", ErrNotInstalled, name)
	}
	if cur.builtin {
		h.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", name, ErrBuiltin)
	}
	var gone []*Plugin
	switch {
	case version == "":
		gone = append([]*Plugin{cur}, h.kept[name]...)
		delete(h.plugins, name)
		delete(h.kept, name)
		for t, q := range h.tools {
			if q == cur {
				delete(h.tools, t)
			}
		}
	case version == cur.m.Version:
		h.mu.Unlock()
		return nil, fmt.Errorf("%s %s is the loaded version: remove the plugin, or upgrade it first", name, version)
	default:
		ks := h.kept[name]
		for i, q := range ks {
			if q.m.Version == version {
				gone = append(gone, q)
				h.kept[name] = append(ks[:i:i], ks[i+1:]...)
				break
			}
		}
		if len(gone) == 0 {
			h.mu.Unlock()
			return nil, fmt.Errorf("%w %q in version %s", ErrNotInstalled, name, version)
		}
	}
	h.mu.Unlock()
	for _, q := range gone {
		q.retire()
	}
	return gone, nil
}

// Kept lists the earlier versions an upgrade kept for pinned tool sets.
func (h *Host) Kept() []*Plugin {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*Plugin
	for _, ks := range h.kept {
		out = append(out, ks...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name() != out[j].Name() {
			return out[i].Name() < out[j].Name()
		}
		return out[i].m.Version < out[j].m.Version
	})
	return out
}

// Keep loads src as a kept earlier version of a loaded plugin (a restart
// restoring what upgrades kept): every check of Load applies.
func (h *Host) Keep(ctx context.Context, src Source) (*Plugin, error) {
	p, err := h.open(src)
	if err != nil {
		return nil, err
	}
	cur, ok := h.Plugin(p.Name())
	if !ok {
		return nil, fmt.Errorf("%w: %s: keeps version %s of %s, which is not loaded", ErrRefused, src.Origin, p.m.Version, p.Name())
	}
	if err := h.checkVersion(p, cur); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.kept[p.Name()] = append(h.kept[p.Name()], p)
	h.mu.Unlock()
	return p, nil
}

// VersionedTools lists the agent tools of every loaded and kept plugin
// version as "tool@version", for tool sets that pin a version.
func (h *Host) VersionedTools() []ToolInfo {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []ToolInfo
	for name, p := range h.plugins {
		for _, q := range append([]*Plugin{p}, h.kept[name]...) {
			if q.m.Kind == manifest.KindExtractor {
				continue
			}
			for _, t := range q.m.Tools {
				t.Name += "@" + q.m.Version
				out = append(out, ToolInfo{Plugin: q.Name(), Tool: t})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
