package installed_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

func newHost(t *testing.T) *wasm.Host {
	t.Helper()
	reg, err := wasm.NewRegistry(wasm.StandardCapabilities(wasm.EgressOptions{})...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := wasm.New(context.Background(), wasm.NewConfig().WithCapabilities(reg).WithGrantDeclared(true).WithAllowUnsigned(true).
		WithLogger(slog.New(slog.DiscardHandler)).WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func version(t *testing.T, module []byte, v string) []byte {
	t.Helper()
	m, err := manifest.Read(module)
	if err != nil {
		t.Fatal(err)
	}
	m.Version = v
	out, err := manifest.Embed(module, m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(dir string) string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return strings.Join(out, " ")
}

// TestInstallsSurviveARestart: what was installed, upgraded (with the old
// version kept) and removed is what a new host loads from the directory.
func TestInstallsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "plugins")
	logger := slog.New(slog.DiscardHandler)
	echo := wasmtest.Module(t, "echo")

	h := newHost(t)
	d, err := installed.Open(ctx, dir, h, logger, installed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Install(ctx, echo, installed.Actor{}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := d.Upgrade(ctx, version(t, echo, "1.1.0"), installed.UpgradeOptions{Keep: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Install(ctx, wasmtest.Module(t, "compute"), installed.Actor{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Remove(ctx, "compute", "", installed.Actor{}); err != nil {
		t.Fatal(err)
	}
	if got := names(dir); got != "echo.wasm echo@1.0.0.wasm" {
		t.Fatalf("the directory holds %q", got)
	}
	// A file that is no plugin is skipped with the others loading.
	if err := os.WriteFile(filepath.Join(dir, "broken.wasm"), []byte("not wasm"), 0o600); err != nil {
		t.Fatal(err)
	}

	restarted := newHost(t)
	d2, err := installed.Open(ctx, dir, restarted, logger, installed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := restarted.Plugin("echo")
	if !ok || p.Manifest().Version != "1.1.0" || !d2.Managed("echo") {
		t.Fatalf("after the restart echo is %v (managed %v)", p, d2.Managed("echo"))
	}
	if kept := restarted.Kept(); len(kept) != 1 || kept[0].Manifest().Version != "1.0.0" {
		t.Fatalf("kept after the restart: %v", kept)
	}
	if r := restarted.Call(ctx, "echo@1.0.0", []byte(`{"text":"pinned"}`), nil); !r.OK || r.Text != "pinned" {
		t.Fatalf("the kept version after the restart: %+v", r)
	}
	if _, ok := restarted.Plugin("compute"); ok {
		t.Fatal("a removed plugin came back")
	}
	if _, err := d2.Remove(ctx, "echo", "1.0.0", installed.Actor{}); err != nil {
		t.Fatal(err)
	}
	if got := names(dir); got != "broken.wasm echo.wasm" {
		t.Fatalf("after removing the kept version the directory holds %q", got)
	}
}

// TestOnlyInstalledPluginsChange: a plugin the operator loaded otherwise (a
// built-in, the -plugins directory) is not the API's to upgrade or remove.
func TestOnlyInstalledPluginsChange(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	echo := wasmtest.Module(t, "echo")
	if _, err := h.Load(ctx, wasm.Source{Origin: "operator dir", Module: echo}); err != nil {
		t.Fatal(err)
	}
	d, err := installed.Open(ctx, t.TempDir(), h, slog.New(slog.DiscardHandler), installed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := d.Upgrade(ctx, version(t, echo, "2.0.0"), installed.UpgradeOptions{}); !errors.Is(err, installed.ErrNotManaged) {
		t.Errorf("upgrade of the operator's plugin: %v", err)
	}
	if _, err := d.Remove(ctx, "echo", "", installed.Actor{}); !errors.Is(err, installed.ErrNotManaged) {
		t.Errorf("removal of the operator's plugin: %v", err)
	}
	if _, err := d.Remove(ctx, "nothing", "", installed.Actor{}); !errors.Is(err, wasm.ErrNotInstalled) {
		t.Errorf("removal of nothing: %v", err)
	}
	if _, err := d.Install(ctx, []byte("not wasm"), installed.Actor{}); !errors.Is(err, wasm.ErrRefused) {
		t.Errorf("install of garbage: %v", err)
	}
	if p, _ := h.Plugin("echo"); p.Manifest().Version != "1.0.0" {
		t.Errorf("echo is %s", p.Manifest().Version)
	}
}

// TestHostileNamesWriteNothing: a module whose manifest names a path
// instead of a plugin (or a version with a slash) is refused before
// anything is written, inside the directory or outside it.
func TestHostileNamesWriteNothing(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "plugins")
	d, err := installed.Open(ctx, dir, newHost(t), slog.New(slog.DiscardHandler), installed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	echo := wasmtest.Module(t, "echo")
	for _, edit := range []string{`"name":"../../evil"`, `"version":"1.0.0/../../evil"`} {
		m, err := manifest.Read(echo)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(m)
		field, _, _ := strings.Cut(edit, ":")
		re := regexp.MustCompile(regexp.QuoteMeta(field) + `:"[^"]*"`)
		hostile, err := wasmbin.SetCustomSection(echo, manifest.SectionName, re.ReplaceAll(raw, []byte(edit)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Install(ctx, hostile, installed.Actor{}); !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), "/"+strings.Trim(field, `"`)) {
			t.Errorf("%s: %v, want a refusal naming the field", edit, err)
		}
	}
	var files []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("written: %v", files)
	}
}
