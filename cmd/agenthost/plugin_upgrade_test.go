package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// sendModule sends a plugin module (or nothing) with the admin's token and
// returns the status and body.
func sendModule(t *testing.T, base, token, method, path string, module []byte) (int, []byte) {
	t.Helper()
	var body io.Reader
	if module != nil {
		body = bytes.NewReader(module)
	}
	req, _ := http.NewRequest(method, base+path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	if module != nil {
		req.Header.Set("Content-Type", "application/wasm")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestServeRefusesWideningUpgrades: through serve over HTTP, each kind of
// widening of an installed plugin is refused with 409 naming it, the
// loaded version serving on; with confirmWidening it is applied, and
// going back, a narrowing, needs nothing. `plugin upgrade` prints the
// widenings and applies them with -confirm. The audit log holds every
// change: who, what, the versions and digests, the diff.
func TestServeRefusesWideningUpgrades(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	data := t.TempDir()
	boot, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Ops", "-email", "admin@ops.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	tenant := regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(boot)
	user := regexp.MustCompile(`(?m)^user (\S+) \(admin\)$`).FindStringSubmatch(boot)
	creds := tokenLine.FindStringSubmatch(boot)
	if tenant == nil || user == nil || creds == nil {
		t.Fatalf("bootstrap printed %q", boot)
	}
	token := creds[2]
	logs := &syncBuffer{}
	base := serveInProcess(t, logs, "-data", data, "-allow-unsigned", "-plugin-admins", tenant[1], "-grant", "notes=http,progress")

	loaded := func() string {
		t.Helper()
		_, b := sendModule(t, base, token, http.MethodGet, "/api/v1/plugins", nil)
		var list []struct{ Name, Version string }
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatalf("plugins: %v %s", err, b)
		}
		for _, p := range list {
			if p.Name == "notes" {
				return p.Version
			}
		}
		return ""
	}
	narrow := func(v string) []byte { return wasmtest.NotesVersion(t, "notes1", v, func(*manifest.Manifest) {}) }
	if st, b := sendModule(t, base, token, http.MethodPost, "/api/v1/plugins", narrow("1.0.0")); st != http.StatusCreated {
		t.Fatalf("install: %d %s", st, b)
	}
	same := func(*manifest.Manifest) {}
	cases := []struct {
		name, want string
		module     []byte
	}{
		{"timeout", "timeoutMs 1000 → 600000", wasmtest.NotesVersion(t, "notes1", "2.0.0", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 })},
		{"memory", "memoryMiB 64 → 1024", wasmtest.NotesVersion(t, "notes1", "2.1.0", func(m *manifest.Manifest) { m.Limits.MemoryMiB = 1024 })},
		{"output to the ceiling", "maxOutputBytes 1048576 → 134217728", wasmtest.NotesVersion(t, "notes1", "2.2.0", func(m *manifest.Manifest) { m.Limits.MaxOutputBytes = 128 << 20 })},
		{"tool added", "tool deleteAll added", wasmtest.NotesVersion(t, "notes2", "2.3.0", same)},
		{"read-only tool made writing", "tool read: readOnly → writing", wasmtest.NotesVersion(t, "notes3", "2.4.0", same)},
		{"capability added", "capability progress added", wasmtest.NotesVersion(t, "notes1", "2.5.0", func(m *manifest.Manifest) { m.Capabilities = append(m.Capabilities, "progress") })},
		{"host added", "host evil.example.org added", wasmtest.NotesVersion(t, "notes1", "2.6.0", func(m *manifest.Manifest) {
			m.Limits.AllowedHosts = append(m.Limits.AllowedHosts, "evil.example.org")
		})},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := loaded()
			st, b := sendModule(t, base, token, http.MethodPut, "/api/v1/plugins/notes", tc.module)
			var problem struct {
				Title     string   `json:"title"`
				Detail    string   `json:"detail"`
				Widenings []string `json:"widenings"`
			}
			if st != http.StatusConflict || json.Unmarshal(b, &problem) != nil || len(problem.Widenings) != 1 || problem.Widenings[0] != tc.want ||
				!strings.Contains(problem.Detail, tc.want) {
				t.Fatalf("unconfirmed: %d %s, want 409 listing %q", st, b, tc.want)
			}
			if v := loaded(); v != before {
				t.Fatalf("%s runs after a refused upgrade, want %s", v, before)
			}
			st, b = sendModule(t, base, token, http.MethodPut, "/api/v1/plugins/notes?confirmWidening=true", tc.module)
			var change struct {
				Plugin  struct{ Version string }
				Changes []manifest.Change
			}
			if st != http.StatusOK || json.Unmarshal(b, &change) != nil || len(manifest.Widenings(change.Changes)) != 1 {
				t.Fatalf("confirmed: %d %s", st, b)
			}
			if v := loaded(); v != change.Plugin.Version {
				t.Fatalf("%s runs after the confirmed upgrade to %s", v, change.Plugin.Version)
			}
			// Back to the narrow manifest: a narrowing, applied as asked.
			if st, b := sendModule(t, base, token, http.MethodPut, "/api/v1/plugins/notes", narrow(fmt.Sprintf("1.0.%d", i+1))); st != http.StatusOK {
				t.Fatalf("narrowing back: %d %s", st, b)
			}
		})
	}

	// The command: the widening printed, nothing applied; with -confirm applied.
	file := filepath.Join(t.TempDir(), "notes.wasm")
	if err := os.WriteFile(file, wasmtest.NotesVersion(t, "notes2", "3.0.0", func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 }), 0o644); err != nil {
		t.Fatal(err)
	}
	remote := []string{"-server", base, "-token", token}
	out, _, err := run0(t, append([]string{"plugin", "upgrade", file}, remote...)...)
	if err == nil || !strings.Contains(err.Error(), "-confirm") || !strings.Contains(out, "  timeoutMs 1000 → 600000\n") || !strings.Contains(out, "  tool deleteAll added\n") {
		t.Fatalf("plugin upgrade without -confirm: %v\n%s", err, out)
	}
	if v := loaded(); v == "3.0.0" {
		t.Fatal("the unconfirmed upgrade was applied")
	}
	out, stderr, err = run0(t, append([]string{"plugin", "upgrade", file, "-confirm"}, remote...)...)
	if err != nil || !strings.Contains(out, "upgraded notes 3.0.0") || !strings.Contains(out, "  timeoutMs 1000 → 600000 (widens)\n") {
		t.Fatalf("plugin upgrade -confirm: %v\n%s%s", err, out, stderr)
	}
	if st, b := sendModule(t, base, token, http.MethodDelete, "/api/v1/plugins/notes", nil); st != http.StatusOK {
		t.Fatalf("remove: %d %s", st, b)
	}

	// The audit log: every change, by whom, from what to what.
	st, b := sendModule(t, base, token, http.MethodGet, "/api/v1/plugins/audit?plugin=notes", nil)
	var recs []store.PluginAuditRecord
	if st != http.StatusOK || json.Unmarshal(b, &recs) != nil {
		t.Fatalf("audit: %d %s", st, b)
	}
	var got []string
	for _, r := range recs {
		if r.ActorTenant != tenant[1] || r.ActorUser != user[1] || r.Plugin != "notes" {
			t.Errorf("record by %s/%s of %s", r.ActorTenant, r.ActorUser, r.Plugin)
		}
		got = append(got, fmt.Sprintf("%s %s→%s %s", r.Action, r.FromVersion, r.ToVersion, r.AllowedBy))
	}
	want := []string{"install →1.0.0 "}
	from := "1.0.0"
	for i := range cases {
		to := fmt.Sprintf("2.%d.0", i)
		want = append(want, "upgrade-refused "+from+"→"+to+" ", "upgrade "+from+"→"+to+" confirmed", fmt.Sprintf("upgrade %s→1.0.%d ", to, i+1))
		from = fmt.Sprintf("1.0.%d", i+1)
	}
	want = append(want, "upgrade-refused "+from+"→3.0.0 ", "upgrade "+from+"→3.0.0 confirmed", "remove 3.0.0→ ")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, tc := range cases {
		refused, applied := recs[1+3*i], recs[2+3*i]
		for _, r := range []store.PluginAuditRecord{refused, applied} {
			if !r.Widened || len(manifest.Widenings(r.Changes)) != 1 || manifest.Widenings(r.Changes)[0].String() != tc.want || r.FromSHA256 == "" || r.ToSHA256 == "" || r.At.IsZero() {
				t.Errorf("%s: record %+v", tc.name, r)
			}
		}
		if back := recs[3+3*i]; back.Widened || len(back.Changes) == 0 {
			t.Errorf("%s: the narrowing's record %+v", tc.name, back)
		}
	}
	// The same log through the command.
	out, stderr, err = run0(t, "plugin", "audit", "-plugin", "notes", "-server", base, "-token", token)
	if err != nil || !strings.Contains(out, " upgrade-refused notes 1.0.7 → 3.0.0 by "+tenant[1]+"/"+user[1]+"\n  timeoutMs 1000 → 600000 (widens)\n") ||
		!strings.Contains(out, " upgrade notes 1.0.7 → 3.0.0 by "+tenant[1]+"/"+user[1]+" (widening confirmed)\n") || !strings.Contains(out, " remove notes 3.0.0 by ") {
		t.Fatalf("plugin audit: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(logs.String(), "plugin upgrade refused") {
		t.Fatalf("the refusals are not in the server's log:\n%s", logs.String())
	}
}
