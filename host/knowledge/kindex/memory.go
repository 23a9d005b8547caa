package kindex

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/tenancy"
)

// MemorySource says where an entry of a workflow's memory came from.
type MemorySource string

// The memory sources.
const (
	// MemoryExtraction: facts the entity cache extracted (keys "entity:<name>").
	MemoryExtraction MemorySource = "extraction"
	// MemoryTool: results of tool calls (keys "tool:<call id>").
	MemoryTool MemorySource = "tool"
	// MemoryConversation: notes taken from the conversation.
	MemoryConversation MemorySource = "conversation"
	// MemorySummary: summaries. The agent's running summary itself stays on
	// the workflow row (see ContextBuilder), where it is replaced together
	// with the round's statistics in one statement.
	MemorySummary MemorySource = "summary"
)

// Valid reports whether s is one of the memory sources.
func (s MemorySource) Valid() bool {
	switch s {
	case MemoryExtraction, MemoryTool, MemoryConversation, MemorySummary:
		return true
	}
	return false
}

// Limits of a memory entry: a key names a fact, a value holds it (a tool
// result is cut to far less before it is stored, see ToolMemoryBytes).
const (
	MaxMemoryKeyBytes   = 200
	MaxMemoryValueBytes = 64 << 10
)

// Memory is one entry of a workflow's memory: the workflow layer of the
// knowledge store. Keys are unique within a workflow; writing a key again
// replaces its value and source.
type Memory struct {
	ID         string       `json:"id"`
	WorkflowID string       `json:"workflowId"`
	Key        string       `json:"key"`
	Value      string       `json:"value"`
	Source     MemorySource `json:"source"`
	CreatedAt  time.Time    `json:"createdAt"`
	UpdatedAt  time.Time    `json:"updatedAt"`
}

// Validate checks an entry before it is stored.
func (m Memory) Validate() error {
	switch {
	case m.WorkflowID == "":
		return fmt.Errorf("%w: memory entry without a workflow", tenancy.ErrInvalid)
	case strings.TrimSpace(m.Key) == "":
		return fmt.Errorf("%w: memory key is empty", tenancy.ErrInvalid)
	case len(m.Key) > MaxMemoryKeyBytes:
		return fmt.Errorf("%w: memory key is %d bytes, more than %d", tenancy.ErrInvalid, len(m.Key), MaxMemoryKeyBytes)
	case len(m.Value) > MaxMemoryValueBytes:
		return fmt.Errorf("%w: memory value is %d bytes, more than %d", tenancy.ErrInvalid, len(m.Value), MaxMemoryValueBytes)
	case !utf8.ValidString(m.Key) || !utf8.ValidString(m.Value):
		return fmt.Errorf("%w: memory entry is not valid UTF-8", tenancy.ErrInvalid)
	case !m.Source.Valid():
		return fmt.Errorf("%w: memory source %q (extraction, tool, conversation, summary)", tenancy.ErrInvalid, m.Source)
	}
	return nil
}
