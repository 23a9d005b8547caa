package memory

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// EntityPrefix starts the key of every entity the entity cache keeps.
const EntityPrefix = "entity:"

// ToolPrefix starts the key of every recorded tool result.
const ToolPrefix = "tool:"

// Store keeps workflows' memory (host/store implements it). Access
// follows the workflow's: its owner reads and writes, a tenant admin reads;
// anyone else gets ErrNotFound, an admin writing another's ErrForbidden.
// Entries are deleted with their workflow.
type Store interface {
	// UpsertMemory stores m, replacing the value and source of an entry
	// with the same (workflow, key); it returns the stored entry.
	UpsertMemory(ctx context.Context, p tenancy.Principal, m kindex.Memory) (kindex.Memory, error)
	// Memories lists a workflow's entries, most recently written first, of
	// one source (all when empty), at most limit (1..1000).
	Memories(ctx context.Context, p tenancy.Principal, workflowID string, source kindex.MemorySource, limit int) ([]kindex.Memory, error)
	// DeleteMemory removes one entry; a key that does not exist is
	// ErrNotFound.
	DeleteMemory(ctx context.Context, p tenancy.Principal, workflowID, key string) error
}

// ToolResultBytes bounds a tool result kept in memory: enough for the facts
// a later round needs (ids, numbers, a paragraph), not a document.
const ToolResultBytes = 2000

// ToolResult is the memory entry of one tool call's result: its key is the
// call's, its value the tool, whether it failed, and its output cut to
// ToolResultBytes at a character boundary with a note saying so.
func ToolResult(workflowID, callID, tool string, ok bool, output string) kindex.Memory {
	state := "ok"
	if !ok {
		state = "failed"
	}
	return kindex.Memory{WorkflowID: workflowID, Key: ToolPrefix + callID, Source: kindex.MemoryTool,
		Value: tool + " (" + state + "): " + Clip(output, ToolResultBytes)}
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
