package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// TestServeFreshDataDirectory stores blobs through `serve` started on a data
// directory that does not exist yet, on both databases: an upload over HTTP
// (its bytes read back, its text indexed and found) and `agenthost run -file`
// (which uploads through the SDK). On PostgreSQL the blobs live in the
// database and the data directory holds only their staging folder, which
// nothing created before the first upload: every upload answered 500.
func TestServeFreshDataDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	model.SetDefault(llmtest.EndpointChat, llmtest.Reply("The memo is about the budget."))
	for _, db := range []struct {
		name     string
		database func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			database := db.database(t)
			data := filepath.Join(t.TempDir(), "fresh", "data")
			storage := []string{"-data", data, "-database", database}
			if database != "" {
				if _, stderr, err := run0(t, append([]string{"migrate"}, storage...)...); err != nil {
					t.Fatalf("migrate: %v\n%s", err, stderr)
				}
			}
			out, stderr, err := run0(t, append([]string{"admin", "bootstrap", "-tenant", "Acme", "-email", "ada@acme.example"}, storage...)...)
			if err != nil {
				t.Fatalf("bootstrap: %v\n%s", err, stderr)
			}
			m := tokenLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("bootstrap printed %q", out)
			}
			ws, token := m[1], m[2]
			logs := &syncBuffer{}
			base := serveInProcess(t, logs, storage...)
			t.Cleanup(http.DefaultClient.CloseIdleConnections)
			api := func(method, path string, body io.Reader, ctype string) (int, []byte) {
				t.Helper()
				req, _ := http.NewRequest(method, base+"/api/v1"+path, body)
				req.Header.Set("Authorization", "Bearer "+token)
				if ctype != "" {
					req.Header.Set("Content-Type", ctype)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, raw
			}

			// An upload over HTTP: stored, read back whole, indexed, found.
			pdf := testpdf.OnePage("Quarterly memo on the hardware budget")
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			part, _ := mw.CreateFormFile("file", "memo.pdf")
			part.Write(pdf)
			mw.Close()
			var f struct{ ID string }
			if st, raw := api("POST", "/workspaces/"+ws+"/files", &body, mw.FormDataContentType()); st != 201 || json.Unmarshal(raw, &f) != nil || f.ID == "" {
				t.Fatalf("upload: %d %s", st, raw)
			}
			if st, raw := api("GET", "/files/"+f.ID+"/content", nil, ""); st != 200 || !bytes.Equal(raw, pdf) {
				t.Fatalf("content: %d, %d bytes; want the %d uploaded", st, len(raw), len(pdf))
			}
			// No deadline of its own: the first extraction's time depends on
			// the machine; the test binary's -timeout bounds it.
			for ; ; time.Sleep(100 * time.Millisecond) {
				var idx struct {
					Status kindex.Status
					Error  string
				}
				st, raw := api("GET", "/files/"+f.ID+"/index", nil, "")
				if st == 200 {
					if err := json.Unmarshal(raw, &idx); err != nil {
						t.Fatal(err)
					}
				}
				if idx.Status == kindex.StatusIndexed {
					break
				}
				if idx.Status == kindex.StatusFailed {
					t.Fatalf("indexing failed: %s", idx.Error)
				}
			}
			if st, raw := api("GET", "/workspaces/"+ws+"/search?q=hardware+budget", nil, ""); st != 200 || !strings.Contains(string(raw), f.ID) {
				t.Fatalf("search: %d %s", st, raw)
			}

			// `run -file` uploads through the SDK, then asks.
			doc := filepath.Join(t.TempDir(), "notes.pdf")
			if err := os.WriteFile(doc, testpdf.OnePage("Travel notes of the second quarter"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			var stdout, stderrRun syncBuffer
			if err := run(ctx, []string{"run", "What is the memo about?", "-file", doc, "-url", base, "-token", token}, &stdout, &stderrRun); err != nil {
				t.Fatalf("run -file: %v\n%s", err, stderrRun.String())
			}
			if !strings.Contains(stderrRun.String(), "uploaded notes.pdf") || !strings.Contains(stdout.String(), "about the budget") {
				t.Fatalf("run -file printed:\n%s\n%s", stderrRun.String(), stdout.String())
			}
			if strings.Contains(logs.String(), "staging") {
				t.Errorf("serve's log mentions staging:\n%s", logs.String())
			}
		})
	}
}
