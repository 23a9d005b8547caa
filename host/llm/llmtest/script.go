package llmtest

import (
	"net/http"
	"time"
)

// Step is one scripted reply. The server takes the next step of an
// endpoint's script for every request to it, in order. A step is one of:
//
//   - a completion: Content and/or ToolCalls (chat), Transcript
//     (transcription), Audio (speech); the zero Step is an empty
//     completion ("" for chat, the default transcript, generated audio,
//     hash vectors for embeddings);
//   - an error: Status ≥ 400 with an OpenAI error body, optionally a
//     Retry-After;
//   - a decision: Func looks at the chat request and returns the step to
//     serve (so a test can answer by content: call a tool when tools are
//     offered, answer from the last tool result).
//
// Delay, ChunkDelay and CutAfter add timing and failures to any of them.
// Build steps with Reply, CallTools, Fail, RateLimited and Decide, and
// adjust them with the With… methods.
type Step struct {
	// Content is the assistant's text.
	Content string
	// ToolCalls are the calls the assistant makes; an empty ID is filled in
	// ("call_<request>_<i>").
	ToolCalls []ToolCall
	// FinishReason overrides the default ("tool_calls" with tool calls,
	// else "stop").
	FinishReason string
	// Usage overrides the token counts the server reports (by default an
	// estimate of about 4 bytes per token).
	Usage *Usage
	// NoUsage leaves usage out of the reply (and out of the stream, even
	// when the client asked for include_usage), like some local servers.
	NoUsage bool

	// Status ≥ 400 makes the step an error reply with an OpenAI error body.
	Status       int
	ErrorType    string
	ErrorCode    string
	ErrorParam   string
	ErrorMessage string
	// RetryAfter is sent as Retry-After (whole seconds, rounded up) and,
	// when not a whole number of seconds, also as retry-after-ms.
	RetryAfter time.Duration

	// Delay waits before answering (headers included). The wait ends early
	// if the client goes away, which lets tests provoke client time-outs.
	Delay time.Duration
	// ChunkDelay waits between the chunks of a streamed reply.
	ChunkDelay time.Duration
	// CutAfter > 0 drops the connection after that many streamed chunks,
	// without finish_reason or [DONE], like a broken upstream.
	CutAfter int

	// Func decides the step from the chat request. The step it returns is
	// served as if scripted (its own Func is ignored).
	Func func(ChatRequest) Step

	// Transcript is the text a transcription step returns.
	Transcript string
	// Audio is what a speech step returns.
	Audio []byte
	// Image is what an images step returns for each picture (PNG bytes).
	Image []byte
}

// ToolCall is a function call in a script or in a recorded request.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token usage the server reports.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Reply is a step that answers with text.
func Reply(content string) Step { return Step{Content: content} }

// CallTools is a step whose answer calls tools (in parallel when several).
func CallTools(calls ...ToolCall) Step { return Step{ToolCalls: calls} }

// Call is a tool call with the given name and raw JSON arguments; the server
// assigns its ID.
func Call(name, arguments string) ToolCall { return ToolCall{Name: name, Arguments: arguments} }

// Decide is a step that lets f choose the reply from the request.
func Decide(f func(ChatRequest) Step) Step { return Step{Func: f} }

// Fail is an error step: status with OpenAI's error type and code for it
// (429 rate_limit_exceeded, 5xx server_error, 401 invalid_api_key, other 4xx
// invalid_request_error) and message.
func Fail(status int, message string) Step {
	s := Step{Status: status, ErrorMessage: message}
	switch {
	case status == http.StatusTooManyRequests:
		s.ErrorType, s.ErrorCode = "requests", "rate_limit_exceeded"
	case status == http.StatusUnauthorized:
		s.ErrorType, s.ErrorCode = "invalid_request_error", "invalid_api_key"
	case status >= 500:
		s.ErrorType = "server_error"
	default:
		s.ErrorType = "invalid_request_error"
	}
	if s.ErrorMessage == "" {
		s.ErrorMessage = http.StatusText(status)
	}
	return s
}

// RateLimited is a 429 step that asks the client to wait retryAfter (0: no
// Retry-After header).
func RateLimited(retryAfter time.Duration) Step {
	s := Fail(http.StatusTooManyRequests, "Rate limit reached for requests. Please try again later.")
	s.RetryAfter = retryAfter
	return s
}

// WithDelay returns s waiting d before it answers.
func (s Step) WithDelay(d time.Duration) Step { s.Delay = d; return s }

// WithChunkDelay returns s streaming with d between chunks.
func (s Step) WithChunkDelay(d time.Duration) Step { s.ChunkDelay = d; return s }

// WithCutAfter returns s dropping the connection after n streamed chunks.
func (s Step) WithCutAfter(n int) Step { s.CutAfter = n; return s }

// WithUsage returns s reporting these token counts.
func (s Step) WithUsage(prompt, completion int) Step {
	s.Usage = &Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return s
}

// WithoutUsage returns s reporting no usage.
func (s Step) WithoutUsage() Step { s.NoUsage = true; return s }
