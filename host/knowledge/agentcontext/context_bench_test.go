package agentcontext_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/agentcontext"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/memory"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/pdk/content"
)

// BenchmarkContextBuild reports agent.context.build.p50 ms: one round's
// context on the embedded store holding 10,000 chunks (ten documents of a
// workspace, words drawn by Zipf's law) and a workflow with ten entities and
// five tool results: both layer searches (15 + 10 hits), the memory reads
// and the assembly into a 6,000-token budget with the real tokenizer.
func BenchmarkContextBuild(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := store.Open(ctx, store.Config{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	blobs, err := blob.NewDir(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	tn, _ := db.CreateTenant(ctx, "bench")
	ws, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "ws"})
	u, _ := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@bench"})
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		b.Fatal(err)
	}
	p := tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	svc := files.NewService(db, blobs, 0)
	rng := rand.New(rand.NewPCG(1, 10_000))
	zipf := rand.NewZipf(rng, 1.1, 2, 50_000)
	word := func(k uint64) string { return fmt.Sprintf("w%d", k) }
	for doc := range 10 {
		f, _, err := svc.Upload(ctx, p, files.Upload{WorkspaceID: ws.ID, Name: fmt.Sprintf("doc-%d.txt", doc), Content: strings.NewReader(fmt.Sprint("document ", doc))})
		if err != nil {
			b.Fatal(err)
		}
		chunks := make([]kindex.Chunk, 1000)
		for i := range chunks {
			ws := make([]string, 60)
			for w := range ws {
				ws[w] = word(zipf.Uint64())
			}
			chunks[i] = kindex.Chunk{ID: fmt.Sprint(i), Seq: i, ObjectID: fmt.Sprint(i), ContentType: content.Text,
				Text: strings.Join(ws, " "), Ref: content.Ref{PageIndex: i/10 + 1}, Tokens: 60}
		}
		if _, err := db.ClaimContent(ctx, tn.ID, f.SHA256, false); err != nil {
			b.Fatal(err)
		}
		if err := db.SaveContent(ctx, tn.ID, f.SHA256, content.Index{}, chunks, kindex.StatusIndexed); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	wf, err := workflows.NewService(db, nil, nil).Start(ctx, p, workflows.NewWorkflow{WorkspaceID: ws.ID, Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		if _, err := db.UpsertMemory(ctx, p, kindex.Memory{WorkflowID: wf.ID, Key: fmt.Sprintf("entity:fact%d", i), Value: "value " + fmt.Sprint(i), Source: kindex.MemoryExtraction}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := db.UpsertMemory(ctx, p, memory.ToolResult(wf.ID, fmt.Sprint("call", i), "search", true, strings.Repeat("result text ", 100))); err != nil {
			b.Fatal(err)
		}
	}
	builder := agentcontext.NewContextBuilder(search.New(db, nil, nil), db, agentcontext.ContextConfig{}, nil)
	var ds []time.Duration
	for i := range 60 {
		q := word(uint64(20+i)) + " " + word(uint64(120+i))
		start := time.Now()
		ac := builder.Build(ctx, agentcontext.ContextRequest{Principal: p, WorkspaceID: ws.ID, WorkflowID: wf.ID, Prompt: q,
			Summary: "The user works through the documents.", Model: "gpt-4o-mini", Budget: 6000})
		if i >= 10 { // warm-up: the tokenizer's first use, SQLite's caches
			ds = append(ds, time.Since(start))
		}
		if ac.Degraded != nil || len(ac.Sources) == 0 {
			b.Fatalf("query %q: %d sources, %v", q, len(ac.Sources), ac.Degraded)
		}
	}
	figure.Report("agent.context.build.p50", figure.Millis(figure.Percentile(ds, 50)), "ms")
}
