// Package client asks the MCP client that made the call (capability
// "client"; declare it in plugin.json): sampling (its model answers),
// elicitation (its user answers), its roots, log messages, and polling of
// long calls. A call that did not arrive over MCP has no client: every
// function then fails with code "unavailable". Requests and results are
// MCP's own JSON shapes (sampling/createMessage, elicitation/create,
// roots/list, notifications/message).
//
// Each question has a key. Under MCP 2026-07-28 the server cannot ask
// while the call runs: a question not yet answered fails with
// IsInputRequired, the plugin returns (the error is fine), the client
// answers, and the call runs again from the start — this time the same
// question (same key) is answered at once. Ask every question you can
// before giving up, so the client answers them in one round; keep the
// code before the questions free of effects, as it runs again.
package client

import (
	"encoding/json"
	"errors"

	"github.com/agenthost/agenthost/pdk"
)

// IsInputRequired reports whether err is a question the client answers in
// the next round (the call should end; it runs again with the answer).
func IsInputRequired(err error) bool {
	var e *pdk.Error
	return errors.As(err, &e) && e.Code == "input_required"
}

// IsMissingCapability reports whether the client did not declare it can
// answer this kind of question (ending the call with this error tells the
// client which capability it needs).
func IsMissingCapability(err error) bool {
	var e *pdk.Error
	return errors.As(err, &e) && e.Code == "missing_client_capability"
}

type question struct {
	Key     string `json:"key,omitempty"`
	Request any    `json:"request"`
}

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
	Role  string `json:"role"`
	Model string `json:"model"`
	// Content is one content block, or (2026-07-28) a list of them.
	Content json.RawMessage `json:"content"`
}

// Text is the answer's first text, or "" when it has none.
func (r SampleResult) Text() string {
	type block struct{ Type, Text string }
	var one block
	if json.Unmarshal(r.Content, &one) == nil && one.Type == "text" {
		return one.Text
	}
	var many []block
	if json.Unmarshal(r.Content, &many) == nil {
		for _, b := range many {
			if b.Type == "text" {
				return b.Text
			}
		}
	}
	return ""
}

// Sample asks the client's model; key names the question (see the package
// documentation; "" numbers questions in the order they are asked).
func Sample(key string, req SampleRequest) (SampleResult, error) {
	var res SampleResult
	err := pdk.Invoke(sample, question{key, req}, &res)
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

// Elicit asks the client's user; key names the question.
func Elicit(key string, req ElicitRequest) (ElicitResult, error) {
	var res ElicitResult
	err := pdk.Invoke(elicit, question{key, req}, &res)
	return res, err
}

// Root is one of the client's roots (a directory or file it exposes).
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Roots asks the client for its roots; key names the question.
func Roots(key string) ([]Root, error) {
	var res struct {
		Roots []Root `json:"roots"`
	}
	err := pdk.Invoke(roots, question{key, struct{}{}}, &res)
	return res.Roots, err
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
