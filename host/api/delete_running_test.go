package api_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
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
