package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// slowAnswer is a reply streamed for about ten seconds (6 characters a
// chunk, 100 ms apart): a round SIGTERM reaches mid-answer.
var slowAnswer = llmtest.Reply(strings.Repeat("This answer is streamed slowly. ", 20)).WithChunkDelay(100 * time.Millisecond)

// roundEnd stops an event stream at the round's end.
func roundEnd(e hostEvent) bool { return e.typ == "complete" || e.typ == "stopped" || e.typ == "error" }

// checkHandedOff checks a workflow's whole stream after a hand-off: the cut
// attempt's chunks, its agentSummary saying handedOff, a roundRestarted
// (handedOff, not a lapsed lease), then the new attempt's answer as a
// message and one complete; no stopped or error, ids without a gap.
func checkHandedOff(t *testing.T, evs []hostEvent, answer string) {
	t.Helper()
	var order []string
	cutChunks, completes := 0, 0
	restarted := false
	for i, e := range evs {
		if e.id != int64(i+1) {
			t.Fatalf("event %d has id %d: events lost or repeated", i+1, e.id)
		}
		switch e.typ {
		case "chunk":
			if !restarted {
				cutChunks++
			}
		case "agentSummary":
			var d struct{ Reason string }
			json.Unmarshal([]byte(e.data), &d)
			order = append(order, "agentSummary:"+d.Reason)
		case "roundRestarted":
			var d struct{ Reason, FromHost string }
			json.Unmarshal([]byte(e.data), &d)
			order = append(order, "roundRestarted:"+d.Reason)
			restarted = true
		case "message":
			var m struct{ Role, Content string }
			json.Unmarshal([]byte(e.data), &m)
			if m.Role == "assistant" {
				order = append(order, "answer:"+m.Content)
			}
		case "complete", "stopped", "error":
			order = append(order, e.typ)
			if e.typ == "complete" {
				completes++
			}
		}
	}
	want := []string{"agentSummary:handedOff", "roundRestarted:handedOff", "agentSummary:completed", "answer:" + answer, "complete"}
	// The answer's message precedes the closing summary or follows it:
	// the order the loop and the runner record them in is theirs.
	got := strings.Join(order, " | ")
	alt := strings.Join([]string{want[0], want[1], want[3], want[2], want[4]}, " | ")
	if got != strings.Join(want, " | ") && got != alt {
		t.Fatalf("the round's course:\n  %s\nwant\n  %s", got, strings.Join(want, " | "))
	}
	if cutChunks == 0 || completes != 1 {
		t.Fatalf("%d chunks before the restart, %d completes", cutChunks, completes)
	}
}

// TestTwoHostsDeployHandsOff (issue 32 item 2): host A gets SIGTERM while
// it streams an answer; the round is not stopped: A hands it off and host B
// claims it at its next look (the round's release, not A's heartbeat
// lapsing: the roundRestarted event says handedOff) and runs it to its
// answer. A's own stop is clean.
func TestTwoHostsDeployHandsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	a, b, model, token, ws := twoHostsSetup(t)
	model.Script(slowAnswer)
	model.SetDefault(llmtest.EndpointChat, llmtest.Reply("Answered on host B."))
	var w struct {
		ID string `json:"id"`
	}
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"answer slowly"}`, &w); st != 202 {
		t.Fatalf("start on A: %d", st)
	}
	b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "chunk" })
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	evs := b.events(t, token, w.ID, roundEnd)
	t.Logf("host B completed the round %v after host A got SIGTERM", time.Since(signalled).Round(time.Millisecond))
	checkHandedOff(t, evs, "Answered on host B.")
	a.wait(t)
	if a.code != 0 || !strings.Contains(a.stderr(), "handed off to another host") {
		t.Fatalf("host A exited %d:\n%s", a.code, a.stderr())
	}
	var got struct{ Status string }
	b.call(t, token, "GET", "/workflows/"+w.ID, "", &got)
	if got.Status != "completed" {
		t.Fatalf("workflow %s", got.Status)
	}
	noCrash(t, a.child)
	noCrash(t, b.child)
}

// TestSingleHostRestartResumes (issue 32 item 2): on the embedded database
// there is no other host: a round SIGTERM cuts is handed off to the next
// start of the same host, which runs it again to its answer instead of
// failing it.
func TestSingleHostRestartResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice")
	}
	data, plugins := t.TempDir(), pluginDir(t, "notebook")
	tc := bootstrapTenant(t, data, plugins, "acme", nil)
	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	model.Script(slowAnswer)
	model.SetDefault(llmtest.EndpointChat, llmtest.Reply("Answered after the restart."))
	start := func() host {
		addr, err := freeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		c := startChild(t, "serve", "-data", data, "-addr", addr, "-plugins", plugins, "-allow-unsigned")
		c.waitFor(t, "agenthost listening")
		h := host{child: c, base: "http://" + addr + "/api/v1"}
		for {
			if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
				resp.Body.Close()
				return h
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := start()
	var w struct {
		ID string `json:"id"`
	}
	if st := first.call(t, tc.token, "POST", "/workspaces/"+tc.workspace+"/workflows", `{"prompt":"answer slowly"}`, &w); st != 202 {
		t.Fatalf("start: %d", st)
	}
	first.events(t, tc.token, w.ID, func(e hostEvent) bool { return e.typ == "chunk" })
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	first.wait(t)
	if first.code != 0 {
		t.Fatalf("the first run exited %d:\n%s", first.code, first.stderr())
	}
	second := start()
	evs := second.events(t, tc.token, w.ID, roundEnd)
	checkHandedOff(t, evs, "Answered after the restart.")
	if !strings.Contains(second.stderr(), "rounds the last run did not finish run again") {
		t.Errorf("the second run did not say it resumed the round:\n%s", second.stderr())
	}
	noCrash(t, first.child)
	noCrash(t, second.child)
}
