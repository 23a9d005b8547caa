package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/tenancy"
)

// TestPreferencesAPI: a person's settings are read and replaced whole at
// /me/preferences, malformed ones refused; their custom instructions reach
// the model (after the host's system prompt, delimited) in their
// conversations and not in another person's; a new conversation of theirs
// that names no model uses their default model while the workspace allows
// it, and the workspace's default once it does not.
func TestPreferencesAPI(t *testing.T) {
	ts := server(t, threeModels)
	mia := manager(t, ts)
	jsonCall := func(method, path, token, body string) call {
		return call{method, path, token, "application/json", strings.NewReader(body)}
	}
	prefs := func(tok string) tenancy.Preferences {
		t.Helper()
		status, _, raw := do(t, ts.base, call{"GET", "/me/preferences", tok, "", nil})
		var p tenancy.Preferences
		if status != 200 || json.Unmarshal(raw, &p) != nil {
			t.Fatalf("GET /me/preferences: %d %s", status, raw)
		}
		return p
	}
	if got := prefs(ts.alice); got != (tenancy.Preferences{Theme: "system"}) {
		t.Fatalf("none saved: %+v", got)
	}
	for _, c := range []struct {
		name, body string
	}{
		{"an unknown theme", `{"theme":"sepia"}`},
		{"an unknown field", `{"theme":"dark","colour":"red"}`},
		{"instructions past the bound", `{"customInstructions":"` + strings.Repeat("x", tenancy.MaxCustomInstructions+1) + `"}`},
		{"a bare model", `{"defaultModel":"cheap"}`},
	} {
		if status, _, raw := do(t, ts.base, jsonCall("PUT", "/me/preferences", ts.alice, c.body)); status != 400 {
			t.Errorf("%s: %d %s, want 400", c.name, status, raw)
		}
	}
	const mark = "Sign every answer with ALICE-7."
	want := tenancy.Preferences{Language: "de", Theme: "dark", CustomInstructions: mark, DefaultModel: "test/cheap"}
	body, _ := json.Marshal(want)
	if status, _, raw := do(t, ts.base, jsonCall("PUT", "/me/preferences", ts.alice, string(body))); status != 200 {
		t.Fatalf("PUT: %d %s", status, raw)
	}
	if got := prefs(ts.alice); got != want {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if got := prefs(ts.bob); got != (tenancy.Preferences{Theme: "system"}) {
		t.Errorf("bob sees %+v", got)
	}

	// One conversation each; what the model was asked for, and whether the
	// person's instructions came along.
	type asked struct {
		model        string
		instructions bool
	}
	round := func(tok string) asked {
		t.Helper()
		before := len(ts.model.ChatRequests())
		ts.model.Script(llmtest.Reply("ok"))
		w := startWorkflow(t, ts, tok, `{"prompt":"hi"}`)
		as := ts // the events are read as the conversation's person
		as.alice = tok
		if _, end := waitDone(t, as, w.ID); !strings.Contains(end, `"completed"`) {
			t.Fatalf("round ended %s", end)
		}
		reqs := ts.model.ChatRequests()
		if len(reqs) != before+1 {
			t.Fatalf("%d model calls, want 1", len(reqs)-before)
		}
		r := reqs[len(reqs)-1]
		got := asked{model: r.Model}
		for i, m := range r.Messages {
			if !strings.Contains(m.Content, mark) {
				continue
			}
			got.instructions = true
			if m.Role != "system" || i == 0 || r.Messages[0].Role != "system" || strings.Contains(r.Messages[0].Content, mark) ||
				!strings.Contains(m.Content, "<person-instructions>\n"+mark+"\n</person-instructions>") {
				t.Errorf("the instructions are not a delimited system message after the host's: %d %+v", i, r.Messages)
			}
		}
		return got
	}
	if got := round(ts.alice); got != (asked{"cheap", true}) {
		t.Errorf("alice's conversation: %+v, want her default model and instructions", got)
	}
	if got := round(ts.bob); got != (asked{"scripted", false}) {
		t.Errorf("bob's conversation: %+v, want the workspace's default and no instructions of alice's", got)
	}
	// The workspace no longer allows alice's default: the workspace's
	// default answers her new conversation, her instructions still go.
	if status, _, raw := do(t, ts.base, jsonCall("PUT", "/workspaces/"+ts.wsA+"/models", mia, `{"allowed":["test/scripted","test/vision"]}`)); status != 200 {
		t.Fatalf("narrow: %d %s", status, raw)
	}
	if got := round(ts.alice); got != (asked{"scripted", true}) {
		t.Errorf("alice's conversation where her default is not allowed: %+v", got)
	}
}
