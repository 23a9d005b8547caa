package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/workflows"
)

// sseEvent is one event as a client reads it off the stream.
type sseEvent struct {
	ID   int64
	Type string
	Data string
}

// readEvents connects to a workflow's event stream (resuming after lastID
// when > 0) and reads until stop says so, the stream ends or 20 s pass. It
// then drops the connection, as a client that goes away would.
func readEvents(t testing.TB, ts testServer, workflowID string, lastID int64, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.base+"/workflows/"+workflowID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+ts.alice)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Type != "" {
				out = append(out, cur)
				if stop(cur) {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.Type = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.Data = line[6:]
		}
	}
	return out
}

func terminal(e sseEvent) bool { return workflows.EventType(e.Type).Terminal() }

// collapse shortens runs of chunk events to one, for comparing sequences.
func collapse(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		if e.Type != "chunk" || len(out) == 0 || out[len(out)-1] != "chunk" {
			out = append(out, e.Type)
		}
	}
	return out
}

func startWorkflow(t testing.TB, ts testServer, token, body string) workflows.Workflow {
	t.Helper()
	status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/workflows", token, "application/json", strings.NewReader(body)})
	if status != 202 {
		t.Fatalf("start: %d %s", status, raw)
	}
	var w workflows.Workflow
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

func getJSON(t *testing.T, ts testServer, path string, v any) {
	t.Helper()
	status, _, raw := do(t, ts.base, call{"GET", path, ts.alice, "", nil})
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func lookup(topic string, ms int) string {
	return fmt.Sprintf(`{"topic":%q,"sleepMs":%d}`, topic, ms)
}

// TestWorkflowOverHTTP: the scripted model drives a three-round workflow —
// two read-only tools in parallel, then a writing tool beside a
// hallucinated tool and invalid arguments, then the answer — and an SSE
// client that drops and reconnects with Last-Event-ID sees every event of
// the documented sequence exactly once. The text protocol runs the same
// scenario with a model that has no function calling.
func TestWorkflowOverHTTP(t *testing.T) {
	native := []llmtest.Step{
		llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 300)), llmtest.Call("lookup", lookup("beta", 300))),
		llmtest.CallTools(llmtest.Call("writeNote", `{"text":"alpha, beta"}`), llmtest.Call("formatDisk", `{}`), llmtest.Call("lookup", `{"topic":1}`)),
		llmtest.Reply("Alpha and beta are noted."),
	}
	text := []llmtest.Step{
		llmtest.Reply(`{"decision":"continue","action":{"name":"lookup","parameters":{"topic":"alpha"}}}`),
		llmtest.Reply(`{"decision":"continue","action":{"name":"formatDisk"}}`),
		llmtest.Reply(`{"decision":"continue","action":{"name":"formatDisk"}}`),
		llmtest.Reply(`{"decision":"continue","action":{"name":"writeNote","parameters":{"text":"alpha"}}}`),
		llmtest.Reply(`{"decision":"continue","action":{"name":"lookup","parameters":{"topic":1}}}`),
		llmtest.Reply(`{"decision":"stop","answer":"Alpha and beta are noted."}`),
	}
	nativeWant := []string{"status", "message",
		"toolCall", "toolCall", "toolResult", "toolResult", "agentProgress",
		"toolCall", "toolCall", "toolCall", "toolResult", "toolResult", "toolResult", "agentProgress",
		"chunk", "agentProgress", "agentSummary", "message", "complete"}
	textWant := []string{"status", "message",
		"toolCall", "toolResult", "agentProgress",
		"toolCall", "toolResult", "agentProgress",
		"toolCall", "toolResult", "agentProgress",
		"toolCall", "toolResult", "agentProgress",
		"chunk", "agentProgress", "agentSummary", "message", "complete"}
	for _, c := range []struct {
		name   string
		opt    func(*serverOptions)
		script []llmtest.Step
		want   []string
	}{
		{"function calling", func(*serverOptions) {}, native, nativeWant},
		{"text protocol", func(o *serverOptions) {
			o.model = llm.ModelConfig{Model: "plain", NoFunctionCalling: true}
			o.llmOpts = []llmtest.Option{llmtest.WithNoFunctionCalling("plain")}
		}, text, textWant},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := server(t, c.opt)
			ts.model.Script(c.script...)
			w := startWorkflow(t, ts, ts.alice, `{"prompt":"Note alpha and beta.","userLanguage":"en"}`)
			if w.Status != workflows.StatusRunning || w.CurrentRound != 1 {
				t.Fatalf("started: %+v", w)
			}
			// Read five events, drop the connection, resume from the last id.
			first := readEvents(t, ts, w.ID, 0, func(e sseEvent) bool { return e.ID >= 5 })
			rest := readEvents(t, ts, w.ID, first[len(first)-1].ID, terminal)
			all := append(first, rest...)
			for i, e := range all {
				if e.ID != int64(i+1) {
					t.Fatalf("event %d has id %d: lost or repeated events across the reconnect", i, e.ID)
				}
			}
			if got := collapse(all); !slices.Equal(got, c.want) {
				t.Fatalf("events:\n got %v\nwant %v", got, c.want)
			}
			var results []workflows.ToolResultData
			for _, e := range all {
				if e.Type == "toolResult" {
					var r workflows.ToolResultData
					json.Unmarshal([]byte(e.Data), &r)
					results = append(results, r)
				}
			}
			codes := map[string]bool{}
			for _, r := range results {
				codes[r.ErrorCode] = true
			}
			if !codes["unknown_tool"] || !codes["invalid_arguments"] || !codes[""] {
				t.Fatalf("tool results: %+v", results)
			}

			var st struct{ Status string }
			getJSON(t, ts, "/workflows/"+w.ID+"/status", &st)
			if st.Status != "completed" {
				t.Fatalf("status: %+v", st)
			}
			var msgs []workflows.Message
			getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
			if len(msgs) != 2 || msgs[0].Status != "first" || msgs[1].Status != "last" || msgs[1].Content != "Alpha and beta are noted." {
				t.Fatalf("messages: %+v", msgs)
			}
			var after []workflows.Message
			getJSON(t, ts, "/workflows/"+w.ID+"/messages?id="+msgs[0].ID, &after)
			if len(after) != 1 || after[0].ID != msgs[1].ID {
				t.Fatalf("messages after the first: %+v", after)
			}
			var logs []workflows.Log
			getJSON(t, ts, "/workflows/"+w.ID+"/logs", &logs)
			if len(logs) < 3 || logs[len(logs)-1].Progress != 100 {
				t.Fatalf("logs: %+v", logs)
			}
			var wf workflows.Workflow
			getJSON(t, ts, "/workflows/"+w.ID, &wf)
			if wf.Stats.TokensUsed == 0 {
				t.Fatalf("no statistics: %+v", wf.Stats)
			}
			// Execution state: a task per loop round (each tool call an
			// action of it, counted from 0 again by the next task).
			wantTasks := strings.Count(strings.Join(c.want, ","), "agentProgress")
			if wf.Exec.Round != 1 || wf.Exec.Task != wantTasks || wf.Exec.Action != 0 {
				t.Fatalf("execution state: %+v, want round 1, task %d", wf.Exec, wantTasks)
			}
			// Every model call was metered and billed to the workflow.
			alice, err := ts.db.Authenticate(context.Background(), ts.alice)
			if err != nil {
				t.Fatal(err)
			}
			totals, err := ts.db.UsageTotals(context.Background(), alice, w.ID)
			if err != nil || totals.Calls != len(c.script) || totals.PromptTokens == 0 {
				t.Fatalf("usage: %+v %v, want %d calls", totals, err, len(c.script))
			}
		})
	}
}

// TestWorkflowStop: a stop while a tool runs ends the round in `stopped`,
// at once.
func TestWorkflowStop(t *testing.T) {
	ts := server(t)
	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("slow", 120_000))))
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"slow work"}`)
	seen := readEvents(t, ts, w.ID, 0, func(e sseEvent) bool { return e.Type == "toolCall" })
	t0 := time.Now()
	status, _, raw := do(t, ts.base, call{"POST", "/workflows/" + w.ID + "/stop", ts.alice, "", nil})
	if status != 200 {
		t.Fatalf("stop: %d %s", status, raw)
	}
	rest := readEvents(t, ts, w.ID, seen[len(seen)-1].ID, func(e sseEvent) bool { return e.Type == "message" })
	if rest[0].Type != "stopped" {
		t.Fatalf("after stop: %v", collapse(rest))
	}
	ts.ws.Wait()
	// The tool sleeps two minutes unless the stop cuts it short.
	if took := time.Since(t0); took > time.Minute {
		t.Fatalf("the loop took %v to end after the stop", took)
	}
	var msgs []workflows.Message
	getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
	if len(msgs) != 2 || !strings.Contains(msgs[1].Content, "Stopped") {
		t.Fatalf("messages after stop: %+v", msgs)
	}
	var st struct{ Status string }
	getJSON(t, ts, "/workflows/"+w.ID+"/status", &st)
	if st.Status != "stopped" {
		t.Fatalf("status %q", st.Status)
	}
}

// TestWorkflowLimits: the round limit and the cost budget each end a round
// with a summary, and a resumed workflow carries its history and budget.
func TestWorkflowLimits(t *testing.T) {
	loop := llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if len(r.Tools) == 0 {
			return llmtest.Reply("Looked up omega.").WithUsage(1000, 0)
		}
		return llmtest.CallTools(llmtest.Call("lookup", lookup("omega", 0))).WithUsage(1000, 0)
	})
	ts := server(t, func(o *serverOptions) {
		o.model = llm.ModelConfig{InputCHFPer1M: 100} // 0.1 CHF a call
		o.llmOpts = []llmtest.Option{llmtest.WithDefault(loop)}
		o.agent = agent.Config{MaxRounds: 2, MaxCost: money.FromCHF(0.35)}
	})
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"loop"}`)
	readEvents(t, ts, w.ID, 0, terminal)
	var msgs []workflows.Message
	getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
	if !strings.Contains(msgs[len(msgs)-1].Content, "round limit (2)") || !strings.Contains(msgs[len(msgs)-1].Content, "Looked up omega") {
		t.Fatalf("max rounds answer: %q", msgs[len(msgs)-1].Content)
	}
	// Round 1 spent 0.3 (two rounds and the summary); round 2 may spend 0.05.
	w2 := startWorkflow(t, ts, ts.alice, `{"prompt":"more","workflowId":"`+w.ID+`"}`)
	if w2.CurrentRound != 2 {
		t.Fatalf("resume: %+v", w2)
	}
	readEvents(t, ts, w.ID, 0, func(e sseEvent) bool { return e.Type == "complete" && strings.Contains(e.Data, "budgetExceeded") })
	getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, "budget of CHF 0.35") {
		t.Fatalf("budget answer: %q", last)
	}
	var got workflows.Workflow
	getJSON(t, ts, "/workflows/"+w.ID, &got)
	if got.Outcome != "budgetExceeded" || got.Stats.CostCHF < 30*money.Rappen {
		t.Fatalf("workflow stopped by its budget: outcome %q, cost %v", got.Outcome, got.Stats.CostCHF)
	}
	reqs := ts.model.ChatRequests()
	lastReq := reqs[len(reqs)-1]
	var history string
	for _, m := range lastReq.Messages {
		history += m.Content + "\n"
	}
	if !strings.Contains(history, "Looked up omega") || !strings.Contains(history, "loop") {
		t.Fatalf("round 2 does not see round 1: %s", history)
	}
}

// TestWorkflowBadInput: each refused request says why and changes nothing.
func TestWorkflowBadInput(t *testing.T) {
	ts := server(t)
	ts.model.Script(llmtest.Reply("done"))
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"hello"}`)
	readEvents(t, ts, w.ID, 0, terminal)
	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("x", 3000))), llmtest.Reply("ok"))
	running := startWorkflow(t, ts, ts.alice, `{"prompt":"slow"}`)

	carolFile := uploadAs(t, ts, ts.carol, "secret.txt")
	big := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name   string
		call   call
		status int
		detail string
	}{
		{"malformed JSON", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":`)}, 400, "malformed JSON"},
		{"unknown field", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"promt":"x"}`)}, 400, "unknown field"},
		{"empty prompt", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":"  "}`)}, 400, "empty"},
		{"oversize prompt", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":"` + big + `"}`)}, 400, "limit of 4096"},
		{"another workspace's file", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":"x","fileIds":["` + carolFile + `"]}`)}, 404, "fileIds"},
		{"workspace not mine", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.carol, "application/json", strings.NewReader(`{"prompt":"x"}`)}, 404, "workspace"},
		{"unknown workflow", call{"GET", "/workflows/nope/status", ts.alice, "", nil}, 404, "nope"},
		{"unknown workflow events", call{"GET", "/workflows/nope/events", ts.alice, "", nil}, 404, "nope"},
		{"another user's workflow", call{"GET", "/workflows/" + w.ID, ts.bob, "", nil}, 404, "not found"},
		{"another user's workflow messages", call{"GET", "/workflows/" + w.ID + "/messages", ts.bob, "", nil}, 404, "not found"},
		{"another user's workflow stop", call{"POST", "/workflows/" + running.ID + "/stop", ts.bob, "", nil}, 404, "not found"},
		{"another user's workflow continue", call{"POST", "/workflows/start?id=" + w.ID, ts.bob, "application/json", strings.NewReader(`{"prompt":"x"}`)}, 404, "not found"},
		{"continue a running workflow", call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":"x","workflowId":"` + running.ID + `"}`)}, 409, "running"},
		{"stop a completed workflow", call{"POST", "/workflows/" + w.ID + "/stop", ts.alice, "", nil}, 409, "completed"},
		{"bad Last-Event-ID", call{"GET", "/workflows/" + w.ID + "/events?after=x", ts.alice, "", nil}, 400, "sequence"},
		{"bad seq", call{"GET", "/workflows/" + w.ID + "/logs?seq=-1", ts.alice, "", nil}, 400, "seq"},
		{"unknown tool", call{"POST", "/workspaces/" + ts.wsA + "/tools/formatDisk", ts.alice, "application/json", strings.NewReader(`{}`)}, 404, "formatDisk"},
		{"viewer calls a writing tool", call{"POST", "/workspaces/" + ts.wsA + "/tools/writeNote", ts.victor, "application/json", strings.NewReader(`{"text":"x"}`)}, 403, "writeNote"},
		{"tool arguments not JSON", call{"POST", "/workspaces/" + ts.wsA + "/tools/lookup", ts.alice, "application/json", strings.NewReader(`{topic`)}, 400, "JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, ctype, raw := do(t, ts.base, c.call)
			if status != c.status || ctype != "application/problem+json" || !strings.Contains(string(raw), c.detail) {
				t.Fatalf("%d %s %s, want %d with %q", status, ctype, raw, c.status, c.detail)
			}
		})
	}
	// Direct tool calls: a result either way, invalid arguments named.
	status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/tools/lookup", ts.victor, "application/json", strings.NewReader(`{"topic":"x"}`)})
	if status != 200 || !strings.Contains(string(raw), `"ok":true`) || !strings.Contains(string(raw), "the fact about x") {
		t.Fatalf("direct call: %d %s", status, raw)
	}
	status, _, raw = do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/tools/lookup", ts.alice, "application/json", strings.NewReader(`{"topic":7}`)})
	if status != 200 || !strings.Contains(string(raw), "invalid_arguments") {
		t.Fatalf("direct call with bad arguments: %d %s", status, raw)
	}
	var tools []map[string]any
	getJSON(t, ts, "/workspaces/"+ts.wsA+"/tools", &tools)
	if len(tools) != 3 {
		t.Fatalf("workspace tools: %v", tools)
	}
	// Nothing refused changed the first workflow.
	var msgs []workflows.Message
	getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
	if len(msgs) != 2 {
		t.Fatalf("messages after refused requests: %d", len(msgs))
	}
	status, _, _ = do(t, ts.base, call{"DELETE", "/workflows/" + running.ID, ts.alice, "", nil})
	if status != 204 {
		t.Fatalf("delete a running workflow: %d", status)
	}
	ts.ws.Wait()
}

func uploadAs(t *testing.T, ts testServer, token, name string) string {
	t.Helper()
	var ws []struct{ ID string }
	status, _, raw := do(t, ts.base, call{"GET", "/workspaces", token, "", nil})
	if status != 200 || json.Unmarshal(raw, &ws) != nil || len(ws) == 0 {
		t.Fatalf("workspaces: %d %s", status, raw)
	}
	body, ct := multipartBody(t, name, []byte("data"), nil)
	status, _, raw = do(t, ts.base, call{"POST", "/workspaces/" + ws[0].ID + "/files", token, ct, body})
	var f filemeta.Item
	if status != 201 || json.Unmarshal(raw, &f) != nil {
		t.Fatalf("upload: %d %s", status, raw)
	}
	return f.ID
}

// TestInterruptedRoundsRecover: a round left running by a host that stopped
// ends as failed, with an error event, and can be resumed; a round whose
// loop runs on this host is left alone.
func TestInterruptedRoundsRecover(t *testing.T) {
	ts := server(t)
	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("slow", 3000))), llmtest.Reply("done"), llmtest.Reply("again"))
	live := startWorkflow(t, ts, ts.alice, `{"prompt":"slow"}`)
	ctx := context.Background()
	// Another host's round: running in the database, no loop here.
	alice, err := ts.db.Authenticate(ctx, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := ts.wf.Start(ctx, alice, workflows.NewWorkflow{WorkspaceID: ts.wsA, Name: "orphan"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := ts.ws.RecoverInterrupted(ctx, ts.db, time.Now().Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("recovered %d, %v; want the orphan only", n, err)
	}
	var st struct{ Status string }
	getJSON(t, ts, "/workflows/"+orphan.ID+"/status", &st)
	if st.Status != "failed" {
		t.Fatalf("orphan: %q", st.Status)
	}
	getJSON(t, ts, "/workflows/"+live.ID+"/status", &st)
	if st.Status != "running" {
		t.Fatalf("live round: %q", st.Status)
	}
	evs := readEvents(t, ts, orphan.ID, 0, terminal)
	if last := evs[len(evs)-1]; last.Type != "error" || !strings.Contains(last.Data, "interrupted") {
		t.Fatalf("orphan's last event: %+v", last)
	}
	// The user resumes it as the next round.
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"go on","workflowId":"`+orphan.ID+`"}`)
	if w.CurrentRound != 2 {
		t.Fatalf("resumed: %+v", w)
	}
	readEvents(t, ts, live.ID, 0, terminal)
	ts.ws.Wait()
}

// TestSharedWorkflowOwnerName: a member reading another's shared
// conversation is told whose it is; its owner is not told their own
// name, and a member of another workspace still gets a not-found.
func TestSharedWorkflowOwnerName(t *testing.T) {
	ts := server(t)
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"hello"}`)
	if status, _, raw := do(t, ts.base, call{"PATCH", "/workflows/" + w.ID, ts.alice, "application/json", strings.NewReader(`{"shared":true}`)}); status != 200 {
		t.Fatalf("share: %d %s", status, raw)
	}
	cases := []struct {
		name, token string
		status      int
		owner       string
	}{
		{"a member of the workspace", ts.bob, 200, "alice@acme"},
		{"its owner", ts.alice, 200, ""},
		{"a member of another workspace", ts.carol, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, raw := do(t, ts.base, call{"GET", "/workflows/" + w.ID, c.token, "", nil})
			if status != c.status {
				t.Fatalf("GET: %d %s", status, raw)
			}
			if status != 200 {
				return
			}
			var got struct {
				ID        string  `json:"id"`
				Shared    bool    `json:"shared"`
				OwnerName *string `json:"ownerName"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			owner := ""
			if got.OwnerName != nil {
				owner = *got.OwnerName
			}
			if got.ID != w.ID || !got.Shared || owner != c.owner || (c.owner == "" && got.OwnerName != nil) {
				t.Fatalf("got %s", raw)
			}
		})
	}
}
