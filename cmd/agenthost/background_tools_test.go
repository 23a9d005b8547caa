package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// TestBackgroundTools: the agent of a real server (built-in plugins, the
// embedded database) hands work to a background job with startBackground,
// checks it with checkBackgroundStatus, and the job's own agent runs and
// reports to the conversation that started it.
func TestBackgroundTools(t *testing.T) {
	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	model.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		msgs := r.Messages
		last := msgs[len(msgs)-1]
		switch {
		case strings.Contains(msgs[1].Content+last.Content, "Background job: Compare the offers"):
			return llmtest.Reply("Offer B is cheaper by CHF 120.")
		case last.Role == "tool" && strings.Contains(last.Content, `"status"`) && strings.Contains(lastToolCall(msgs), "checkBackgroundStatus"):
			return llmtest.Reply("The comparison runs in the background; I will report when it is done.")
		case last.Role == "tool":
			var job struct {
				ID string `json:"id"`
			}
			if i := strings.Index(last.Content, "{"); i >= 0 {
				json.Unmarshal([]byte(last.Content[i:]), &job)
			}
			return llmtest.CallTools(llmtest.Call("checkBackgroundStatus", `{"jobId":"`+job.ID+`"}`))
		default:
			return llmtest.CallTools(llmtest.Call("startBackground", `{"description":"Compare the offers","subtasks":["read offer A","read offer B"],"maxCostCHF":"1.00"}`))
		}
	}))
	data := t.TempDir()
	plugins := t.TempDir()
	tc := bootstrapTenant(t, data, plugins, "acme", nil)
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins)
	h := host{base: base + "/api/v1"}
	var w struct {
		ID string `json:"id"`
	}
	if st := h.call(t, tc.token, "POST", "/workspaces/"+tc.workspace+"/workflows", `{"prompt":"Compare the two offers in the background"}`, &w); st != 202 {
		t.Fatalf("start: %d\n%s", st, logs.String())
	}
	// The job may end before or after the round that started it.
	var ended, announced bool
	evs := h.events(t, tc.token, w.ID, func(e hostEvent) bool {
		ended = ended || e.typ == "complete"
		announced = announced || e.typ == "backgroundJob"
		return ended && announced
	})
	var job string
	for _, e := range evs {
		if e.typ == "backgroundJob" {
			job = e.data
		}
	}
	var calls []string
	for _, e := range evs {
		if e.typ == "toolResult" {
			calls = append(calls, e.data)
		}
	}
	if len(calls) != 2 || !strings.Contains(calls[0], `"tool":"startBackground","ok":true`) || !strings.Contains(calls[1], `"tool":"checkBackgroundStatus","ok":true`) {
		t.Fatalf("tool results %v", calls)
	}
	if !strings.Contains(job, `"status":"completed"`) || !strings.Contains(job, "Offer B is cheaper by CHF 120.") {
		t.Fatalf("backgroundJob event %s", job)
	}
	var msgs []struct {
		Content   string `json:"content"`
		AgentName string `json:"agentName"`
	}
	h.call(t, tc.token, "GET", "/workflows/"+w.ID+"/messages", "", &msgs)
	notes := 0
	for _, m := range msgs {
		if m.AgentName == "background" && strings.Contains(m.Content, "Offer B is cheaper") {
			notes++
		}
	}
	if notes != 1 {
		t.Fatalf("messages %+v, want one from the background job", msgs)
	}
}

// lastToolCall names the tools the model's last assistant message called.
func lastToolCall(msgs []llmtest.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" && len(msgs[i].ToolCalls) > 0 {
			var names []string
			for _, c := range msgs[i].ToolCalls {
				names = append(names, c.Name)
			}
			return strings.Join(names, ",")
		}
	}
	return ""
}
