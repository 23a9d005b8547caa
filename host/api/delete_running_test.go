package api_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/workflows"
)

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDeleteRunningWorkflowQuietly: deleting a workflow whose round is
// running is the user's choice; the round's answer, statistics and events
// have nowhere to go, and that is not logged as an error or a warning.
func TestDeleteRunningWorkflowQuietly(t *testing.T) {
	var logs lockedBuffer
	ts := server(t, func(o *serverOptions) {
		o.logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("x", 2000))), llmtest.Reply("ok"))
	running := startWorkflow(t, ts, ts.alice, `{"prompt":"slow"}`)
	if status, _, raw := do(t, ts.base, call{"DELETE", "/workflows/" + running.ID, ts.alice, "", nil}); status != 204 {
		t.Fatalf("delete a running workflow: %d %s", status, raw)
	}
	ts.ws.Wait()
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
			t.Errorf("logged: %s", l)
		}
	}
}

// TestWorkflowDataStats: a workflow's dataStats count the bytes its model
// calls sent and received (they were always 0).
func TestWorkflowDataStats(t *testing.T) {
	ts := server(t)
	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("x", 0))), llmtest.Reply("a fine answer"))
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"count my bytes"}`)
	readEvents(t, ts, w.ID, 0, terminal)
	ts.ws.Wait()
	var got workflows.Workflow
	getJSON(t, ts, "/workflows/"+w.ID, &got)
	// Two model calls: each request carries at least the prompt, each
	// answer at least its text.
	if got.Stats.BytesSent < 2*int64(len("count my bytes")) || got.Stats.BytesReceived < int64(len("a fine answer")) {
		t.Fatalf("dataStats: %+v", got.Stats)
	}
	var msgs []workflows.Message
	getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
	if last := msgs[len(msgs)-1]; last.Stats.BytesSent != got.Stats.BytesSent || last.Stats.BytesReceived != got.Stats.BytesReceived {
		t.Fatalf("the answer's dataStats %+v differ from the workflow's %+v (one round)", last.Stats, got.Stats)
	}
}
