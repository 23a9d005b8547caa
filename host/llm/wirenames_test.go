package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// TestChatActionToolNamesOnTheWire: a legacy action's tool is
// "context.neutralizeData" to agenthost and context_neutralizeData to the
// provider, which (like OpenAI, and llmtest) refuses a dot in a function
// name. The history sent back carries wire names; the calls that come back
// carry agenthost's, streamed or not.
func TestChatActionToolNamesOnTheWire(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	defs := []llm.ToolDef{{Name: "context.neutralizeData", Description: "Redacts.", Parameters: params},
		{Name: "readFile", Description: "Reads.", Parameters: params}}
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streamed"}[stream], func(t *testing.T) {
			s := newSetup(t, 5*time.Second, agentChain())
			s.srv.Script(llmtest.CallTools(llmtest.Call("context_neutralizeData", `{}`), llmtest.Call("readFile", `{}`)), llmtest.Reply("done"))
			var names []string
			var onDelta func(llm.Delta)
			if stream {
				onDelta = func(d llm.Delta) {
					if d.ToolCallName != "" {
						names = append(names, d.ToolCallName)
					}
				}
			}
			msgs := []llm.Message{{Role: llm.RoleUser, Content: "redact it"}}
			resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: msgs, Tools: defs}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].Name != "context.neutralizeData" || calls[1].Name != "readFile" {
				t.Fatalf("calls = %+v", calls)
			}
			if stream && (len(names) != 2 || names[0] != "context.neutralizeData") {
				t.Errorf("streamed names = %v", names)
			}
			// The next round sends the history back.
			msgs = append(msgs, resp.Message,
				llm.Message{Role: llm.RoleTool, ToolCallID: calls[0].ID, Name: calls[0].Name, Content: "[NAME_1]"},
				llm.Message{Role: llm.RoleTool, ToolCallID: calls[1].ID, Name: calls[1].Name, Content: "text"})
			if _, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: msgs, Tools: defs}, onDelta); err != nil {
				t.Fatal(err)
			}
			sent := s.srv.ChatRequests()
			for i, req := range sent {
				if req.Tools[0].Name != "context_neutralizeData" || req.Tools[1].Name != "readFile" {
					t.Errorf("request %d offered %q, %q", i, req.Tools[0].Name, req.Tools[1].Name)
				}
			}
			h := sent[1].Messages
			if h[1].ToolCalls[0].Name != "context_neutralizeData" || h[2].Name != "context_neutralizeData" || h[3].Name != "readFile" {
				t.Errorf("history sent as %+v", h[1:])
			}
			// The caller's messages are not changed in place.
			if msgs[1].ToolCalls[0].Name != "context.neutralizeData" {
				t.Errorf("the caller's message was rewritten: %+v", msgs[1])
			}
		})
	}
}

func TestChatRefusesToolsAlikeOnTheWire(t *testing.T) {
	s := newSetup(t, 5*time.Second, agentChain())
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	_, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}},
		Tools: []llm.ToolDef{{Name: "context.neutralizeData", Parameters: params}, {Name: "context_neutralizeData", Parameters: params}}}, nil)
	if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), "context_neutralizeData") {
		t.Fatalf("Chat = %v, want ErrInvalidRequest naming the wire name", err)
	}
	if n := len(s.srv.ChatRequests()); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}

// TestLLMTestRefusesDottedFunctionNames: the scripted server holds function
// names to OpenAI's pattern, so a test that sent "a.b" would fail.
func TestLLMTestRefusesDottedFunctionNames(t *testing.T) {
	srv := llmtest.New(t)
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"context.neutralizeData","parameters":{"type":"object"}}}]}`
	resp, err := httpPost(srv.URL()+"/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.status != 400 || !strings.Contains(resp.body, "tools[0].function.name") {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
}

type posted struct {
	status int
	body   string
}

func httpPost(url, body string) (posted, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return posted{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return posted{resp.StatusCode, string(b)}, err
}
