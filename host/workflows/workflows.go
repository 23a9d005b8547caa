// Package workflows keeps agenthost's workflows:
// one conversation of a user with a workspace's agent, in rounds, with its
// messages and their documents, its logs, its statistics and execution state,
// and the event stream clients follow live.
//
// # State machine
//
// A workflow ends each round completed, stopped or failed, and any of these
// can take a new round; nothing else moves (docs/agent.md#design-decisions):
//
//	(new)     → running     Start: round 1
//	running   → completed   Complete
//	running   → stopped     Stop (the user)
//	running   → failed      Fail (an error)
//	completed → running     Resume: a new round (round+1, task and action 0)
//	stopped   → running     Resume
//	failed    → running     Resume
//	any       → (deleted)   Delete
//
// Anything else (stopping a completed workflow, resuming a running one) is a
// *TransitionError, which wraps tenancy.ErrConflict and names both states.
// The store applies a change with one conditional UPDATE (… WHERE status IN
// (the legal sources)), so of two concurrent changes only one can win.
//
// # Access
//
// A workflow is private to the user who started it: only that user reads or
// changes it, its messages, logs and events, and only while still a member of
// its workspace (any role; a viewer may converse with the workspace's agent,
// whose tools then act with the viewer's own file rights). Tenant
// administrators read every workflow of their tenant (support, audit) but
// change only their own: changing another user's workflow is ErrForbidden for
// them. For everyone else another user's workflow does not exist: every
// method reports ErrNotFound, as for an unknown id.
//
// # Events
//
// Every event is persisted with a per-workflow sequence number (1, 2, 3, … with
// no gaps), which is the SSE event id: a client reconnecting with
// Last-Event-ID n asks for the events after n and misses nothing. Some events
// are appended by the operation they report, in the same transaction, so the
// stream and the state never disagree: Start and Resume append `status`,
// Complete `complete`, Stop `stopped`, Fail `error`, AddMessage `message`.
// Everything else is appended with [Service.Append]. [Broker] delivers events
// to live subscribers.
package workflows

import (
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Status is a workflow's state.
type Status string

// The workflow states.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusStopped   Status = "stopped"
	StatusFailed    Status = "failed"
)

// Statuses lists every state, running first.
func Statuses() []Status {
	return []Status{StatusRunning, StatusCompleted, StatusStopped, StatusFailed}
}

// Valid reports whether s is a known state.
func (s Status) Valid() bool {
	switch s {
	case StatusRunning, StatusCompleted, StatusStopped, StatusFailed:
		return true
	}
	return false
}

// name is the state as messages show it; "" is a workflow not (or no longer)
// stored.
func (s Status) name() string {
	if s == "" {
		return "new"
	}
	return string(s)
}

// CanTransition reports whether the state machine allows from → to. From ""
// is a workflow not yet created; to "" is its deletion.
func CanTransition(from, to Status) bool {
	if (from != "" && !from.Valid()) || (to != "" && !to.Valid()) {
		return false
	}
	switch {
	case to == "":
		return from != ""
	case from == "":
		return to == StatusRunning
	case from == StatusRunning:
		return to == StatusCompleted || to == StatusStopped || to == StatusFailed
	default: // completed, stopped, failed: only a new round
		return to == StatusRunning
	}
}

// sources lists the stored states from which to is reachable.
func sources(to Status) []Status {
	var out []Status
	for _, s := range Statuses() {
		if CanTransition(s, to) {
			out = append(out, s)
		}
	}
	return out
}

// TransitionError is the conflict of a state change the state machine does
// not allow, for example stopping a completed workflow or resuming a running
// one. errors.Is(err, tenancy.ErrConflict) holds.
type TransitionError struct {
	WorkflowID string
	// From is the state the workflow was in, To the one asked for.
	From, To Status
}

func (e *TransitionError) Error() string {
	hint := ""
	if e.From == StatusRunning && e.To == StatusRunning {
		hint = " (a running workflow cannot be resumed; stop it first)"
	}
	return fmt.Sprintf("%v: workflow %q cannot go from %s to %s%s", tenancy.ErrConflict, e.WorkflowID, e.From.name(), e.To.name(), hint)
}

// Unwrap makes the error an ErrConflict.
func (e *TransitionError) Unwrap() error { return tenancy.ErrConflict }

// Stats are a workflow's (or a message's) data statistics (sizes and
// counts) plus the cost.
type Stats struct {
	BytesSent     int64 `json:"bytesSent"`
	BytesReceived int64 `json:"bytesReceived"`
	TokensUsed    int64 `json:"tokensUsed"`
	// ProcessingTime is in seconds.
	ProcessingTime float64 `json:"processingTime"`
	// CostCHF is what its model calls cost (a JSON number of francs).
	CostCHF money.Amount `json:"costCHF"`
}

// Exec is the execution state: where in the workflow the work is. A
// new round (Start, Resume) sets Round and puts Task and Action back to 0;
// NextTask counts a task and puts Action back to 0; NextAction counts an
// action of the current task. Workflows run one round at a time, so the
// position is a property of the workflow, not of a run.
type Exec struct {
	Round  int `json:"round"`
	Task   int `json:"task"`
	Action int `json:"action"`
}

// Workflow is one conversation of a user with a workspace's agent.
type Workflow struct {
	ID          string `json:"id"`
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	// UserID is the user who started the workflow and owns it.
	UserID string `json:"userId"`
	Name   string `json:"name"`
	Status Status `json:"status"`
	// CurrentRound counts the user's inputs: 1 after Start, +1 per Resume.
	// It is always Exec.Round (one column); both are kept because clients
	// read the one and the execution state the other.
	CurrentRound int       `json:"currentRound"`
	StartedAt    time.Time `json:"startedAt"`
	// LastActivity moves with every change of the workflow or its children.
	LastActivity time.Time `json:"lastActivity"`
	Stats        Stats     `json:"dataStats"`
	Exec         Exec      `json:"exec"`
	// Outcome is how the last run ended: completed, maxRoundsReached,
	// budgetExceeded (the workflow's or the tenant's budget stopped it),
	// stopped, failed; empty while a run is running. A completed workflow
	// whose outcome is not "completed" may be resumed all the same.
	Outcome string `json:"outcome,omitempty"`
	// Summary is the progressive summary of the conversation's older rounds
	// (older rounds folded in rather than dropped), kept with the workflow so a resumed workflow, on any
	// host, continues from it. The agent decides its shape.
	Summary string `json:"summary,omitempty"`
	// RoundTrace is the W3C traceparent of the request that started the
	// current round (empty when it was not traced): a host that takes the
	// round over links its spans to that trace.
	RoundTrace string `json:"-"`
	// Pinned conversations come first in the list; Archived ones are left
	// out of it unless asked for (Filter.Archived). Both are the owner's.
	Pinned   bool `json:"pinned,omitempty"`
	Archived bool `json:"archived,omitempty"`
	// Shared: every member of the workspace may read the conversation
	// (never change it); the owner shares and unshares.
	Shared bool `json:"shared,omitempty"`
	// Branch is the turn the conversation's shown branch runs through (a
	// prompt or an answer, see Tree); empty is the newest branch.
	Branch string `json:"branchMessageId,omitempty"`
}

// MessageStatus is a message's place in its round.
type MessageStatus string

// The message states: the user's input opens a round (first), the
// agent's intermediate messages are steps, its final answer is last.
const (
	MessageFirst MessageStatus = "first"
	MessageStep  MessageStatus = "step"
	MessageLast  MessageStatus = "last"
)

// Valid reports whether s is a known message status.
func (s MessageStatus) Valid() bool {
	return s == MessageFirst || s == MessageStep || s == MessageLast
}

// Role is who speaks in a message.
type Role string

// The roles of messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	return r == RoleUser || r == RoleAssistant || r == RoleSystem || r == RoleTool
}

// Message is one message of a workflow.
type Message struct {
	// ID may be chosen by the caller (to name the message in `chunk` events
	// streamed before it is stored); empty gets a new id.
	ID         string `json:"id"`
	WorkflowID string `json:"workflowId"`
	// ParentID is another message of the same workflow this one answers, or "".
	ParentID string `json:"parentMessageId,omitempty"`
	// Root marks a prompt that starts the conversation (its first, or an
	// edit of that): a turn without a parent otherwise follows the turn
	// stored before it (Tree).
	Root bool `json:"root,omitempty"`
	// Seq numbers the workflow's messages 1, 2, 3, … in the order stored.
	Seq int64 `json:"sequenceNo"`
	// Round is the workflow round the message belongs to; 0 when adding
	// means the current round.
	Round     int           `json:"round"`
	Status    MessageStatus `json:"status"`
	Role      Role          `json:"role"`
	Content   string        `json:"content"`
	AgentName string        `json:"agentName,omitempty"`
	Documents []Document    `json:"documents"`
	// StartedAt zero when adding means now; FinishedAt nil means unknown.
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Stats      Stats      `json:"dataStats,omitzero"`
	// Feedback is the person's verdict on an answer, kept for evaluation.
	Feedback *Feedback `json:"feedback,omitempty"`
}

// The ratings of an answer.
const (
	RatingHelpful   = "helpful"
	RatingUnhelpful = "unhelpful"
)

// Feedback is whether an answer helped, with the person's note.
type Feedback struct {
	// Rating is RatingHelpful or RatingUnhelpful; empty withdraws it.
	Rating string    `json:"rating"`
	Note   string    `json:"note,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

// Document is a file attached to a message. Agents
// name it "docItem:<ID>"; "docList:<Label>" names every document of the
// workflow with that label. This is the file bridge (docs/files.md): a tool that makes
// a file stores it (files.Service), then adds a message carrying a Document
// with its FileID in one call ([Service.AddMessage]), and hands the model
// both ids.
type Document struct {
	ID        string `json:"id"`
	MessageID string `json:"messageId"`
	// FileID is the stored file; it must be readable by the principal adding
	// the message. Name, MIMEType and Size are taken from the file when empty.
	FileID   string `json:"fileId"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	// Label groups documents for docList:<label> (a tool names
	// its files' label, e.g. "writeFile:report.md").
	Label string `json:"label,omitempty"`
}

// Ref is the reference an agent uses for the document: docItem:<id>.
func (d Document) Ref() string { return "docItem:" + d.ID }

// LogType is a log entry's severity.
type LogType string

// The log types.
const (
	LogInfo    LogType = "info"
	LogWarning LogType = "warning"
	LogError   LogType = "error"
)

// Valid reports whether t is a known log type.
func (t LogType) Valid() bool { return t == LogInfo || t == LogWarning || t == LogError }

// Log is one entry of a workflow's log, what a
// polling client shows as progress.
type Log struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflowId"`
	// Seq numbers the workflow's log entries 1, 2, 3, ….
	Seq       int64     `json:"sequenceNo"`
	Message   string    `json:"message"`
	Type      LogType   `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	AgentName string    `json:"agentName,omitempty"`
	// Status is the workflow's state the entry reports; empty when adding
	// means the workflow's state at that moment.
	Status Status `json:"status"`
	// Progress is 0..100.
	Progress int `json:"progress"`
}

// After positions a listing of messages or logs: the rows after the one with
// ID (a poller's ?id=), or else after sequence number Seq. The zero
// value lists from the first row. An ID that is not (or no longer) in the
// workflow is ErrNotFound: a client whose last message was deleted polls by
// sequence number instead.
type After struct {
	ID  string
	Seq int64
}

// Filter selects workflows to list, most recently active first.
type Filter struct {
	// WorkspaceID limits the listing to one workspace.
	WorkspaceID string
	// Status limits it to one state.
	Status Status
	// Limit: default 50, at most 1000.
	Limit int
	// Query keeps the workflows whose name or messages contain it (case
	// folded); empty keeps all.
	Query string
	// Archived lists the archived workflows instead of the others.
	Archived bool
	// Shared lists the conversations other members of the person's
	// workspaces share, instead of the person's own.
	Shared bool
}

// Update changes a workflow's name, summary and statistics; nil fields are
// left alone. Stats are added to the workflow's (counters only grow, and
// concurrent additions from several goroutines or hosts all count).
type Update struct {
	Name *string
	// NameWas makes the new Name conditional: it is set only while the
	// current name is NameWas (a title made after the first exchange
	// never replaces a name the person gave meanwhile).
	NameWas *string
	Summary *string
	Stats   Stats
	// Pinned and Archived mark the conversation for its owner's list.
	Pinned   *bool
	Archived *bool
	// Branch selects the conversation's branch (a turn's id).
	Branch *string
	// Shared shares the conversation with the workspace's members (read
	// only) or stops sharing it.
	Shared *bool
}

// ExecStep is what AdvanceExec counts.
type ExecStep int

// The two steps of the execution state.
const (
	// StepTask starts the next task of the round: task+1, action 0.
	StepTask ExecStep = iota + 1
	// StepAction starts the next action of the task: action+1.
	StepAction
)

// Transition is one state change as the store applies it.
type Transition struct {
	ID string
	// From lists the states the change is legal from; To is the new state.
	From []Status
	To   Status
	// NewRound starts a new round: CurrentRound+1, task and action 0.
	NewRound bool
	// Emit, when set, makes the event the change appends in its transaction.
	Emit Emit
	// Outcome is recorded as the workflow's Outcome (empty clears it: a run
	// starts).
	Outcome string
	// RoundTrace is recorded as the workflow's RoundTrace when the change
	// starts a round (NewRound).
	RoundTrace string
}

// Emit makes the event a state change appends, from the workflow as changed.
// The store calls it inside its transaction and marshals the payload to JSON.
type Emit func(Workflow) (EventType, any)

// HostedRound is a running round and the host whose agent loop runs it.
type HostedRound struct {
	Workflow Workflow
	HostID   string
}
