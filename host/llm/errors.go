package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotConfigured: the operation has no model. The wrapping error says
	// which setting to make.
	ErrNotConfigured = errors.New("no model configured")
	// ErrUnavailable: every model of the chain failed with a retryable
	// error (rate limit, 5xx, time-out, connection). The error also wraps the
	// last *ProviderError.
	ErrUnavailable = errors.New("no model of the chain answered")
	// ErrStreamInterrupted: a streamed chat broke after deltas had reached
	// the caller, so it was neither retried nor moved to another model. The
	// returned ChatResponse holds what arrived.
	ErrStreamInterrupted = errors.New("stream interrupted after deltas were delivered")
	// ErrNoFunctionCalling: the request offers tools but no model of the
	// chain supports function calling; use a text protocol instead.
	ErrNoFunctionCalling = errors.New("no model of the chain supports function calling")
	// ErrTimeout: one request to a provider took longer than the provider's
	// timeout (for a stream: no chunk for that long). Retryable.
	ErrTimeout = errors.New("provider request timed out")
	// ErrMeter: the call succeeded but the Meter refused its usage. The
	// result is returned as well; callers that bill strictly treat this as a
	// failure.
	ErrMeter = errors.New("recording usage failed")
	// ErrRefused: the call was refused before anything was sent (the
	// tenant is over its spending limits; see Admitter). The wrapping error
	// says which limit.
	ErrRefused = errors.New("call refused")
	// ErrContextLength: the provider refused the request as longer than the
	// model's context window (OpenAI's and Azure's
	// context_length_exceeded, Anthropic's "prompt is too long"). It is
	// not retried: the caller must shorten the request (the agent compacts
	// its context and calls once more). ProviderError.ContextWindow holds
	// the window the provider named, when it named one.
	ErrContextLength = errors.New("the request exceeds the model's context window")
	// ErrInvalidRequest: the request was rejected before anything was sent
	// (empty input, wrong operation, audio too large).
	ErrInvalidRequest = errors.New("invalid request")
)

// ProviderError is one failed request to a provider: what the provider said
// (HTTP status, OpenAI error type, code, param and message), or the transport
// error when there was no response. Err is the underlying error (go-openai's
// *APIError or *RequestError, a net error, ErrTimeout, …).
type ProviderError struct {
	Provider, Model string
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	Type       string
	Code       string
	Param      string
	Message    string
	// RetryAfter is what the provider asked us to wait (Retry-After or
	// retry-after-ms), 0 when it did not say.
	RetryAfter time.Duration
	// RequestID is the provider's x-request-id, for support tickets.
	RequestID string
	// Kind is what kind of failure it was, which decides what is done
	// about it (see ErrorKind).
	Kind ErrorKind
	// ContextWindow is the window a context-length error named (0: none).
	ContextWindow int
	Err           error
	retryable     bool
}

// ErrorKind sorts provider failures by what helps: waiting and trying
// again (rate limit, server, time-out, transport), another model
// (the same and quota), or nothing but a different request (context
// length, invalid request, authentication).
type ErrorKind string

// The kinds of provider failure.
const (
	KindContextLength  ErrorKind = "contextLength"
	KindInvalidRequest ErrorKind = "invalidRequest"
	KindAuth           ErrorKind = "auth"
	KindRateLimit      ErrorKind = "rateLimit"
	KindServer         ErrorKind = "server"
	KindTimeout        ErrorKind = "timeout"
	KindTransport      ErrorKind = "transport"
)

// Is makes a context-length failure match ErrContextLength.
func (e *ProviderError) Is(target error) bool {
	return target == ErrContextLength && e.Kind == KindContextLength
}

// Error says who failed and what the provider said: "llm: openai model
// \"gpt-4o\": HTTP 400 (invalid_request_error, param tools): …".
func (e *ProviderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: %s model %q: ", e.Provider, e.Model)
	if e.StatusCode == 0 {
		b.WriteString(errString(e.Err))
		return b.String()
	}
	fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	var tags []string
	for _, s := range []string{e.Type, e.Code} {
		if s != "" {
			tags = append(tags, s)
		}
	}
	if e.Param != "" {
		tags = append(tags, "param "+e.Param)
	}
	if len(tags) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(tags, ", "))
	}
	msg := e.Message
	if msg == "" {
		msg = errString(e.Err)
	}
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed later or on another
// model: 408, 429, 5xx, transport errors and time-outs.
func (e *ProviderError) Retryable() bool { return e.retryable }
