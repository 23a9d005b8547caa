package llm

import (
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// wireNames maps tool names to the names a provider accepts and back.
// OpenAI-compatible APIs take function names matching ^[a-zA-Z0-9_-]{1,64}$;
// a legacy action's tool is named "method.action" everywhere in agenthost
// and is "method_action" on the wire (manifest.WireName). The mapping is
// per request, from its tools, so a name the model makes up stays as it is
// (and is refused as an unknown tool).
type wireNames struct {
	toWire, fromWire map[string]string
}

// newWireNames maps req's tool names; two tools that would look alike on
// the wire are refused, as the model's calls could not be told apart.
func newWireNames(tools []ToolDef) (wireNames, error) {
	var w wireNames
	seen := map[string]string{}
	for _, t := range tools {
		wire := manifest.WireName(t.Name)
		if other, dup := seen[wire]; dup && other != t.Name {
			return wireNames{}, fmt.Errorf("llm: %w: tools %q and %q are both %q on the wire", ErrInvalidRequest, other, t.Name, wire)
		}
		seen[wire] = t.Name
		if wire == t.Name {
			continue
		}
		if w.toWire == nil {
			w.toWire, w.fromWire = map[string]string{}, map[string]string{}
		}
		w.toWire[t.Name], w.fromWire[wire] = wire, t.Name
	}
	return w, nil
}

func (w wireNames) wire(name string) string {
	if n, ok := w.toWire[name]; ok {
		return n
	}
	return name
}

func (w wireNames) local(name string) string {
	if n, ok := w.fromWire[name]; ok {
		return n
	}
	return name
}

// outgoing returns req with its tool names as the provider must see them:
// the tools offered, the calls of earlier assistant messages and the names
// on tool messages.
func (w wireNames) outgoing(req ChatRequest) ChatRequest {
	if w.toWire == nil {
		return req
	}
	tools := make([]ToolDef, len(req.Tools))
	for i, t := range req.Tools {
		t.Name = w.wire(t.Name)
		tools[i] = t
	}
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Name = w.wire(c.Name)
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		if m.Role == RoleTool {
			m.Name = w.wire(m.Name)
		}
		msgs[i] = m
	}
	req.Tools, req.Messages = tools, msgs
	return req
}

// incoming gives the model's calls their agenthost names.
func (w wireNames) incoming(m Message) Message {
	if w.fromWire == nil || len(m.ToolCalls) == 0 {
		return m
	}
	calls := make([]ToolCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		c.Name = w.local(c.Name)
		calls[i] = c
	}
	m.ToolCalls = calls
	return m
}

// deltas wraps onDelta so a streamed call's name arrives as agenthost's.
func (w wireNames) deltas(onDelta func(Delta)) func(Delta) {
	if w.fromWire == nil || onDelta == nil {
		return onDelta
	}
	return func(d Delta) {
		if d.ToolCallName != "" {
			d.ToolCallName = w.local(d.ToolCallName)
		}
		onDelta(d)
	}
}
