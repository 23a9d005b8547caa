package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/mcpclient/referencetest"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// TestBrowserAdmin drives the admin console in headless Chromium
// (host/webui/e2e/admin.test.mjs) against serve: a tenant admin opens each
// view (workspaces and members, tool sets, plugins with grants, MCP servers
// and providers, spending and usage with its chart, background jobs, the
// audit log with filters and export links), each checked with axe-core
// (the tool set with an MCP server that died: its tools unavailable, with
// why); a
// member who is no admin sees no console and the API refuses them.
func TestBrowserAdmin(t *testing.T) {
	e2e := browserPrereqs(t)
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	if tok == nil || ws == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	// Usage over three days (the chart's bars) and a member who is no
	// admin, written in the database before the server starts: usage
	// comes from model calls, which need a model this test has no use for.
	db, err := store.Open(ctx, store.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, tok[1])
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, cost := range []float64{0.42, 1.25, 0.08} {
		r := ledger.Record{TenantID: admin.TenantID, WorkspaceID: ws[1], UserID: admin.UserID, Purpose: "agent",
			CreatedAt: now.Add(-time.Duration(2-i) * 24 * time.Hour),
			Usage: modeluse.Usage{Operation: modeluse.OpAgent, Provider: "openai", Model: "gpt-4o-mini", PromptTokens: 1000 * (i + 1),
				CompletionTokens: 100 * (i + 1), Cost: money.FromCHF(cost)}}
		if err := db.InsertUsage(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	member, err := db.CreateUser(ctx, tenancy.User{TenantID: admin.TenantID, Email: "max@acme.example", Name: "Max"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws[1], UserID: member.ID, Role: tenancy.Role("member")}); err != nil {
		t.Fatal(err)
	}
	_, memberTok, err := db.CreateToken(ctx, member.ID, "browser test", nil)
	if err != nil {
		t.Fatal(err)
	}
	// What an upgrade changed, as `plugin upgrade` records it (the audit
	// view shows it; upgrading a plugin for real is plugin_upgrade_test's).
	if _, err := db.RecordPluginChange(ctx, store.PluginAuditRecord{ActorTenant: admin.TenantID, ActorUser: admin.UserID,
		Action: "upgrade", Plugin: "greeter", FromVersion: "0.1.0", ToVersion: "0.2.0", FromSHA256: "aa11", ToSHA256: "bb22",
		Changes: []manifest.Change{{What: "host api.example.com", To: "api.example.com", Widens: true}}, Widened: true, AllowedBy: "confirmed"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Connections on (a sealing key), so that the providers are listed.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_SECRET_KEY", base64.StdEncoding.EncodeToString(key))
	logs := &syncBuffer{}
	// An HTTP MCP server of the workspace (the reference server-everything)
	// that listed its tools and then died: the tool set view keeps them,
	// unavailable with the reason.
	ref := referencetest.StartHTTP(t)
	base := serveInProcess(t, logs, "-data", data, "-plugin-admins", admin.TenantID, "-allow-host", ref.Addr)
	authed := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok[1])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := authed("POST", "/api/v1/mcp-servers", `{"name":"remote","transport":"http","workspaceId":"`+ws[1]+`","url":"`+ref.URL+`","readOnly":["echo"]}`); code != http.StatusCreated {
		t.Fatalf("adding the MCP server: %d %s", code, b)
	}
	if code, b := authed("GET", "/api/v1/workspaces/"+ws[1]+"/tools", ""); code != 200 || !strings.Contains(string(b), `"remote_echo"`) {
		t.Fatalf("the tool set with the MCP server: %d %s", code, b)
	}
	ref.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		_, b := authed("GET", "/api/v1/workspaces/"+ws[1]+"/tools", "")
		if strings.Contains(string(b), `"unavailableSince"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead server's tools are not unavailable: %s", b)
		}
	}
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "admin.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+base, "UI_TOKEN="+tok[1], "UI_MEMBER_TOKEN="+memberTok,
		"UI_WORKSPACE="+ws[1], "UI_DOWN_TOOL=remote_echo", "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	b, err := cmd.CombinedOutput()
	t.Logf("admin.test.mjs:\n%s", b)
	if err != nil {
		t.Fatalf("admin.test.mjs: %v\nserver log tail:\n%s", err, tail(logs.String(), 30))
	}
	t.Logf("screenshots: %s", artefacts)
}
