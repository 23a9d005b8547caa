package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
)

// queuedReindexes records what POST /files/:id/reindex hands on (the
// indexing job itself runs in cmd/agenthost's browser test).
type queuedReindexes struct {
	mu  sync.Mutex
	ids []string
}

func (q *queuedReindexes) Reindex(_ context.Context, f filemeta.Item) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, f.ID)
	return nil
}

// TestReindexFile: a failed file is queued again for a member who may
// write; a viewer, a member of another workspace and a file indexed, being
// indexed or waiting for its password are refused, and nothing is queued
// for them.
func TestReindexFile(t *testing.T) {
	ts := server(t)
	q, base := ts.reindexes, ts.base
	ctx := context.Background()
	upload := func(name, content string, status kindex.Status, reason string) filemeta.Item {
		t.Helper()
		body, ct := multipartBody(t, name, []byte(content), nil)
		code, _, raw := do(t, base, call{"POST", "/workspaces/" + ts.wsA + "/files", ts.alice, ct, body})
		if code != 201 {
			t.Fatalf("upload: %d %s", code, raw)
		}
		var f filemeta.Item
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if status != "" {
			if _, err := ts.db.ClaimContent(ctx, f.TenantID, f.SHA256, false); err != nil {
				t.Fatal(err)
			}
			if err := ts.db.SetContentStatus(ctx, f.TenantID, f.SHA256, status, reason); err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
	failed := upload("blob.bin", "\x00\x01 not a document", kindex.StatusFailed, "no extractor for this type: application/octet-stream")
	indexed := upload("notes.md", "# indexed", kindex.StatusIndexed, "")
	running := upload("draft.md", "# being indexed", kindex.StatusExtracted, "")
	locked := upload("locked.zip", "PK locked", kindex.StatusFailed, kindex.ReasonEncrypted+"locked.zip needs its password")

	cases := []struct {
		name   string
		file   string
		token  string
		status int
		detail string
	}{
		{"a viewer", failed.ID, ts.victor, 403, "write access"},
		{"a member of another workspace", failed.ID, ts.carol, 404, "not found"},
		{"an unknown file", "nope", ts.alice, 404, "not found"},
		{"indexed already", indexed.ID, ts.alice, 409, "indexed already"},
		{"being indexed", running.ID, ts.alice, 409, "being indexed (extracted)"},
		{"waiting for its password", locked.ID, ts.alice, 409, "needs its password"},
		{"failed, by a member", failed.ID, ts.alice, 202, `"status":"pending"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, raw := do(t, base, call{"POST", "/files/" + c.file + "/reindex", c.token, "", nil})
			if code != c.status || !strings.Contains(string(raw), c.detail) {
				t.Fatalf("%d %s, want %d with %q", code, raw, c.status, c.detail)
			}
		})
	}
	if len(q.ids) != 1 || q.ids[0] != failed.ID {
		t.Fatalf("queued %v, want only %s", q.ids, failed.ID)
	}
}
