package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/sdk"
)

// host is one `agenthost serve` child process of a multi-host test.
type host struct {
	*child
	base string
}

// startHost runs serve against the shared database and waits until it
// answers.
func startHost(t *testing.T, database, plugins string) host {
	t.Helper()
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "serve", "-database", database, "-addr", addr, "-plugins", plugins, "-allow-unsigned")
	c.waitFor(t, "agenthost listening")
	h := host{child: c, base: "http://" + addr + "/api/v1"}
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return h
		}
		select {
		case <-c.done:
			t.Fatalf("serve exited:\n%s", c.stderr())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// call makes an authenticated request and decodes a JSON answer into out.
func (h host) call(t *testing.T, token, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, h.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode
}

type hostEvent struct {
	id        int64
	typ, data string
}

// events follows a workflow's event stream on h until stop says so.
func (h host) events(t *testing.T, token, workflowID string, stop func(hostEvent) bool) []hostEvent {
	t.Helper()
	out, err := h.follow(token, workflowID, stop)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// follow is events for any goroutine: it returns what went wrong.
func (h host) follow(token, workflowID string, stop func(hostEvent) bool) ([]hostEvent, error) {
	return h.followFrom(token, workflowID, stop, nil)
}

// followFrom is follow that closes connected (when not nil) once the
// stream is open: the server has subscribed, nothing appended after is
// missed.
func (h host) followFrom(token, workflowID string, stop func(hostEvent) bool, connected chan<- struct{}) ([]hostEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.base+"/workflows/"+workflowID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("event stream of %s: %d %s", workflowID, resp.StatusCode, b)
	}
	if connected != nil {
		close(connected)
	}
	var out []hostEvent
	var cur hostEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && cur.typ != "":
			out = append(out, cur)
			if stop(cur) {
				return out, nil
			}
			cur = hostEvent{}
		case strings.HasPrefix(line, "id: "):
			fmt.Sscan(line[4:], &cur.id)
		case strings.HasPrefix(line, "event: "):
			cur.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return nil, fmt.Errorf("event stream of %s ended early: %v", workflowID, out)
}

// twoHostsSetup migrates a fresh PostgreSQL database, bootstraps a tenant
// whose workspace offers the notebook plugin's tools, points the hosts at a
// scripted model, and starts two hosts.
func twoHostsSetup(t *testing.T) (a, b host, model *llmtest.Server, token, ws string) {
	t.Helper()
	start, model, token, ws := hostsSetup(t)
	return start(), start(), model, token, ws
}

// hostsSetup is twoHostsSetup that starts hosts when asked.
func hostsSetup(t *testing.T) (start func() host, model *llmtest.Server, token, ws string) {
	t.Helper()
	database := testenv.Postgres(t)
	startOn, model, token, ws := hostsSetupOn(t, database)
	return func() host { return startOn(database) }, model, token, ws
}

// hostsSetupOn is hostsSetup on a given database, whose hosts are started
// with the URL they are to reach it by (a proxy the test cuts).
func hostsSetupOn(t *testing.T, database string) (startOn func(served string) host, model *llmtest.Server, token, ws string) {
	t.Helper()
	if _, stderr, err := run0(t, "migrate", "-database", database); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	out, stderr, err := run0(t, "admin", "bootstrap", "-database", database, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	plugins := pluginDir(t, "notebook")
	if _, stderr, err := run0(t, "admin", "tools", "-database", database, "-plugins", plugins, "-workspace", m[1],
		"-set", "core", "-extra", "lookup"); err != nil {
		t.Fatalf("tools: %v\n%s", err, stderr)
	}
	model = llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	// The hosts' tests script the model's answers in order and compare
	// the rounds' costs with billing: the title call a first round ends
	// with (docs/agent.md#conversation-titles) would take a scripted
	// answer and add its cost to the workflow's.
	t.Setenv("AGENTHOST_AGENT_TITLES", "false")
	return func(served string) host { return startHost(t, served, plugins) }, model, m[2], m[1]
}

// TestTwoHostsStopAndStream: two hosts on one PostgreSQL. A round runs on
// host A; a client of host B streams it and stops it there; A's loop ends
// (its closing agentSummary says stopped), and B's stream shows every event
// once, in order, with no gap.
func TestTwoHostsStopAndStream(t *testing.T) {
	a, b, model, token, ws := twoHostsSetup(t)
	// The model keeps asking for slow lookups: the round ends only by a stop.
	model.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", `{"topic":"slow","sleepMs":5000}`)))
	var w struct {
		ID string `json:"id"`
	}
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"work slowly"}`, &w); st != 202 {
		t.Fatalf("start on A: %d", st)
	}
	// B streams the round A runs, until the tool is under way.
	b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "toolCall" })
	stopped := time.Now()
	if st := b.call(t, token, "POST", "/workflows/"+w.ID+"/stop", "", nil); st != 200 {
		t.Fatalf("stop on B: %d", st)
	}
	evs := b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "agentSummary" })
	t.Logf("host A's loop ended %v after the stop on host B", time.Since(stopped).Round(time.Millisecond))
	last := evs[len(evs)-1]
	if !strings.Contains(last.data, `"reason":"stopped"`) {
		t.Fatalf("A's run ended %s, want stopped", last.data)
	}
	for i, e := range evs {
		if e.id != int64(i+1) {
			t.Fatalf("B's stream: event %d has id %d (lost or repeated events): %v", i+1, e.id, evs)
		}
	}
	noCrash(t, a.child)
	noCrash(t, b.child)
}

// TestTwoHostsTakeOver: host A is killed (SIGKILL) while its round waits on
// a tool; host B notices A's heartbeat has stopped, claims the round and
// runs it again from its request, to one completion.
//
// The model is priced (gpt-4o-mini's list price): the cost the stream
// shows, as a client folds it (sdk.Answer: the cut attempt's toolCall
// carried what its model call cost), equals the cost the trace records
// from billing, to the nano-franc.
func TestTwoHostsTakeOver(t *testing.T) {
	start, model, token, ws := hostsSetup(t)
	t.Setenv("AGENTHOST_MODEL_AGENT", "gpt-4o-mini")
	a, b := start(), start()
	// Host A's round keeps looking things up until A dies.
	model.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", `{"topic":"slow","sleepMs":5000}`)))
	var w struct {
		ID string `json:"id"`
	}
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"survive a crash"}`, &w); st != 202 {
		t.Fatalf("start on A: %d", st)
	}
	b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "toolCall" })
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done
	killed := time.Now()
	// The run again on B is answered at once.
	model.Script(llmtest.Reply("Done on the host that took over."))
	evs := b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "complete" || e.typ == "error" })
	t.Logf("host B finished the round %v after host A was killed", time.Since(killed).Round(time.Millisecond))
	if last := evs[len(evs)-1]; last.typ != "complete" {
		t.Fatalf("the round ended %s %s, want complete", last.typ, last.data)
	}
	completes := 0
	for _, e := range evs {
		if e.typ == "complete" {
			completes++
		}
	}
	var logs []struct {
		Message string `json:"message"`
	}
	b.call(t, token, "GET", "/workflows/"+w.ID+"/logs", "", &logs)
	taken := false
	for _, l := range logs {
		taken = taken || strings.Contains(l.Message, "taken over from host")
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	b.call(t, token, "GET", "/workflows/"+w.ID+"/messages", "", &msgs)
	if completes != 1 || !taken || len(msgs) == 0 || msgs[len(msgs)-1].Content != "Done on the host that took over." {
		t.Fatalf("completes %d, taken-over log %v, messages %+v", completes, taken, msgs)
	}
	if n := model.Pending(llmtest.EndpointChat); n != 0 {
		t.Fatalf("the scripted answer was not asked for (%d pending)", n)
	}
	var answer sdk.Answer
	for _, e := range evs {
		answer.Apply(decodeHostEvent(t, e))
	}
	var trace struct {
		TotalCostCHF string `json:"totalCostCHF"`
	}
	if st := b.call(t, token, "GET", "/workflows/"+w.ID+"/trace", "", &trace); st != 200 {
		t.Fatalf("trace: %d", st)
	}
	if answer.Restarts != 1 || answer.Text != "Done on the host that took over." || answer.Cost == "0.00" ||
		answer.Cost.String() != sdk.CHF(trace.TotalCostCHF).String() {
		t.Fatalf("the stream shows %q (restarts %d, text %q), the trace records %q", answer.Cost, answer.Restarts, answer.Text, trace.TotalCostCHF)
	}
	noCrash(t, b.child)
}

// decodeHostEvent decodes an event of the stream as the SDK does.
func decodeHostEvent(t *testing.T, e hostEvent) sdk.Event {
	t.Helper()
	ev := sdk.Event{Seq: e.id, Type: sdk.EventType(e.typ), Data: json.RawMessage(e.data)}
	var p any
	switch ev.Type {
	case sdk.EventChunk:
		p = new(sdk.ChunkData)
	case sdk.EventMessage:
		p = new(sdk.Message)
	case sdk.EventToolCall:
		p = new(sdk.ToolCallData)
	case sdk.EventAgentProgress:
		p = new(sdk.AgentProgressData)
	case sdk.EventAgentSummary:
		p = new(sdk.AgentSummaryData)
	case sdk.EventRoundRestarted:
		p = new(sdk.RoundRestartedData)
	default:
		return ev
	}
	if err := json.Unmarshal(ev.Data, p); err != nil {
		t.Fatalf("event %s %s: %v", e.typ, e.data, err)
	}
	ev.Payload = p
	return ev
}

// TestBackgroundJobSurvivesKill: a background job runs on host A, which is
// killed (SIGKILL) mid-run; host B, started meanwhile, gets the job back
// from the queue once A's heartbeat lapses and runs it to its end, which is
// recorded, and told to the workflow that started it, exactly once.
func TestBackgroundJobSurvivesKill(t *testing.T) {
	start, model, token, ws := hostsSetup(t)
	a := start()
	model.Script(llmtest.Reply("Hello."))
	var origin struct {
		ID string `json:"id"`
	}
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"hello"}`, &origin); st != 202 {
		t.Fatalf("start: %d", st)
	}
	a.events(t, token, origin.ID, func(e hostEvent) bool { return e.typ == "complete" })
	model.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", `{"topic":"slow","sleepMs":5000}`)))
	type job struct {
		ID, Status, WorkflowID, ResultSummary string
		Attempts                              int
	}
	var j job
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/background",
		`{"description":"Long research","originWorkflowId":"`+origin.ID+`"}`, &j); st != 202 {
		t.Fatalf("background: %d", st)
	}
	for j.Status != "running" || j.WorkflowID == "" {
		time.Sleep(50 * time.Millisecond)
		a.call(t, token, "GET", "/background/"+j.ID, "", &j)
	}
	b := start()
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done
	killed := time.Now()
	model.Script(llmtest.Reply("Research done on B."))
	evs := b.events(t, token, origin.ID, func(e hostEvent) bool { return e.typ == "backgroundJob" })
	t.Logf("the job ended on host B %v after host A was killed", time.Since(killed).Round(time.Millisecond))
	if last := evs[len(evs)-1]; !strings.Contains(last.data, `"status":"completed"`) || !strings.Contains(last.data, "Research done on B.") {
		t.Fatalf("backgroundJob event %s", last.data)
	}
	b.call(t, token, "GET", "/background/"+j.ID, "", &j)
	if j.Status != "completed" || j.Attempts != 2 || j.ResultSummary != "Research done on B." {
		t.Fatalf("job %+v, want completed on the second attempt", j)
	}
	// Exactly once: one backgroundJob event and one message in the origin.
	var msgs []struct {
		AgentName string `json:"agentName"`
	}
	b.call(t, token, "GET", "/workflows/"+origin.ID+"/messages", "", &msgs)
	notes := 0
	for _, m := range msgs {
		if m.AgentName == "background" {
			notes++
		}
	}
	all := b.events(t, token, origin.ID, func(e hostEvent) bool { return e.id == evs[len(evs)-1].id })
	announced := 0
	for _, e := range all {
		if e.typ == "backgroundJob" {
			announced++
		}
	}
	if notes != 1 || announced != 1 {
		t.Fatalf("the origin was told %d times by message and %d by event, want once", notes, announced)
	}
	noCrash(t, b.child)
}
