package llmtest

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// Flavor is the provider whose documented error format the server answers
// in. Successful replies are OpenAI's chat completions in every flavor
// (each of these providers speaks that format on its OpenAI-compatible
// endpoint); errors differ, and a client must read each one right.
type Flavor int

// The flavors.
const (
	// OpenAI: {"error":{"message","type","param","code"}}, with codes such
	// as context_length_exceeded, rate_limit_exceeded, invalid_api_key;
	// Retry-After and retry-after-ms on a 429
	// (https://platform.openai.com/docs/guides/error-codes/api-errors,
	// https://platform.openai.com/docs/guides/rate-limits).
	OpenAI Flavor = iota
	// Azure OpenAI: the same envelope; a rate limit is code "429" with
	// "Please retry after N seconds." in the message and Retry-After /
	// retry-after-ms headers, a server error code "InternalServerError",
	// an authentication failure code "401" ("Access denied due to invalid
	// subscription key or wrong API endpoint…"); a context overflow is
	// OpenAI's context_length_exceeded
	// (https://learn.microsoft.com/azure/ai-services/openai/quotas-limits,
	// https://learn.microsoft.com/azure/ai-services/openai/reference).
	Azure
	// Anthropic: {"type":"error","error":{"type","message"},"request_id"},
	// types invalid_request_error (400, "prompt is too long: N tokens > M
	// maximum"), authentication_error (401), rate_limit_error (429, with
	// retry-after), api_error (500), overloaded_error (529), and a
	// request-id header (https://docs.claude.com/en/api/errors,
	// https://docs.claude.com/en/api/rate-limits).
	Anthropic
)

func (f Flavor) String() string {
	switch f {
	case Azure:
		return "azure"
	case Anthropic:
		return "anthropic"
	}
	return "openai"
}

// WithFlavor makes the server answer errors as provider f does.
func WithFlavor(f Flavor) Option { return func(o *options) { o.flavor = f } }

// WithContextWindow makes the server enforce model's context window, as
// the providers do: a chat request whose prompt (counted with the
// model's tiktoken encoding, OpenAI's counting: 3 tokens per message, 3
// for the reply's primer, the tool definitions) plus its max_tokens exceed
// tokens is refused with the flavor's context-length error, and nothing
// is answered or billed.
func WithContextWindow(model string, tokens int) Option {
	return func(o *options) { o.windows[model] = tokens }
}

// ContextError is the step the server serves for a request of prompt
// tokens (and completion more asked for by max_tokens) over a window, in
// flavor f's documented shape.
func ContextError(f Flavor, window, prompt, completion int) Step {
	var msg string
	switch {
	case f == Anthropic:
		msg = fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt+completion, window)
	case completion > 0:
		msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			window, prompt+completion, prompt, completion)
	default:
		msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, prompt)
	}
	s := Fail(http.StatusBadRequest, msg)
	s.ErrorType, s.ErrorCode, s.ErrorParam = "invalid_request_error", "context_length_exceeded", "messages"
	return s
}

// overWindow is the context error for req, if the server enforces a window
// for its model and the request passes it.
func (s *Server) overWindow(req ChatRequest) (Step, bool) {
	window, ok := s.opts.windows[req.Model]
	if !ok {
		return Step{}, false
	}
	completion := max(req.MaxTokens, req.MaxCompletionTokens)
	// A token covers at least one byte: a body within the window fits
	// without counting (a body of megabytes costs a second to count).
	if len(req.Raw)+completion <= window {
		return Step{}, false
	}
	prompt := promptTokens(req)
	if prompt+completion <= window {
		return Step{}, false
	}
	return ContextError(s.opts.flavor, window, prompt, completion), true
}

// promptTokens counts a request as OpenAI does for chat models.
func promptTokens(req ChatRequest) int {
	enc := encodingFor(req.Model)
	count := func(s string) int {
		if s == "" {
			return 0
		}
		ids, _, _ := enc.Encode(s)
		return len(ids)
	}
	n := 3
	for _, m := range req.Messages {
		n += 3 + count(m.Role) + count(m.Content) + count(m.Name)
		for _, tc := range m.ToolCalls {
			n += 3 + count(tc.Name) + count(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += 7 + count(t.Name) + count(t.Description) + count(string(t.Parameters))
	}
	return n
}

// encodingFor is the model's tiktoken encoding: o200k_base for the gpt-4o,
// gpt-4.1, gpt-5 and o-series families, cl100k_base otherwise.
func encodingFor(model string) tokenizer.Codec {
	name := tokenizer.Cl100kBase
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4"} {
		if strings.HasPrefix(strings.ToLower(model), p) {
			name = tokenizer.O200kBase
		}
	}
	c, err := tokenizer.Get(name)
	if err != nil {
		panic("llmtest: tokenizer " + string(name) + ": " + err.Error())
	}
	return c
}

// writeError writes an error step in the server's flavor and returns the
// status.
func (s *Server) writeError(w http.ResponseWriter, st Step) int {
	switch s.opts.flavor {
	case Azure:
		return writeAzureError(w, st)
	case Anthropic:
		return writeAnthropicError(w, st)
	}
	return writeOpenAIError(w, st)
}

func retryHeaders(w http.ResponseWriter, d time.Duration) {
	if d <= 0 {
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
	w.Header().Set("retry-after-ms", strconv.FormatInt(d.Milliseconds(), 10))
}

// writeAzureError: Azure OpenAI keeps OpenAI's envelope; its own gateway
// errors (rate limits, server errors, keys) carry a code and message only.
func writeAzureError(w http.ResponseWriter, st Step) int {
	retryHeaders(w, st.RetryAfter)
	w.Header().Set("apim-request-id", "llmtest-azure")
	var body map[string]any
	switch {
	case st.Status == http.StatusTooManyRequests:
		secs := max(1, int(math.Ceil(st.RetryAfter.Seconds())))
		body = map[string]any{"error": map[string]any{"code": "429", "message": fmt.Sprintf(
			"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after %d seconds.", secs)}}
	case st.Status == http.StatusUnauthorized:
		body = map[string]any{"error": map[string]any{"code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}
	case st.Status >= 500:
		body = map[string]any{"error": map[string]any{"code": "InternalServerError", "message": st.ErrorMessage}}
	default:
		e := map[string]any{"message": st.ErrorMessage, "type": st.ErrorType, "param": nil, "code": nil}
		if st.ErrorCode != "" {
			e["code"] = st.ErrorCode
		}
		if st.ErrorParam != "" {
			e["param"] = st.ErrorParam
		}
		body = map[string]any{"error": e}
	}
	writeJSON(w, st.Status, body)
	return st.Status
}

// writeAnthropicError: the error types by status of Anthropic's errors
// page, and its top-level request_id.
func writeAnthropicError(w http.ResponseWriter, st Step) int {
	if st.RetryAfter > 0 {
		w.Header().Set("retry-after", strconv.Itoa(int(math.Ceil(st.RetryAfter.Seconds()))))
	}
	w.Header().Set("request-id", "req_llmtest_anthropic")
	typ := "invalid_request_error"
	switch s := st.Status; {
	case s == http.StatusUnauthorized:
		typ = "authentication_error"
	case s == http.StatusForbidden:
		typ = "permission_error"
	case s == http.StatusNotFound:
		typ = "not_found_error"
	case s == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case s == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case s == 529:
		typ = "overloaded_error"
	case s >= 500:
		typ = "api_error"
	}
	writeJSON(w, st.Status, map[string]any{"type": "error",
		"error": map[string]any{"type": typ, "message": st.ErrorMessage}, "request_id": "req_llmtest_anthropic"})
	return st.Status
}
