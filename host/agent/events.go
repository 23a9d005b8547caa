package agent

import "context"

// Event is something the loop did, for the workflow's event stream. Type is
// one of the SSE event names of seed 000 §9.4; Data is the payload struct of
// that type below.
type Event struct {
	Type string
	Data any
}

// The event types the loop emits.
const (
	EventChunk         = "chunk"
	EventToolCall      = "toolCall"
	EventToolResult    = "toolResult"
	EventAgentProgress = "agentProgress"
	EventAgentSummary  = "agentSummary"
	EventStatus        = "status"
)

// Sink receives the loop's events in order. It must not block for long: the
// loop waits for it (events are persisted before the loop moves on, so a
// reconnecting client sees every step).
type Sink func(ctx context.Context, e Event)

// Chunk is a fragment of the answer as the model streams it.
type Chunk struct {
	Round int    `json:"round"`
	Text  string `json:"text"`
}

// ToolCall announces a tool call before it runs.
type ToolCall struct {
	Round     int    `json:"round"`
	CallID    string `json:"callId"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	ReadOnly  bool   `json:"readOnly"`
}

// ToolResult is a tool call's outcome.
type ToolResult struct {
	Round      int    `json:"round"`
	CallID     string `json:"callId"`
	Tool       string `json:"tool"`
	OK         bool   `json:"ok"`
	Content    string `json:"content"`
	ErrorCode  string `json:"errorCode,omitempty"`
	Error      string `json:"error,omitempty"`
	Attempts   int    `json:"attempts"`
	DurationMs int64  `json:"durationMs"`
}

// Progress follows each round.
type Progress struct {
	Round     int     `json:"round"`
	MaxRounds int     `json:"maxRounds"`
	ToolCalls int     `json:"toolCalls"`
	CostCHF   float64 `json:"costCHF"`
	Tokens    int     `json:"tokens"`
}

// Summary closes a run: its statistics and why it ended.
type Summary struct {
	Outcome    Outcome `json:"outcome"`
	Rounds     int     `json:"rounds"`
	ToolCalls  int     `json:"toolCalls"`
	CostCHF    float64 `json:"costCHF"`
	Tokens     int     `json:"tokens"`
	DurationMs int64   `json:"durationMs"`
}

// Status is a progress label ("summarising earlier rounds").
type Status struct {
	Label string `json:"label"`
}
