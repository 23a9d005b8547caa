package background_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/background/bgjob"
	"github.com/agenthost/agenthost/host/background/runjob"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// hangGuard keeps a broken test from hanging; no assertion depends on it.
const hangGuard = 2 * time.Minute

type env struct {
	*worldtest.World
	svc *background.Service
}

// newEnv: a world with a priced scripted model, the notebook plugin's
// tools, the workspace service and a job queue that works background jobs.
func newEnv(t *testing.T, cfg background.Config) env {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workflow: "origin", Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "priced", InputCHFPer1M: 1000}}},
		Retry:  llm.RetryConfig{Attempts: 1}}})
	host := wasmtest.Host(t, "notebook")
	registry := tools.NewRegistry(host, map[string][]string{tools.CoreSet: {"lookup", "writeNote"}})
	runner := rounds.New(w.Workflows, w.Files, agent.New(w.Client, agent.Config{MaxRounds: 8}, nil), registry, w.DB, rounds.Config{}, nil)
	t.Cleanup(runner.Close)
	if err := jobs.Migrate(context.Background(), w.DB); err != nil {
		t.Fatal(err)
	}
	var svc *background.Service
	reg := jobs.NewRegistry()
	runjob.Register(reg, func() runjob.Worker {
		if svc == nil {
			return nil
		}
		return svc
	})
	q, err := jobs.New(w.DB, jobs.Config{Registry: reg, Work: true, Queues: map[string]int{runjob.QueueName: 4},
		RetryBase: 10 * time.Millisecond, RetryCap: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc = background.New(w.DB, runjob.Queue{Q: q}, runner, w.Workflows, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))).
		WithNotifier(notifications.New(w.DB, nil))
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop(context.Background()) })
	return env{World: w, svc: svc}
}

// wait polls the job until cond holds.
func (e env) wait(t *testing.T, id string, cond func(bgjob.Job) bool) bgjob.Job {
	t.Helper()
	guard := time.Now().Add(hangGuard)
	for {
		j, err := e.svc.Get(context.Background(), e.P, id)
		if err != nil {
			t.Fatal(err)
		}
		if cond(j) {
			return j
		}
		if time.Now().After(guard) {
			t.Fatalf("job %s stuck: %+v", id, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ended(j bgjob.Job) bool { return j.Status.Terminal() }

// originNotes returns the background messages and events of the origin
// workflow, once its event has arrived (the job's state changes a moment
// before the origin is told).
func (e env) originNotes(t *testing.T) ([]string, []workflows.BackgroundJobData) {
	t.Helper()
	guard := time.Now().Add(hangGuard)
	for {
		texts, evs := e.notes(t)
		if len(evs) > 0 || time.Now().After(guard) {
			return texts, evs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e env) notes(t *testing.T) ([]string, []workflows.BackgroundJobData) {
	t.Helper()
	evs, err := e.Workflows.Events(context.Background(), e.P, e.Workflow, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var data []workflows.BackgroundJobData
	for _, ev := range evs {
		if ev.Type == workflows.EventBackgroundJob {
			var d workflows.BackgroundJobData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			data = append(data, d)
		}
	}
	msgs, err := e.Workflows.Messages(context.Background(), e.P, e.Workflow, workflows.After{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		if m.AgentName == "background" {
			texts = append(texts, m.Content)
		}
	}
	return texts, data
}

// TestBackgroundJobCompletes: a job runs its agent with the subtasks in a
// workflow of its own, ends completed with the agent's summary, and the
// workflow that started it gets one message and one event.
func TestBackgroundJobCompletes(t *testing.T) {
	e := newEnv(t, background.Config{})
	e.Server.Script(llmtest.CallTools(llmtest.Call("lookup", `{"topic":"alpha"}`)), llmtest.Reply("All three sources are read."))
	j, err := e.svc.Start(context.Background(), e.P, background.StartRequest{WorkspaceID: e.Workspace, OriginWorkflowID: e.Workflow,
		Description: "Read the sources", Subtasks: []string{"alpha", "beta", "gamma"}})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != bgjob.Queued || j.QueueJobID == 0 {
		t.Fatalf("started %+v", j)
	}
	j = e.wait(t, j.ID, ended)
	if j.Status != bgjob.Completed || j.ResultSummary != "All three sources are read." || j.Progress != 1 || j.Attempts != 1 ||
		j.WorkflowID == "" || j.StartedAt == nil || j.CompletedAt == nil {
		t.Fatalf("job %+v", j)
	}
	reqs := e.Server.ChatRequests()
	if first := reqs[0].Messages[len(reqs[0].Messages)-1].Content; !strings.Contains(first, "Read the sources") || !strings.Contains(first, "3. gamma") {
		t.Fatalf("the agent was asked %q", first)
	}
	run, err := e.Workflows.Get(context.Background(), e.P, j.WorkflowID)
	if err != nil || run.Status != workflows.StatusCompleted {
		t.Fatalf("the job's workflow: %+v %v", run, err)
	}
	texts, evs := e.originNotes(t)
	if len(texts) != 1 || !strings.Contains(texts[0], "All three sources are read.") || len(evs) != 1 ||
		evs[0].Status != "completed" || evs[0].JobID != j.ID || evs[0].WorkflowID != j.WorkflowID {
		t.Fatalf("origin told %q %+v", texts, evs)
	}
	// The person is notified once, wherever they look.
	pg, err := e.DB.Notifications(context.Background(), e.P, 10)
	if err != nil || len(pg.Items) != 1 || pg.Unread != 1 {
		t.Fatalf("notifications %+v %v, want one unread", pg, err)
	}
	if n := pg.Items[0]; n.Kind != notifications.BackgroundJob || n.SubjectID != j.ID || n.Status != "completed" ||
		n.Name != "Read the sources" || n.Detail != "All three sources are read." || n.WorkflowID != e.Workflow || n.WorkspaceID != e.Workspace {
		t.Fatalf("notified %+v", n)
	}
}

// TestBackgroundBudgetCap: a job whose run spends its cap ends cancelled
// with the reason and the run's progress summary, and says so.
func TestBackgroundBudgetCap(t *testing.T) {
	e := newEnv(t, background.Config{})
	// 1000 CHF per million prompt tokens: 1000 tokens cost 1 CHF a call.
	e.Server.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", `{"topic":"again"}`)).WithUsage(1000, 0))
	j, err := e.svc.Start(context.Background(), e.P, background.StartRequest{WorkspaceID: e.Workspace, OriginWorkflowID: e.Workflow,
		Description: "Look up forever", MaxCostCHF: "2.50"})
	if err != nil {
		t.Fatal(err)
	}
	j = e.wait(t, j.ID, ended)
	if j.Status != bgjob.Cancelled || !strings.HasPrefix(j.Error, "budgetExceeded") || !strings.Contains(j.ResultSummary, "budget") ||
		j.MaxCost == nil || j.MaxCost.String() != "2.50" {
		t.Fatalf("job %+v", j)
	}
	if n := len(e.Server.ChatRequests()); n != 3 {
		t.Fatalf("%d model calls, want 3 (the third reaches 3 CHF ≥ 2.50 and the run ends)", n)
	}
	if texts, evs := e.originNotes(t); len(texts) != 1 || len(evs) != 1 || evs[0].Status != "cancelled" {
		t.Fatalf("origin told %q %+v", texts, evs)
	}
}

// TestBackgroundCancel: a running job is cancelled by its owner: its round
// stops, the job ends cancelled once, and cancelling again is a conflict.
func TestBackgroundCancel(t *testing.T) {
	e := newEnv(t, background.Config{})
	e.Server.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", `{"topic":"slow","sleepMs":2000}`)))
	j, err := e.svc.Start(context.Background(), e.P, background.StartRequest{WorkspaceID: e.Workspace, Description: "Slow work"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, j.ID, func(j bgjob.Job) bool { return j.Status == bgjob.Running && j.WorkflowID != "" })
	if _, err := e.svc.Cancel(context.Background(), e.P, j.ID); err != nil {
		t.Fatal(err)
	}
	j = e.wait(t, j.ID, ended)
	if j.Status != bgjob.Cancelled || j.Error != "cancelled by the user" {
		t.Fatalf("job %+v", j)
	}
	if _, err := e.svc.Cancel(context.Background(), e.P, j.ID); !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("cancelling an ended job: %v", err)
	}
	run, _ := e.Workflows.Get(context.Background(), e.P, j.WorkflowID)
	if run.Status != workflows.StatusStopped {
		t.Fatalf("the job's round is %s, want stopped", run.Status)
	}
}

// TestBackgroundTenantCap: with room for one job per tenant, a second job
// waits queued while the first runs, and runs when it ends.
func TestBackgroundTenantCap(t *testing.T) {
	e := newEnv(t, background.Config{PerTenant: 1, Wait: 50 * time.Millisecond})
	e.Server.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", `{"topic":"slow","sleepMs":1000}`)))
	ctx := context.Background()
	first, err := e.svc.Start(ctx, e.P, background.StartRequest{WorkspaceID: e.Workspace, Description: "first"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, first.ID, func(j bgjob.Job) bool { return j.Status == bgjob.Running })
	second, err := e.svc.Start(ctx, e.P, background.StartRequest{WorkspaceID: e.Workspace, Description: "second"})
	if err != nil {
		t.Fatal(err)
	}
	// The queue offers the second job many times while the first runs;
	// each time it finds no room.
	for range 10 {
		time.Sleep(50 * time.Millisecond)
		if j, _ := e.svc.Get(ctx, e.P, second.ID); j.Status != bgjob.Queued || j.Attempts != 0 {
			t.Fatalf("second job %s (attempts %d) while the first runs, want queued", j.Status, j.Attempts)
		}
	}
	if _, err := e.svc.Cancel(ctx, e.P, first.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(t, second.ID, func(j bgjob.Job) bool { return j.Status == bgjob.Running })
	if _, err := e.svc.Cancel(ctx, e.P, second.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(t, second.ID, ended)
}

// TestBackgroundRefusals: bad requests are refused before anything is
// queued, with the field named.
func TestBackgroundRefusals(t *testing.T) {
	e := newEnv(t, background.Config{})
	ctx := context.Background()
	other, err := e.DB.CreateTenant(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	otherWS, err := e.DB.CreateWorkspace(ctx, tenancy.Workspace{TenantID: other.ID, Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name string
		req  background.StartRequest
		want error
		text string
	}{
		{"empty description", background.StartRequest{WorkspaceID: e.Workspace, Description: "  "}, tenancy.ErrInvalid, "description"},
		{"long description", background.StartRequest{WorkspaceID: e.Workspace, Description: long}, tenancy.ErrInvalid, "description"},
		{"empty subtask", background.StartRequest{WorkspaceID: e.Workspace, Description: "d", Subtasks: []string{"a", ""}}, tenancy.ErrInvalid, "subtasks[1]"},
		{"bad cap", background.StartRequest{WorkspaceID: e.Workspace, Description: "d", MaxCostCHF: "-1"}, tenancy.ErrInvalid, "maxCostCHF"},
		{"float cap", background.StartRequest{WorkspaceID: e.Workspace, Description: "d", MaxCostCHF: "1e3"}, tenancy.ErrInvalid, "maxCostCHF"},
		{"another tenant's workspace", background.StartRequest{WorkspaceID: otherWS.ID, Description: "d"}, tenancy.ErrNotFound, "workspace"},
		{"unknown origin", background.StartRequest{WorkspaceID: e.Workspace, Description: "d", OriginWorkflowID: "nope"}, tenancy.ErrNotFound, "originWorkflowId"},
	} {
		_, err := e.svc.Start(ctx, e.P, c.req)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v naming %s", c.name, err, c.want, c.text)
		}
	}
	if js, err := e.svc.List(ctx, e.P, 0); err != nil || len(js) != 0 {
		t.Fatalf("refused requests left jobs: %+v %v", js, err)
	}
}
