package installed_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// auditLog keeps the records a directory writes.
type auditLog struct {
	mu   sync.Mutex
	recs []store.PluginAuditRecord
}

func (a *auditLog) RecordPluginChange(_ context.Context, r store.PluginAuditRecord) (store.PluginAuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return r, nil
}

func (a *auditLog) PluginAudit(_ context.Context, plugin string) ([]store.PluginAuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []store.PluginAuditRecord
	for _, r := range a.recs {
		if r.Plugin == plugin {
			out = append(out, r)
		}
	}
	return out, nil
}

func (a *auditLog) last() store.PluginAuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recs) == 0 {
		return store.PluginAuditRecord{}
	}
	return a.recs[len(a.recs)-1]
}

// narrowNotes is the plugin notes 1.0.0 as a tight first version: one
// read-only tool (read), http to one host, small limits.
func narrowNotes(t *testing.T) []byte {
	return wasmtest.NotesVersion(t, "notes1", "1.0.0", func(*manifest.Manifest) {})
}

// widenings are the upgrades of the incident, one kind each, and the
// sentence each must be shown as.
func widenings(t *testing.T) []struct {
	name, want string
	module     []byte
} {
	same := func(*manifest.Manifest) {}
	return []struct {
		name, want string
		module     []byte
	}{
		{"timeout", "timeoutMs 1000 → 600000", wasmtest.NotesVersion(t, "notes1", "2.0.0", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 })},
		{"memory", "memoryMiB 64 → 1024", wasmtest.NotesVersion(t, "notes1", "2.0.1", func(m *manifest.Manifest) { m.Limits.MemoryMiB = 1024 })},
		{"output to the ceiling", "maxOutputBytes 1048576 → 134217728", wasmtest.NotesVersion(t, "notes1", "2.0.2", func(m *manifest.Manifest) { m.Limits.MaxOutputBytes = 128 << 20 })},
		{"a limit left to the default", "timeoutMs 1000 → 30000", wasmtest.NotesVersion(t, "notes1", "2.0.3", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 0 })},
		{"tool added", "tool deleteAll added", wasmtest.NotesVersion(t, "notes2", "2.1.0", same)},
		{"read-only tool made writing", "tool read: readOnly → writing", wasmtest.NotesVersion(t, "notes3", "2.2.0", same)},
		{"capability added", "capability progress added", wasmtest.NotesVersion(t, "notes1", "2.3.0", func(m *manifest.Manifest) { m.Capabilities = append(m.Capabilities, "progress") })},
		{"host added", "host evil.example.org added", wasmtest.NotesVersion(t, "notes1", "2.4.0", func(m *manifest.Manifest) {
			m.Limits.AllowedHosts = append(m.Limits.AllowedHosts, "evil.example.org")
		})},
	}
}

// TestWideningUpgradeNeedsConfirmation: each kind of widening is refused
// unconfirmed (the loaded version serves on, its file is unchanged, the
// refusal is logged and recorded with the widening), and applied when the
// admin confirms it, recorded with who and what. A narrowing upgrade needs
// nothing.
func TestWideningUpgradeNeedsConfirmation(t *testing.T) {
	ctx := context.Background()
	for _, w := range widenings(t) {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			logs := &bytes.Buffer{}
			audit := &auditLog{}
			h := newHost(t)
			d, err := installed.Open(ctx, dir, h, slog.New(slog.NewTextHandler(logs, nil)), installed.Options{Audit: audit})
			if err != nil {
				t.Fatal(err)
			}
			v1 := narrowNotes(t)
			by := installed.Actor{TenantID: "ops", UserID: "u1"}
			if _, err := d.Install(ctx, v1, by); err != nil {
				t.Fatal(err)
			}
			if r := audit.last(); r.Action != store.PluginInstalled || r.ActorUser != "u1" || r.ToVersion != "1.0.0" || r.ToSHA256 == "" {
				t.Fatalf("install record %+v", r)
			}
			_, _, _, err = d.Upgrade(ctx, w.module, installed.UpgradeOptions{Actor: by})
			var we *installed.WideningError
			if !errors.As(err, &we) || !errors.Is(err, installed.ErrWidening) || len(we.Widenings) != 1 || we.Widenings[0].String() != w.want {
				t.Fatalf("unconfirmed: %v, want the one widening %q", err, w.want)
			}
			if p, _ := h.Plugin("notes"); p.Manifest().Version != "1.0.0" {
				t.Fatalf("%s runs after a refused upgrade", p.Manifest().Version)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "notes.wasm")); !bytes.Equal(b, v1) {
				t.Fatal("the refused version was written")
			}
			if r := audit.last(); r.Action != store.PluginUpgradeRefused || !r.Widened || r.FromVersion != "1.0.0" || r.ToVersion == "" || r.AllowedBy != "" {
				t.Fatalf("refusal record %+v", r)
			}
			if !strings.Contains(logs.String(), "plugin upgrade refused") || !strings.Contains(logs.String(), w.want) {
				t.Fatalf("the refusal is not logged with the widening:\n%s", logs)
			}
			p, old, changes, err := d.Upgrade(ctx, w.module, installed.UpgradeOptions{ConfirmWidening: true, Actor: installed.Actor{TenantID: "ops", UserID: "u2"}})
			if err != nil || old.Manifest().Version != "1.0.0" || len(manifest.Widenings(changes)) != 1 {
				t.Fatalf("confirmed: %v %v", err, changes)
			}
			r := audit.last()
			if r.Action != store.PluginUpgraded || r.ActorUser != "u2" || r.ActorTenant != "ops" || r.FromVersion != "1.0.0" || r.ToVersion != p.Manifest().Version ||
				r.FromSHA256 != old.SHA256() || r.ToSHA256 != p.SHA256() || !r.Widened || r.AllowedBy != "confirmed" || manifest.Widenings(r.Changes)[0].String() != w.want {
				t.Fatalf("upgrade record %+v", r)
			}
		})
	}
}

// TestWideningPolicyAndNarrowing: the operator's policy lets a widening
// through unconfirmed (recorded as the policy's); a narrowing upgrade and a
// removal need nothing and are recorded.
func TestWideningPolicyAndNarrowing(t *testing.T) {
	ctx := context.Background()
	audit := &auditLog{}
	d, err := installed.Open(ctx, t.TempDir(), newHost(t), slog.New(slog.DiscardHandler), installed.Options{Audit: audit, MayWiden: true})
	if err != nil {
		t.Fatal(err)
	}
	by := installed.Actor{TenantID: "ops", UserID: "u1"}
	if _, err := d.Install(ctx, narrowNotes(t), by); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := d.Upgrade(ctx, wasmtest.NotesVersion(t, "notes1", "2.0.0", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 }), installed.UpgradeOptions{Actor: by}); err != nil {
		t.Fatalf("a widening under the policy: %v", err)
	}
	if r := audit.last(); r.AllowedBy != "policy" || !r.Widened {
		t.Fatalf("policy record %+v", r)
	}
	narrow := wasmtest.NotesVersion(t, "notes1", "3.0.0", func(m *manifest.Manifest) {
		m.Limits.TimeoutMs, m.Limits.AllowedHosts, m.Capabilities = 500, nil, nil
	})
	d2, err := installed.Open(ctx, t.TempDir(), newHost(t), slog.New(slog.DiscardHandler), installed.Options{Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Install(ctx, narrowNotes(t), by); err != nil {
		t.Fatal(err)
	}
	_, _, changes, err := d2.Upgrade(ctx, narrow, installed.UpgradeOptions{Actor: by})
	if err != nil || len(changes) != 3 || len(manifest.Widenings(changes)) != 0 {
		t.Fatalf("a narrowing upgrade: %v %v", err, changes)
	}
	if r := audit.last(); r.Action != store.PluginUpgraded || r.Widened || r.AllowedBy != "" || len(r.Changes) != 3 {
		t.Fatalf("narrowing record %+v", r)
	}
	if _, err := d2.Remove(ctx, "notes", "", installed.Actor{TenantID: "ops", UserID: "u3"}); err != nil {
		t.Fatal(err)
	}
	if r := audit.last(); r.Action != store.PluginRemoved || r.ActorUser != "u3" || r.FromVersion != "3.0.0" || r.FromSHA256 == "" {
		t.Fatalf("removal record %+v", r)
	}
}

// TestFileSwappedOnDisk: a plugin file replaced in the directory behind the
// API's back (a widened build copied over it) is not loaded at the next
// start, said in the log; under the policy that upgrades may widen it
// loads, with a warning. A plugin the audit log does not know loads.
func TestFileSwappedOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	audit := &auditLog{}
	d, err := installed.Open(ctx, dir, newHost(t), slog.New(slog.DiscardHandler), installed.Options{Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Install(ctx, narrowNotes(t), installed.Actor{TenantID: "ops", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	// Unchanged, it loads at a start as it was installed.
	same := newHost(t)
	if _, err := installed.Open(ctx, dir, same, slog.New(slog.DiscardHandler), installed.Options{Audit: audit}); err != nil {
		t.Fatal(err)
	}
	if _, ok := same.Plugin("notes"); !ok {
		t.Fatal("the installed build is not loaded at a start")
	}
	wide := wasmtest.NotesVersion(t, "notes2", "9.0.0", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 })
	if err := os.WriteFile(filepath.Join(dir, "notes.wasm"), wide, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), wasmtest.Module(t, "echo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		mayWiden bool
		loaded   bool
		log      string
	}{
		{"refused", false, false, "changed outside the API: NOT loaded"},
		{"the policy lets it widen", true, true, "changed outside the API: loaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			h := newHost(t)
			if _, err := installed.Open(ctx, dir, h, slog.New(slog.NewTextHandler(logs, nil)), installed.Options{Audit: audit, MayWiden: tc.mayWiden}); err != nil {
				t.Fatal(err)
			}
			if _, ok := h.Plugin("notes"); ok != tc.loaded {
				t.Fatalf("notes loaded: %v, want %v", ok, tc.loaded)
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Fatalf("log:\n%s", logs)
			}
			if _, ok := h.Plugin("echo"); !ok {
				t.Fatal("echo, which the audit log does not know, is not loaded")
			}
		})
	}
}
