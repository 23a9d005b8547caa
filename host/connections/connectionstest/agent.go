package connectionstest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/worldtest"
)

// Agent is the world of an agent using connection tools: a worldtest
// world with a started workflow and a scripted agent model, whose file
// service hands every new file to Index. Downloads land there through the
// file bridge, as the workflow's documents.
type Agent struct {
	*worldtest.World
	Index *Recorder
	// Files is the world's file service with Index as its indexer.
	Files *files.Service
}

// NewAgent builds an Agent whose workflow is named workflow.
func NewAgent(tb testing.TB, workflow string) *Agent {
	tb.Helper()
	w := worldtest.New(tb, worldtest.Options{Workflow: workflow, Model: &worldtest.Model{
		Models:  map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "agent-model", ContextWindow: 32000}}},
		Timeout: 20 * time.Second,
	}})
	rec := &Recorder{}
	return &Agent{World: w, Index: rec, Files: w.Files.WithIndexer(rec, nil)}
}

// FileBridge is the files capability the connection tools store
// downloads through, on Files and the world's workflows.
func (a *Agent) FileBridge() wasm.Capability {
	return a.Opener().Wasm()
}

// Opener is the files capability of FileBridge, which opens the files an
// upload names (connections.ToolsCapability Files).
func (a *Agent) Opener() *files.Capability {
	return &files.Capability{Files: a.Files, Workflows: a.Workflows}
}

// Context is what an agent round's tool calls run in: the world's user in
// its workflow, model use attributed to the agent.
func (a *Agent) Context() context.Context {
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: a.P, WorkspaceID: a.Workspace, WorkflowID: a.Workflow})
	return llm.WithAttribution(ctx, llm.Attribution{TenantID: a.Tenant.ID, WorkspaceID: a.Workspace, UserID: a.User.ID, WorkflowID: a.Workflow, Purpose: "agent"})
}

// Run scripts the model's answers, runs one agent round on prompt with
// h's tools named (all of them must be there) and ends the test unless
// the round completes after calls tool calls. It returns the requests the
// model received.
func (a *Agent) Run(tb testing.TB, h *wasm.Host, prompt string, toolNames []string, calls int, steps ...llmtest.Step) []llmtest.ChatRequest {
	tb.Helper()
	set, missing, err := tools.NewRegistry(h, map[string][]string{"conn": toolNames}).Set("conn")
	if err != nil || len(missing) != 0 {
		tb.Fatalf("tool set: %v %v", missing, err)
	}
	a.Server.Script(steps...)
	res := agent.New(a.Client, agent.Config{}, nil).Run(a.Context(), agent.Input{Prompt: prompt, Round: 1}, set, nil)
	if res.Outcome != agent.Completed || res.ToolCalls != calls {
		tb.Fatalf("run: %s, %d tool calls, %v", res.Outcome, res.ToolCalls, res.Err)
	}
	return a.Server.ChatRequests()
}

// File returns the world's user's file id and its content; the test ends
// when the user cannot read it.
func (a *Agent) File(tb testing.TB, id string) (filemeta.Item, []byte) {
	tb.Helper()
	return worldtest.ReadFile(tb, a.Files, a.P, id)
}

// Document returns the file of the workflow's document ref (a docItem a
// tool answered with) and its content.
func (a *Agent) Document(tb testing.TB, ref string) (filemeta.Item, []byte) {
	tb.Helper()
	docs, err := a.Workflows.ResolveDocuments(context.Background(), a.P, a.Workflow, []string{ref})
	if err != nil || len(docs) != 1 {
		tb.Fatalf("docItem: %v %v", docs, err)
	}
	return a.File(tb, docs[0].FileID)
}

// Ingest ingests file id as the ingestion queue would, with h's
// extractors, and ends the test unless it is then indexed.
func (a *Agent) Ingest(tb testing.TB, h *wasm.Host, id string) {
	tb.Helper()
	ctx := context.Background()
	ing := ingest.New(a.DB, a.Blobs, extract.New(h), nil)
	if _, err := ing.Ingest(ctx, id, false); err != nil {
		tb.Fatal(err)
	}
	if st, err := a.DB.ContentState(ctx, a.P, id); err != nil || st.Status != kindex.StatusIndexed {
		tb.Fatalf("content state of %s: %+v %v", id, st, err)
	}
}

// ToolResult is the tool message the model's i-th request ends with; the
// test ends when it ends with another message.
func ToolResult(tb testing.TB, reqs []llmtest.ChatRequest, i int) string {
	tb.Helper()
	m := reqs[i].Messages[len(reqs[i].Messages)-1]
	if m.Role != "tool" {
		tb.Fatalf("request %d ends with %+v", i, m)
	}
	return m.Content
}

// NeverSent fails the test when any of the model's requests holds one of
// the secrets (a token, a password).
func NeverSent(tb testing.TB, reqs []llmtest.ChatRequest, secrets ...string) {
	tb.Helper()
	for _, rq := range reqs {
		b, _ := json.Marshal(rq)
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				tb.Fatal("a secret reached the model")
			}
		}
	}
}

// Args is v as a tool call's JSON arguments.
func Args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// DocItemRef returns the first docItem reference in a tool's answer ("" when
// there is none).
func DocItemRef(s string) string {
	i := strings.Index(s, "docItem:")
	if i < 0 {
		return ""
	}
	j := i + len("docItem:")
	for j < len(s) && (s[j] == '-' || s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
		j++
	}
	return s[i:j]
}
