package llm

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a chat, in the OpenAI shape.
//
// Role is system, user, assistant or tool. An assistant message may carry
// ToolCalls (with or without Content); a tool message answers one of them and
// names it by ToolCallID. Name is optional (a participant's name). A user
// message may carry Images (sent as image_url content parts after its
// text), for a vision-capable model.
type Message struct {
	Role       string       `json:"role"`
	Content    string       `json:"content,omitempty"`
	Images     []ImageInput `json:"images,omitempty"`
	ToolCalls  []ToolCall   `json:"toolCalls,omitempty"`
	ToolCallID string       `json:"toolCallId,omitempty"`
	Name       string       `json:"name,omitempty"`
}

// ImageInput is a picture given to the model: its bytes (PNG, JPEG, WEBP
// or GIF, which OpenAI-compatible vision endpoints take) and the detail
// asked for ("low", "high", or "" for the provider's "auto").
type ImageInput struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
	Detail   string `json:"detail,omitempty"`
}

// ToolCall is one function call the model asked for.
//
// Arguments is the raw JSON text the model produced. It is not checked: it
// may be invalid JSON or not match the tool's schema, so callers validate it
// (and report problems back to the model as a tool result).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef offers one function to the model. Parameters is a JSON Schema
// object; nil means "no parameters" and is sent as an empty object schema.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ChatRequest is one chat completion.
//
// Operation selects the model chain (OpAgent when empty; only OpAgent and
// OpSummary are chat operations). Tools may only be given when the chain has
// models with function calling: models flagged without it are skipped for
// such a request (see ErrNoFunctionCalling). MaxTokens bounds the completion
// (0: the provider's default). Temperature nil leaves the provider's default;
// a pointer to 0 really sends 0.
type ChatRequest struct {
	Operation   modeluse.Operation
	Messages    []Message
	Tools       []ToolDef
	MaxTokens   int
	Temperature *float32
}

// Try is one HTTP request of a call, a retry or a fallback model's.
type Try struct {
	Provider, Model string
	// Status is the HTTP status, 0 when no response came.
	Status int
	// Kind and Error say how it failed; both empty for the answer.
	Kind  ErrorKind
	Error string
	// Duration is the request's; Wait the back-off before the next one.
	Duration, Wait time.Duration
}

// ChatResponse is a finished chat completion. Message has role assistant and
// carries Content, ToolCalls (in the model's order) or both. FinishReason is
// the provider's: "stop", "tool_calls", "length", "content_filter".
type ChatResponse struct {
	Message      Message
	FinishReason string
	// Usage is the call's, billed to the model that answered (Usage.Model).
	Usage modeluse.Usage
	// Tries are the call's HTTP requests in order, retries and fallback
	// models included: which model each went to and how each failed; the
	// last is the one that answered when the call succeeded. They are
	// returned with an error too.
	Tries []Try
}

// Delta is one streamed fragment, delivered to Chat's onDelta in arrival
// order. It is either text (Content non-empty, tool-call fields empty) or a
// piece of a tool call: ToolCallIndex says which call (0, 1, … in the order
// the model makes them); the first piece of a call carries ToolCallID and
// ToolCallName, later pieces append ToolCallArguments. The assembled calls
// are in ChatResponse.Message.ToolCalls when Chat returns.
type Delta struct {
	Content           string
	ToolCallIndex     int
	ToolCallID        string
	ToolCallName      string
	ToolCallArguments string
}

// IsToolCall reports whether d is a tool-call fragment rather than text.
func (d Delta) IsToolCall() bool {
	return d.ToolCallID != "" || d.ToolCallName != "" || d.ToolCallArguments != ""
}

// ModelInfo describes a configured model.
//
// ContextWindow is in tokens. Prices are in CHF: per million input and
// output tokens for chat and embedding models, per minute of audio for
// transcription, per million characters for speech.
type ModelInfo struct {
	Provider, Name  string
	ContextWindow   int
	FunctionCalling bool
	// Images: the model reads images in messages (ModelConfig.Images).
	Images         bool
	InputCHFPer1M  float64
	OutputCHFPer1M float64
	CHFPerMinute   float64
	CHFPer1MChars  float64
	CHFPerImage    float64
	// Dimensions is the embedding vector length asked of the model (0: the
	// model's own).
	Dimensions int
}

// Meter receives the usage of every call, for billing. Attribution (tenant,
// workspace, workflow) travels in ctx; see WithAttribution. Record is called
// synchronously on the calling goroutine once the call has finished, with a
// context that is no longer cancelled by the caller (so a stopped workflow
// still pays for what it used); it should be quick. An error from Record is
// returned by the call (wrapping ErrMeter) together with its result.
type Meter interface {
	Record(ctx context.Context, u modeluse.Usage) error
}

// Admitter decides before each call whether it may start (the billing
// meter refuses calls of a tenant over its limits). Its error reaches the
// caller wrapped in ErrRefused, and nothing is sent.
type Admitter interface {
	Admit(ctx context.Context, op modeluse.Operation) error
}

// Reserver is a meter that, before each call, holds the call's estimated
// cost against the tenant's limits (the billing meter), so that concurrent
// calls cannot together spend past them: a call whose estimate does not fit
// is refused (wrapped in ErrRefused) and nothing is sent. The client asks a
// Reserver instead of an Admitter.
type Reserver interface {
	Reserve(ctx context.Context, op modeluse.Operation, estimate money.Amount) (Hold, error)
}

// Hold is one call's reservation: Settle records the call's usage in place
// of the estimate (instead of Meter.Record); Release gives the estimate
// back when the call recorded nothing. Whichever comes first ends the hold.
type Hold interface {
	Settle(ctx context.Context, u modeluse.Usage) error
	Release(ctx context.Context)
}

// MeterFunc adapts a function to Meter.
type MeterFunc func(ctx context.Context, u modeluse.Usage) error

// Record calls f.
func (f MeterFunc) Record(ctx context.Context, u modeluse.Usage) error { return f(ctx, u) }

// Attribution says whom a call is billed to and why. Purpose is a short
// label such as "agent.round", "summary" or "embedding.ingest".
type Attribution struct {
	TenantID, WorkspaceID, UserID, WorkflowID, Purpose string
}

type attributionKey struct{}

// WithAttribution returns a context that carries a. The Meter reads it back
// with AttributionFrom. It costs one context allocation.
func WithAttribution(ctx context.Context, a Attribution) context.Context {
	return context.WithValue(ctx, attributionKey{}, a)
}

// AttributionFrom returns the attribution in ctx, or the zero Attribution.
func AttributionFrom(ctx context.Context) Attribution {
	a, _ := ctx.Value(attributionKey{}).(Attribution)
	return a
}
