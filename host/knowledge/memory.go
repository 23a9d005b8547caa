package knowledge

import (
	"context"
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

// EntityPrefix starts the key of every entity the entity cache keeps.
const EntityPrefix = "entity:"

// ToolPrefix starts the key of every recorded tool result.
const ToolPrefix = "tool:"

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

// MemoryStore keeps workflows' memory (host/store implements it). Access
// follows the workflow's: its owner reads and writes, a tenant admin reads;
// anyone else gets ErrNotFound, an admin writing another's ErrForbidden.
// Entries are deleted with their workflow.
type MemoryStore interface {
	// UpsertMemory stores m, replacing the value and source of an entry
	// with the same (workflow, key); it returns the stored entry.
	UpsertMemory(ctx context.Context, p tenancy.Principal, m Memory) (Memory, error)
	// Memories lists a workflow's entries, most recently written first, of
	// one source (all when empty), at most limit (1..1000).
	Memories(ctx context.Context, p tenancy.Principal, workflowID string, source MemorySource, limit int) ([]Memory, error)
	// DeleteMemory removes one entry; a key that does not exist is
	// ErrNotFound.
	DeleteMemory(ctx context.Context, p tenancy.Principal, workflowID, key string) error
}

// ToolMemoryBytes bounds a tool result kept in memory: enough for the facts
// a later round needs (ids, numbers, a paragraph), not a document.
const ToolMemoryBytes = 2000

// ToolMemory is the memory entry of one tool call's result: its key is the
// call's, its value the tool, whether it failed, and its output cut to
// ToolMemoryBytes at a character boundary with a note saying so.
func ToolMemory(workflowID, callID, tool string, ok bool, output string) Memory {
	state := "ok"
	if !ok {
		state = "failed"
	}
	return Memory{WorkflowID: workflowID, Key: ToolPrefix + callID, Source: MemoryTool,
		Value: tool + " (" + state + "): " + Clip(output, ToolMemoryBytes)}
}

// Clip cuts s to at most n bytes at a character boundary and says how much
// was left out.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" …[truncated: %d of %d bytes shown]", cut, len(s))
}
