package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

// The text protocol serves models without function calling. Each
// round the model picks one action by JSON, then gives its parameters by
// JSON, and sees a compact observation of the result:
//
//	selection:   {"decision":"continue","action":{"name":"webfetch"},"reason":"…"}
//	             {"decision":"stop","answer":"…"}
//	parameters:  {"parameters":{"url":"…"}}
//	observation: {"success":true,"tool":"webfetch","resultLabel":"round2_action1_results","preview":"…"}
//
// A separate refinement step ("continue" or "stop" after each observation,
// as plan-act-observe-refine loops have it) is folded into the next
// selection, which carries the same
// decision, so a round costs two model calls rather than three. A selection
// may carry "parameters" itself, saving the second call. A reply that holds
// no JSON at all is taken as the final answer: such models often just answer.

// selection is the model's choice of the next step.
type selection struct {
	Decision string `json:"decision"`
	Answer   string `json:"answer"`
	Reason   string `json:"reason"`
	Action   struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"action"`
}

type parameters struct {
	Parameters json.RawMessage `json:"parameters"`
}

// observation is what the model sees of a tool's result.
type observation struct {
	Success     bool   `json:"success"`
	Tool        string `json:"tool"`
	ResultLabel string `json:"resultLabel"`
	Preview     string `json:"preview,omitempty"`
	Error       string `json:"error,omitempty"`
}

// previewBytes bounds an observation's preview.
const previewBytes = 4000

// textProtocolRules explains the protocol and lists the tools compactly:
// names, descriptions and parameter names (the schemas come with the
// parameter request).
func textProtocolRules(ts []tools.Tool) string {
	var b strings.Builder
	b.WriteString("You cannot call functions directly. Work in steps and reply with ONE JSON object only, no prose:\n")
	b.WriteString(`- to use a tool: {"decision":"continue","action":{"name":"<tool>"},"reason":"<why>"}` + "\n")
	b.WriteString(`- when you can answer: {"decision":"stop","answer":"<your answer to the user>"}` + "\n")
	b.WriteString("After choosing a tool you will be asked for its parameters, then shown an observation of its result.\nTools:\n")
	for _, t := range ts {
		mode := "writes"
		if t.ReadOnly {
			mode = "read-only"
		}
		fmt.Fprintf(&b, "- %s (%s): %s; parameters: %s\n", t.Name, mode, t.Description, strings.Join(paramNames(t.Parameters), ", "))
	}
	return b.String()
}

func paramNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var names []string
	for n := range s.Properties {
		if slices.Contains(s.Required, n) {
			n += "*"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// extractJSON finds the first JSON object in a reply (models wrap JSON in
// prose or code fences) and decodes it into v.
func extractJSON(reply string, v any) bool {
	for i := strings.IndexByte(reply, '{'); i >= 0; {
		dec := json.NewDecoder(strings.NewReader(reply[i:]))
		if dec.Decode(v) == nil {
			return true
		}
		next := strings.IndexByte(reply[i+1:], '{')
		if next < 0 {
			break
		}
		i += next + 1
	}
	return false
}

// ask sends the conversation, appends the reply as the assistant's turn and
// returns its text.
func (r *run) ask(ctx context.Context, round int) (string, error) {
	resp, err := r.chat(ctx, llm.ChatRequest{Messages: r.msgs}, false)
	if err != nil {
		return "", err
	}
	r.msgs = append(r.msgs, llm.Message{Role: "assistant", Content: resp.Message.Content})
	return resp.Message.Content, nil
}

func (r *run) tell(content string) {
	r.msgs = append(r.msgs, llm.Message{Role: "user", Content: content})
}

// textRound is one round of the text protocol.
func (r *run) textRound(ctx context.Context, round int) (string, bool, error) {
	var sel selection
	for try := 0; ; try++ {
		reply, err := r.ask(ctx, round)
		if err != nil {
			return "", false, err
		}
		sel = selection{}
		if !extractJSON(reply, &sel) {
			r.emit(ctx, workflows.EventChunk, workflows.ChunkData{Text: reply})
			return reply, true, nil
		}
		if sel.Decision == "stop" || (sel.Action.Name == "" && sel.Answer != "") {
			r.emit(ctx, workflows.EventChunk, workflows.ChunkData{Text: sel.Answer})
			return sel.Answer, true, nil
		}
		if _, ok := r.tools.Lookup(sel.Action.Name); ok || try == 1 {
			break
		}
		// An invalid selection gets one more chance: a slip of a weak
		// model should not end the round.
		r.tell(fmt.Sprintf(`There is no tool named %q. Choose one of: %s. Reply with the JSON object only.`,
			sel.Action.Name, strings.Join(toolNames(r.tools.Tools()), ", ")))
	}
	args := sel.Action.Parameters
	if t, ok := r.tools.Lookup(sel.Action.Name); ok && len(args) == 0 {
		r.tell(fmt.Sprintf(`Give the parameters for %s as {"parameters":{...}} matching this JSON Schema, and nothing else:\n%s`, t.Name, t.Parameters))
		reply, err := r.ask(ctx, round)
		if err != nil {
			return "", false, err
		}
		var p parameters
		if extractJSON(reply, &p) {
			args = p.Parameters
		}
	}
	id := fmt.Sprintf("call_%d_1", round)
	calls := []call{{id: id, name: sel.Action.Name, args: string(args)}}
	out := r.execute(ctx, round, calls)[0]
	obs := observation{Success: out.res.OK, Tool: sel.Action.Name, ResultLabel: fmt.Sprintf("round%d_action1_results", round)}
	if out.res.OK {
		obs.Preview = clipText(out.forModel(), previewBytes)
		if out.fit.over {
			// A fitted result is bounded already, and its end says
			// where the whole is and how to read it.
			obs.Preview = out.forModel()
		}
	} else {
		obs.Error = out.forModel()
	}
	b, _ := json.Marshal(obs)
	r.tell("Observation: " + string(b) + "\nChoose the next step (JSON only).")
	return "", false, refusedCall(calls, []outcome{out})
}

func toolNames(ts []tools.Tool) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
