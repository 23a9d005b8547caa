package agent

import (
	"context"

	"github.com/agenthost/agenthost/host/workflows"
)

// Event is something the loop did, for the workflow's event stream: Type is
// one of the stream's event names (docs/agent.md#events) and Data that
// type's payload struct of package workflows (ChunkData, ToolCallData, ToolResultData,
// AgentProgressData, AgentSummaryData, StatusData). The loop leaves
// ChunkData.MessageID empty: the caller knows which message the answer
// becomes.
type Event struct {
	Type workflows.EventType
	Data any
}

// Sink receives the loop's events in order. It must not block for long: the
// loop waits for it (events are persisted before the loop moves on, so a
// reconnecting client sees every step).
type Sink func(ctx context.Context, e Event)
