package manifest

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// Action is one legacy workflow action of an actions plugin: a
// method.action pair with its
// description, the JSON Schema of its parameters and dynamicMode. The host
// makes every dynamicMode action an agent tool named [Action.ToolName];
// the others stay declared (the code must still register them) but are
// offered to no agent.
type Action struct {
	// Method groups actions ("context", "trustee"); no underscore, so the
	// wire name method_action splits back unambiguously.
	Method string `json:"method"`
	// Action names the action within its method ("neutralizeData").
	Action      string `json:"action"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the parameters object; the host
	// validates a call's arguments against it before the guest runs.
	Parameters json.RawMessage `json:"parameters"`
	// DynamicMode marks an action the model may choose: only these become tools.
	DynamicMode bool `json:"dynamicMode"`
	// ReadOnly actions change nothing outside the call; they may return no
	// documents (storing one is a write).
	ReadOnly bool `json:"readOnly,omitempty"`
}

// ToolName is the name the agent, the API and the logs use: "method.action".
func (a Action) ToolName() string { return a.Method + "." + a.Action }

// maxToolName is OpenAI's limit on a function name, which a tool name must
// meet on the wire.
const maxToolName = 64

// WireName is the name a tool has where only ^[a-zA-Z0-9_-]{1,64}$ is
// allowed (OpenAI function names): every other character becomes "_", so
// "context.neutralizeData" is "context_neutralizeData". Tool names of tool
// plugins already meet the rule and are unchanged.
func WireName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
}

//go:embed action_result.json
var actionResultSchema []byte

// ActionResultSchema is the JSON Schema of what an action returns
// (success, documents, error); the host checks every
// result of an action tool against it.
func ActionResultSchema() json.RawMessage { return append(json.RawMessage(nil), actionResultSchema...) }

// actionTools derives the agent tools of an actions plugin: one per
// dynamicMode action, in declaration order.
func (m *Manifest) actionTools() []Tool {
	var out []Tool
	for _, a := range m.Actions {
		if !a.DynamicMode {
			continue
		}
		out = append(out, Tool{Name: a.ToolName(), Description: a.Description, ReadOnly: a.ReadOnly,
			InputSchema: a.Parameters, OutputSchema: ActionResultSchema(), action: true})
	}
	return out
}

// Action returns the action a tool of an actions plugin stands for.
func (m *Manifest) Action(toolName string) (Action, bool) {
	for _, a := range m.Actions {
		if a.ToolName() == toolName {
			return a, true
		}
	}
	return Action{}, false
}

// MarshalJSON writes the manifest as the format has it: an actions plugin's
// tools are derived from its actions when it is read, so they are not
// written.
func (m Manifest) MarshalJSON() ([]byte, error) {
	type plain Manifest
	if m.Kind == KindActions {
		m.Tools = nil
	}
	return json.Marshal(plain(m))
}
