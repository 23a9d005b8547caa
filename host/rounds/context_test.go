package rounds_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/agentcontext"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// sharedPlugins is one host with the test extractor (textextract) and the
// notebook tools (lookup), shared by the tests of this file.
var sharedPlugins = wasmtest.NewShared("textextract", "notebook")

func plugins(t *testing.T) *wasm.Host { return sharedPlugins.Host(t) }

// kenv is a workspace service whose rounds get their context from the
// knowledge store: the embedded store, documents indexed by the test
// extractor plugin, a scripted model (agent "scripted", summary
// "summarizer", both priced) metered into the store's usage records.
type kenv struct {
	db       *store.DB
	wf       *workflows.Service
	files    *files.Service
	ingester *ingest.Pipeline
	srv      *llmtest.Server
	model    *llm.Client
	reg      *tools.Registry
	wsA, wsB string
	// alice is a member of A, pat has a personal role in A (reads only
	// their own files there), carol manages B.
	alice, pat, carol tenancy.Principal
	// admin is the tenant's admin (shares files with the tenant).
	admin tenancy.Principal
}

func newKEnv(t *testing.T, decide func(llmtest.ChatRequest) llmtest.Step) *kenv {
	t.Helper()
	ctx := context.Background()
	db, blobs := worldtest.Store(t)
	tn, _ := db.CreateTenant(ctx, "t")
	wsA, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "A"})
	wsB, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "B"})
	user := func(email, ws string, role tenancy.Role) tenancy.Principal {
		u, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws, UserID: u.ID, Role: role}); err != nil {
			t.Fatal(err)
		}
		return tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	}
	adm, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "admin@t", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	h := plugins(t)
	srv, client := worldtest.NewModel(t, db, worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{
			modeluse.OpAgent:   {{Model: "scripted", InputCHFPer1M: 1, OutputCHFPer1M: 2}},
			modeluse.OpSummary: {{Model: "summarizer", InputCHFPer1M: 0.5, OutputCHFPer1M: 1}},
		},
		Server:  []llmtest.Option{llmtest.WithDefault(llmtest.Decide(decide))},
		Retry:   llm.RetryConfig{Attempts: 1},
		Timeout: 10 * time.Second,
	})
	return &kenv{db: db, wf: workflows.NewService(db, workflows.NewBroker(db, workflows.BrokerConfig{}), nil),
		files: files.NewService(db, blobs, 0), ingester: ingest.New(db, blobs, extract.New(h), nil),
		srv: srv, model: client, reg: tools.NewRegistry(h, map[string][]string{"core": {"lookup"}}),
		wsA: wsA.ID, wsB: wsB.ID,
		alice: user("alice@t", wsA.ID, tenancy.RoleMember), pat: user("pat@t", wsA.ID, tenancy.RolePersonal),
		carol: user("carol@t", wsB.ID, tenancy.RoleManager), admin: tenancy.Principal{TenantID: tn.ID, UserID: adm.ID, Admin: true}}
}

// upload stores and indexes a document (synchronously, through the
// extractor plugin).
func (e *kenv) upload(t *testing.T, p tenancy.Principal, ws, name, body string) filemeta.Item {
	t.Helper()
	f, _, err := e.files.Upload(context.Background(), p, files.Upload{WorkspaceID: ws, Name: name, Content: bytes.NewReader([]byte(body))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ingester.Ingest(context.Background(), f.ID, false); err != nil {
		t.Fatal(err)
	}
	return f
}

// service is a workspace service over the env with the given knowledge
// (Builder nil: none).
func (e *kenv) service(k rounds.Knowledge) *rounds.Service {
	svc := rounds.New(e.wf, e.files, agent.New(e.model, agent.Config{}, nil), e.reg, e.db, rounds.Config{}, nil)
	return svc.WithKnowledge(k)
}

func (e *kenv) builder(cfg agentcontext.ContextConfig) *agentcontext.ContextBuilder {
	return agentcontext.NewContextBuilder(search.New(e.db, nil, nil), e.db, cfg, nil)
}

// run starts a round and waits for its end.
func (e *kenv) run(t *testing.T, svc *rounds.Service, p tenancy.Principal, ws string, req rounds.StartRequest) workflows.Workflow {
	t.Helper()
	w, err := svc.Start(context.Background(), p, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	w, err = e.wf.Get(context.Background(), p, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (e *kenv) answer(t *testing.T, p tenancy.Principal, id string) string {
	t.Helper()
	return lastAnswer(t, e.wf, p, id)
}

// contextOf is the context message of a model request ("" when none).
func contextOf(r llmtest.ChatRequest) string {
	if len(r.Messages) > 1 && r.Messages[1].Role == "system" && strings.HasPrefix(r.Messages[1].Content, "Context retrieved") {
		return r.Messages[1].Content
	}
	return ""
}

func agentRequests(srv *llmtest.Server) []llmtest.ChatRequest {
	var out []llmtest.ChatRequest
	for _, r := range srv.ChatRequests() {
		if r.Model == "scripted" {
			out = append(out, r)
		}
	}
	return out
}

var citeRE = regexp.MustCompile(`(?m)^\[1\] (.+)$`)

// citingModel answers from the context it is given: the first cited chunk's
// reference and the sentence of it that holds "CHF".
func citingModel(r llmtest.ChatRequest) llmtest.Step {
	ctx := contextOf(r)
	m := citeRE.FindStringSubmatch(ctx)
	if m == nil {
		return llmtest.Reply("I found nothing in your documents.")
	}
	fact := ""
	for _, line := range strings.Split(ctx, "\n") {
		if strings.Contains(line, "CHF") {
			fact = strings.TrimSpace(line)
			break
		}
	}
	return llmtest.Reply(fact + " [1] (" + m[1] + ")")
}

const policy = "# Travel policy\n\nEmployees travel by train where they can.\n\n" +
	"Hotel nights are reimbursed up to 180 CHF per night in Zurich and 150 CHF elsewhere.\n\nMeals are paid by the day."

// TestRoundContextFromDocuments: a document uploaded and indexed is found
// for the prompt; its chunk, with its reference, is in the request the model
// receives, and the model's answer cites it.
func TestRoundContextFromDocuments(t *testing.T) {
	e := newKEnv(t, citingModel)
	doc := e.upload(t, e.alice, e.wsA, "travel-policy.md", policy)
	svc := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db})
	defer svc.Close()

	w := e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "How much is a hotel night in Zurich reimbursed?"})
	if w.Status != workflows.StatusCompleted {
		t.Fatalf("status %s", w.Status)
	}
	reqs := agentRequests(e.srv)
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	ctx := contextOf(reqs[0])
	wantRef := "[1] travel-policy.md, paragraph 3 (file id " + doc.ID + ")\nHotel nights are reimbursed up to 180 CHF"
	if !strings.Contains(ctx, wantRef) {
		t.Fatalf("the model's request lacks the chunk %q:\n%s", wantRef, ctx)
	}
	if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Role != "user" || !strings.Contains(last.Content, "hotel night") {
		t.Fatalf("the prompt is not the last message: %+v", last)
	}
	answer := e.answer(t, e.alice, w.ID)
	if !strings.Contains(answer, "180 CHF") || !strings.Contains(answer, "[1] (travel-policy.md, paragraph 3") {
		t.Fatalf("answer does not cite the document: %q", answer)
	}

	// Without knowledge, the same request reaches the model with no context.
	bare := e.service(rounds.Knowledge{})
	defer bare.Close()
	w = e.run(t, bare, e.alice, e.wsA, rounds.StartRequest{Prompt: "How much is a hotel night in Zurich reimbursed?"})
	if got := e.answer(t, e.alice, w.ID); got != "I found nothing in your documents." {
		t.Fatalf("answer without context: %q", got)
	}
}

// TestRoundContextScope: a chunk of a file the user cannot read never enters
// the context; the tenant's shared documents do.
func TestRoundContextScope(t *testing.T) {
	e := newKEnv(t, citingModel)
	e.upload(t, e.alice, e.wsA, "salaries.md", "Hotel budget and salaries: the director earns 250000 CHF, reimbursed monthly.")
	e.upload(t, e.pat, e.wsA, "pat-notes.md", "My notes: hotel night in Zurich, ask how much is reimbursed.")
	handbook := e.upload(t, e.carol, e.wsB, "handbook.md", "Company handbook: a hotel night is reimbursed up to 180 CHF.")
	shared := true
	if _, err := e.files.Update(context.Background(), e.admin, handbook.ID, filemeta.Update{Shared: &shared}); err != nil {
		t.Fatal(err)
	}
	b := e.builder(agentcontext.ContextConfig{})
	const prompt = "How much is a hotel night reimbursed?"
	// The query does find alice's file for alice: what follows can fail.
	if r := b.Retrieve(context.Background(), e.alice, e.wsA, prompt); r.Err != nil || !strings.Contains(names(r.Instance), "salaries.md") {
		t.Fatalf("alice's retrieval: %s %v", names(r.Instance), r.Err)
	}

	svc := e.service(rounds.Knowledge{Builder: b, Memory: e.db})
	defer svc.Close()
	w := e.run(t, svc, e.pat, e.wsA, rounds.StartRequest{Prompt: prompt})
	if w.Status != workflows.StatusCompleted {
		t.Fatalf("status %s", w.Status)
	}
	ctx := contextOf(agentRequests(e.srv)[0])
	if strings.Contains(ctx, "salaries") || strings.Contains(ctx, "250000") {
		t.Fatalf("a file pat cannot read entered the context:\n%s", ctx)
	}
	inst := strings.Index(ctx, "## Documents of this workspace")
	shr := strings.Index(ctx, "## Shared documents of the organisation")
	if inst < 0 || shr < inst || !strings.Contains(ctx[inst:shr], "pat-notes.md") || !strings.Contains(ctx[shr:], "handbook.md") {
		t.Fatalf("context lacks pat's own file in the workspace section or the shared handbook in the shared one:\n%s", ctx)
	}
}

func names(hs []kindex.Hit) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.FileName)
	}
	return strings.Join(out, ",")
}

// entityModel: the agent looks up "revenue" once, then answers with what
// its context says of the company; the summary model extracts entities
// (reply decides what it returns).
func entityModel(reply string) func(llmtest.ChatRequest) llmtest.Step {
	return func(r llmtest.ChatRequest) llmtest.Step {
		if r.Model == "summarizer" {
			return llmtest.Reply(reply)
		}
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			ctx := contextOf(r)
			if i := strings.Index(ctx, "- company: "); i >= 0 {
				return llmtest.Reply("The company is " + strings.SplitN(ctx[i+len("- company: "):], "\n", 2)[0] + ".")
			}
			return llmtest.Reply("No company known.")
		}
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "again") {
			return llmtest.Reply("Answered from memory.")
		}
		return llmtest.CallTools(llmtest.Call("lookup", `{"topic":"revenue"}`))
	}
}

func (e *kenv) usage(t *testing.T, workflowID, purpose string) (int, float64) {
	t.Helper()
	var n int
	var cost float64
	if err := e.db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*), COALESCE(SUM(cost_nchf), 0) / 1000000000.0 FROM usage_records
		WHERE workflow_id = '`+workflowID+`' AND purpose = '`+purpose+`'`).Scan(&n, &cost); err != nil {
		t.Fatal(err)
	}
	return n, cost
}

// TestEntityCache: with the cache on, a round with tool results is followed
// by one extra call of the summary model, billed as "entities" and counted
// in the workflow's cost; its facts are in the next round's context and in
// the workflow's memory, beside the tool result. A malformed reply is
// ignored, and the cache is off by default.
func TestEntityCache(t *testing.T) {
	t.Run("on", func(t *testing.T) {
		e := newKEnv(t, entityModel("```json\n{\"company\": \"Acme AG\", \"revenueQ4\": \"12.5M CHF\", \"nested\": {\"x\": 1}, \"employees\": 42}\n```"))
		svc := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db, EntityCache: true, Model: e.model})
		defer svc.Close()
		w := e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "What does the company earn?"})
		if got := e.answer(t, e.alice, w.ID); got != "The company is Acme AG." {
			t.Fatalf("answer %q: the entity did not reach the next round's context", got)
		}
		n, cost := e.usage(t, w.ID, "entities")
		if n != 1 || cost <= 0 {
			t.Fatalf("entity calls billed: %d, CHF %f", n, cost)
		}
		_, agentCost := e.usage(t, w.ID, "agent")
		if w.Stats.CostCHF.CHF() < agentCost+cost-1e-9 {
			t.Fatalf("workflow cost %s does not count the entity call (agent %f + entities %f)", w.Stats.CostCHF, agentCost, cost)
		}
		mem, err := e.db.Memories(context.Background(), e.alice, w.ID, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range mem {
			got[m.Key] = string(m.Source) + "=" + m.Value
		}
		if got["entity:company"] != "extraction=Acme AG" || got["entity:revenueQ4"] != "extraction=12.5M CHF" || got["entity:employees"] != "extraction=42" {
			t.Fatalf("memory: %v", got)
		}
		if _, ok := got["entity:nested"]; ok {
			t.Fatal("a nested value was kept as an entity")
		}
		tools := 0
		for k, v := range got {
			if strings.HasPrefix(k, "tool:") && strings.Contains(v, "the fact about revenue") {
				tools++
			}
		}
		if tools != 1 {
			t.Fatalf("tool results in memory: %v", got)
		}

		// The next request of the workflow sees the entities and the
		// earlier tool result in its context.
		w = e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "Tell me again.", WorkflowID: w.ID})
		reqs := agentRequests(e.srv)
		ctx := contextOf(reqs[len(reqs)-1])
		if !strings.Contains(ctx, "- company: Acme AG") || !strings.Contains(ctx, "## Results of earlier tool calls\n- lookup (ok): ") {
			t.Fatalf("second request's context:\n%s", ctx)
		}
	})
	t.Run("malformed reply ignored", func(t *testing.T) {
		e := newKEnv(t, entityModel("Sure! The company is Acme."))
		svc := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db, EntityCache: true, Model: e.model})
		defer svc.Close()
		w := e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "What does the company earn?"})
		if w.Status != workflows.StatusCompleted || e.answer(t, e.alice, w.ID) != "No company known." {
			t.Fatalf("status %s, answer %q", w.Status, e.answer(t, e.alice, w.ID))
		}
		if n, _ := e.usage(t, w.ID, "entities"); n != 1 {
			t.Fatalf("%d entity calls", n)
		}
		if mem, _ := e.db.Memories(context.Background(), e.alice, w.ID, kindex.MemoryExtraction, 10); len(mem) != 0 {
			t.Fatalf("entities from a malformed reply: %+v", mem)
		}
	})
	t.Run("per workspace", func(t *testing.T) {
		// The host's default is on; workspace A turns it off, and back to
		// the default. Then the default is off and A turns it on.
		for _, c := range []struct {
			name      string
			def       bool
			set       *bool
			wantCalls int
			source    string
		}{
			{"default on, workspace off", true, ptr(false), 0, rounds.SettingWorkspace},
			{"default on, workspace back to default", true, nil, 1, rounds.SettingDefault},
			{"default off, workspace on", false, ptr(true), 1, rounds.SettingWorkspace},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newKEnv(t, entityModel(`{"company": "Acme AG"}`))
				svc := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db, EntityCache: c.def, Model: e.model})
				defer svc.Close()
				ctx := context.Background()
				if _, err := svc.SetSettings(ctx, e.admin, e.wsA, rounds.SettingsUpdate{EntityCacheEnabled: ptr(!c.def)}); err != nil {
					t.Fatal(err)
				}
				got, err := svc.SetSettings(ctx, e.admin, e.wsA, rounds.SettingsUpdate{EntityCacheEnabled: c.set})
				if err != nil {
					t.Fatal(err)
				}
				read, err := svc.Settings(ctx, e.alice, e.wsA)
				want := rounds.Settings{EntityCacheEnabled: c.wantCalls == 1, EntityCacheSource: c.source, EntityCacheDefault: c.def, SearchLanguages: []string{}, MCPExternalTools: true}
				if err != nil || !reflect.DeepEqual(read, want) || !reflect.DeepEqual(got, want) {
					t.Fatalf("settings %+v (set: %+v) %v, want %+v", read, got, err, want)
				}
				w := e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "What does the company earn?"})
				if n, _ := e.usage(t, w.ID, "entities"); n != c.wantCalls {
					t.Fatalf("%d entity calls, want %d", n, c.wantCalls)
				}
				// Workspace B follows the default.
				w = e.run(t, svc, e.carol, e.wsB, rounds.StartRequest{Prompt: "What does the company earn?"})
				if n, _ := e.usage(t, w.ID, "entities"); n != map[bool]int{true: 1}[c.def] {
					t.Fatalf("workspace B: %d entity calls with the default %v", n, c.def)
				}
			})
		}
		t.Run("refusals", func(t *testing.T) {
			e := newKEnv(t, entityModel(`{}`))
			svc := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db, Model: e.model})
			defer svc.Close()
			ctx := context.Background()
			if _, err := svc.SetSettings(ctx, e.alice, e.wsA, rounds.SettingsUpdate{EntityCacheEnabled: ptr(true)}); !errors.Is(err, tenancy.ErrForbidden) {
				t.Fatalf("a member sets: %v", err)
			}
			if _, err := svc.Settings(ctx, e.carol, e.wsA); !errors.Is(err, tenancy.ErrNotFound) {
				t.Fatalf("an outsider reads: %v", err)
			}
			// Without a model for it, the setting is kept but the cache
			// stays off, and Settings says why.
			noModel := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db})
			defer noModel.Close()
			got, err := noModel.SetSettings(ctx, e.carol, e.wsB, rounds.SettingsUpdate{EntityCacheEnabled: ptr(true)})
			if err != nil || got.EntityCacheEnabled || got.EntityCacheSource != rounds.SettingUnavailable {
				t.Fatalf("without a model: %+v %v", got, err)
			}
		})
	})
	t.Run("off by default", func(t *testing.T) {
		e := newKEnv(t, entityModel(`{"company": "Acme AG"}`))
		svc := e.service(rounds.Knowledge{Builder: e.builder(agentcontext.ContextConfig{}), Memory: e.db, Model: e.model})
		defer svc.Close()
		w := e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "What does the company earn?"})
		if got := e.answer(t, e.alice, w.ID); got != "No company known." {
			t.Fatalf("answer %q", got)
		}
		if n, _ := e.usage(t, w.ID, "entities"); n != 0 {
			t.Fatalf("%d entity calls with the cache off", n)
		}
		for _, r := range e.srv.ChatRequests() {
			if r.Model == "summarizer" {
				t.Fatal("the summary model was called")
			}
		}
	})
}

// TestDegradedMode: when the knowledge store fails (a closed database) or
// does not answer within the deadline, the round runs without retrieved
// context, the workflow's log gets a warning and its stream a status event,
// and the agent answers anyway.
func TestDegradedMode(t *testing.T) {
	cases := []struct {
		name    string
		builder func(t *testing.T, e *kenv) *agentcontext.ContextBuilder
		cause   string
	}{
		{"closed database", func(t *testing.T, e *kenv) *agentcontext.ContextBuilder {
			dir := t.TempDir()
			kdb, err := store.Open(context.Background(), store.Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if err := kdb.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			kdb.Close()
			return agentcontext.NewContextBuilder(search.New(kdb, nil, nil), kdb, agentcontext.ContextConfig{}, nil)
		}, "closed"},
		{"deadline", func(t *testing.T, e *kenv) *agentcontext.ContextBuilder {
			return agentcontext.NewContextBuilder(search.New(e.db, nil, nil), e.db, agentcontext.ContextConfig{SearchTimeout: time.Nanosecond}, nil)
		}, "deadline exceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newKEnv(t, citingModel)
			e.upload(t, e.alice, e.wsA, "travel-policy.md", policy)
			svc := e.service(rounds.Knowledge{Builder: c.builder(t, e), Memory: e.db})
			defer svc.Close()
			w := e.run(t, svc, e.alice, e.wsA, rounds.StartRequest{Prompt: "How much is a hotel night in Zurich reimbursed?"})
			if w.Status != workflows.StatusCompleted {
				t.Fatalf("status %s", w.Status)
			}
			if got := e.answer(t, e.alice, w.ID); got != "I found nothing in your documents." {
				t.Fatalf("answer %q", got)
			}
			logs, err := e.wf.Logs(context.Background(), e.alice, w.ID, workflows.After{}, 100)
			if err != nil {
				t.Fatal(err)
			}
			warned := 0
			for _, l := range logs {
				if l.Type == workflows.LogWarning && strings.Contains(l.Message, "Knowledge store unavailable") && strings.Contains(l.Message, c.cause) {
					warned++
				}
			}
			if warned != 1 {
				t.Fatalf("%d warnings in the log: %+v", warned, logs)
			}
			evs, err := e.wf.Events(context.Background(), e.alice, w.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			status := 0
			for _, ev := range evs {
				var d workflows.StatusData
				if ev.Type == workflows.EventStatus && json.Unmarshal(ev.Data, &d) == nil && strings.Contains(d.Label, "Knowledge store unavailable") {
					status++
				}
			}
			if status != 1 {
				t.Fatalf("%d status events saying so", status)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
