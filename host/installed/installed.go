// Package installed keeps the plugins an operator installs on a running
// host (the API's POST/PUT/DELETE /plugins, `agenthost plugin
// install|upgrade|remove`): it applies each change to the plugin runtime,
// which checks it exactly as at start-up, and persists it in a directory
// under the data directory, so that a restart loads the same plugins.
//
// The directory holds NAME.wasm, the loaded version of each installed
// plugin, and NAME@VERSION.wasm for earlier versions an upgrade kept for
// tool sets pinned to them. Files are written through a rename, so a crash
// leaves either the old file or the new one.
package installed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

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

// Dir is the installed plugins' directory and the runtime they run in. It
// is safe for concurrent use; changes are applied one at a time.
type Dir struct {
	path   string
	rt     Runtime
	logger *slog.Logger

	mu      sync.Mutex
	managed map[string]bool // plugin names installed here
}

// Open loads the plugins of path (made if missing) into rt: each NAME.wasm,
// then the kept NAME@VERSION.wasm files. A file the runtime refuses (a
// signature no longer trusted, a grant withdrawn) is logged and skipped;
// the others serve.
func Open(ctx context.Context, path string, rt Runtime, logger *slog.Logger) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("installed plugins: %w", err)
	}
	d := &Dir{path: path, rt: rt, logger: logger, managed: map[string]bool{}}
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
func (d *Dir) Install(ctx context.Context, module []byte) (*wasm.Plugin, error) {
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
	return p, nil
}

// Upgrade replaces an installed plugin with another version of it; keep
// keeps the replaced version for pinned tool sets. It returns the new
// plugin and the one replaced.
func (d *Dir) Upgrade(ctx context.Context, module []byte, keep bool) (*wasm.Plugin, *wasm.Plugin, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := manifest.Read(module)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", wasm.ErrRefused, err)
	}
	if err := d.checkManaged(m.Name); err != nil {
		return nil, nil, err
	}
	// The replaced version's file is needed when it is kept.
	cur := d.file(m.Name, "")
	prev, err := os.ReadFile(cur)
	if err != nil {
		return nil, nil, fmt.Errorf("installed plugin %s: %w", m.Name, err)
	}
	p, old, err := d.rt.Upgrade(ctx, wasm.Source{Origin: "upgrade:" + m.Name, Module: module}, wasm.UpgradeOptions{Keep: keep})
	if err != nil {
		return nil, nil, err
	}
	if keep {
		if err := writeAtomic(d.file(m.Name, old.Manifest().Version), prev); err != nil {
			d.logger.Error("keeping the replaced version for a restart", "plugin", m.Name, "version", old.Manifest().Version, "err", err)
		}
	}
	if err := writeAtomic(cur, module); err != nil {
		// The runtime runs the new version; a restart would bring back
		// the old one. Said loudly rather than undone under running calls.
		d.logger.Error("the upgrade runs but could not be kept: a restart loads the previous version", "plugin", m.Name, "err", err)
		return p, old, fmt.Errorf("upgraded, but keeping %s failed (a restart loads %s): %w", m.Name, old.Manifest().Version, err)
	}
	return p, old, nil
}

// Remove removes an installed plugin (every version when version is ""),
// or one kept version of it.
func (d *Dir) Remove(ctx context.Context, name, version string) ([]*wasm.Plugin, error) {
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
