// Package client asks the MCP client that made the call (capability
// "client"; declare it in plugin.json): sampling (its model answers),
// elicitation (its user answers), log messages, and polling of long calls.
// A call that did not arrive over MCP has no client: every function then
// fails with code "unavailable". Requests and results are MCP's own JSON
// shapes (sampling/createMessage, elicitation/create, notifications/message).
package client

import (
	"encoding/json"

	"github.com/agenthost/agenthost/pdk"
)

// Message is one sampling message; Content is an MCP content block.
type Message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// Text is an MCP text content block.
func Text(s string) any { return map[string]string{"type": "text", "text": s} }

// SampleRequest is sampling/createMessage's params.
type SampleRequest struct {
	Messages     []Message `json:"messages"`
	MaxTokens    int       `json:"maxTokens"`
	SystemPrompt string    `json:"systemPrompt,omitempty"`
}

// SampleResult is the client model's answer.
type SampleResult struct {
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

// Sample asks the client's model.
func Sample(req SampleRequest) (SampleResult, error) {
	var res SampleResult
	err := pdk.Invoke(sample, req, &res)
	return res, err
}

// ElicitRequest is elicitation/create's params; RequestedSchema is the
// flat object schema of what the user is asked for.
type ElicitRequest struct {
	Message         string `json:"message"`
	RequestedSchema any    `json:"requestedSchema"`
}

// ElicitResult is the user's answer: Action is accept, decline or cancel.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicit asks the client's user.
func Elicit(req ElicitRequest) (ElicitResult, error) {
	var res ElicitResult
	err := pdk.Invoke(elicit, req, &res)
	return res, err
}

// Log sends a log message to the client (level: debug, info, notice,
// warning, error, …); the client's logging/setLevel filters it.
func Log(level string, data any) error {
	return pdk.Invoke(logMessage, map[string]any{"level": level, "data": data}, nil)
}

// Poll ends the call's response stream for now: the client reconnects
// after retryAfterMs and receives the result there (SEP-1699). Long calls
// use it so that no proxy holds one request open for minutes; under
// protocol revisions without resumable streams it does nothing.
func Poll(retryAfterMs int) error {
	return pdk.Invoke(poll, map[string]any{"retryAfterMs": retryAfterMs}, nil)
}
