package main

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// shareScript answers the share test's one question: "Zitiere Datei ID"
// calls getFileInfo on the file, then answers in German citing its first
// page (umlauts, ß and € for the PDF export to carry) after a greeting in
// Russian, Greek and Chinese (the PDF's embedded fonts carry those too).
func shareScript(req llmtest.ChatRequest) llmtest.Step {
	q := lastUser(req)
	id := uuidRe.FindString(q)
	done := false
	for _, m := range req.Messages {
		if m.Role == "tool" {
			done = true
		}
	}
	switch {
	case strings.Contains(q, "Zitiere Datei") && !done:
		return llmtest.CallTools(llmtest.Call("getFileInfo", `{"file":"`+id+`"}`))
	case strings.Contains(q, "Zitiere Datei"):
		return llmtest.Reply("Привет, Καλημέρα, 你好！ Grüße aus München! Das [Handbuch, Seite 1](docItem:" + id + "#page=1) nennt **Äpfel**, Öl und Übermaß für 12 €.")
	}
	return llmtest.Reply("Noted: " + q)
}

// TestBrowserShare drives a shared conversation in headless Chromium
// (host/webui/e2e/share.test.mjs) against serve: Ada asks a question whose
// answer calls a tool and cites a file, exports it as Markdown and as PDF
// (the PDF written by the document plugin; its text, umlauts included, is
// read back with poppler's pdftotext), and shares it; Bea, a member of the
// same workspace, finds it under "shared with me" and reads it with no
// composer and no action that changes it, labelled as Ada's, and exports
// it too; Carl, a member of another workspace of the same organisation,
// neither sees nor opens it. Each view is checked with axe-core.
func TestBrowserShare(t *testing.T) {
	e2e := browserPrereqs(t)
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext (poppler-utils) is missing")
		}
		t.Skip("pdftotext (poppler-utils) is missing")
	}
	ctx := context.Background()
	model := llmtest.New(t, llmtest.WithDefault(llmtest.Decide(shareScript)), llmtest.WithChunkSize(8))
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
	// Bea in Ada's workspace, Carl in another workspace of the same
	// organisation, written before the server starts.
	db, err := store.Open(ctx, store.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	ada, err := db.Authenticate(ctx, tok[1])
	if err != nil {
		t.Fatal(err)
	}
	person := func(email, name, workspace string) string {
		u, err := db.CreateUser(ctx, tenancy.User{TenantID: ada.TenantID, Email: email, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: workspace, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
		_, secret, err := db.CreateToken(ctx, u.ID, "browser test", nil)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	beaTok := person("bea@acme.example", "Bea", ws[1])
	team, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: ada.TenantID, Name: "Other team"})
	if err != nil {
		t.Fatal(err)
	}
	carlTok := person("carl@acme.example", "Carl", team.ID)
	db.Close()

	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "sk-test")
	t.Setenv("AGENTHOST_MODEL_AGENT", "gpt-4o-mini")
	server := startChild(t, "serve", "-data", data, "-addr", addr)
	server.waitFor(t, "agenthost listening")
	base := "http://" + addr
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if i > 3000 {
			t.Fatalf("no health:\n%s", server.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts", "share"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "share.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+base, "UI_WS="+ws[1], "UI_TOKEN="+tok[1], "UI_BEA_TOKEN="+beaTok,
		"UI_CARL_TOKEN="+carlTok, "UI_CARL_WS="+team.ID, "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("share.test.mjs:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("share.test.mjs failed: %v\nserver log tail:\n%s", err, tail(server.stderr(), 40))
	}
	// The failed file was indexed twice: on upload and when asked again.
	blob := regexp.MustCompile(`reindexed (\S+)`).FindStringSubmatch(stdout.String())
	if blob == nil {
		t.Fatalf("share.test.mjs named no re-indexed file: %s", stdout.String())
	}
	// The queue's own table (read only, beside the running server) holds
	// both ingestion jobs, the second one marked as asked again, and both
	// extracted the file and failed (a failure no attempt mends ends a job
	// cancelled; a job that found the content taken would end completed).
	jobsDB, err := sql.Open("sqlite", "file:"+filepath.Join(data, "agenthost.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer jobsDB.Close()
	rows, err := jobsDB.Query(`SELECT json(args), state FROM river_job WHERE kind = 'knowledge.ingest' AND json_extract(args, '$.fileId') = ? ORDER BY id`, blob[1])
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var runs []string
	for rows.Next() {
		var args, state string
		if err := rows.Scan(&args, &state); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, args+" "+state)
	}
	ran := func(r string) bool { return strings.HasSuffix(r, " cancelled") }
	if len(runs) != 2 || strings.Contains(runs[0], `"again"`) || !strings.Contains(runs[1], `"again"`) || !ran(runs[0]) || !ran(runs[1]) {
		t.Fatalf("ingestion jobs of the re-indexed file: %q", runs)
	}
	noCrash(t, server)
}
