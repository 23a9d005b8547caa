package workflows

import (
	"encoding/json"
	"time"
)

// EventType names an event of a workflow's stream; it is the SSE event name.
// The set is the workspace UI's (docs/agent.md#events), with roundRestarted
// (a round that runs again after its host stopped).
type EventType string

// The event types and their payloads (the JSON in Event.Data).
const (
	// EventMessage: a message was stored; the payload is the [Message] with
	// its documents. Appended by [Service.AddMessage] only.
	EventMessage EventType = "message"
	// EventStatus: a progress label; payload [StatusData]. Start and Resume
	// append one (status "running", label "round N"); the agent appends
	// others ("Analysing the request", "Reading report.pdf").
	EventStatus EventType = "status"
	// EventChunk: a piece of a message being streamed token by token;
	// payload [ChunkData]. The message's full text arrives later as a
	// `message` event with the same id. Chunks are the most frequent event:
	// an Append is one short transaction (two statements on SQLite, one on
	// PostgreSQL), 0.1-0.2 ms and about 5,000 events/s over all workflows on
	// two cores (BenchmarkAppend), so a producer should coalesce tokens
	// (say one chunk per 50 ms) rather than append one per token.
	EventChunk EventType = "chunk"
	// EventToolCall: the agent calls a tool (activity log); payload
	// [ToolCallData].
	EventToolCall EventType = "toolCall"
	// EventToolResult: a tool call's result (activity log); payload
	// [ToolResultData].
	EventToolResult EventType = "toolResult"
	// EventAgentProgress: the agent loop's progress after each round;
	// payload [AgentProgressData].
	EventAgentProgress EventType = "agentProgress"
	// EventAgentSummary: the closing statistics of an agent run, including
	// why it ended; payload [AgentSummaryData].
	EventAgentSummary EventType = "agentSummary"
	// EventFileCreated: a tool created a file and bound it to the workflow
	// (the file bridge); payload [FileCreatedData].
	EventFileCreated EventType = "fileCreated"
	// EventFileEditProposal: the agent proposes a change to a file, for the
	// user to accept or reject; payload [FileEditProposalData].
	EventFileEditProposal EventType = "fileEditProposal"
	// EventFileVersion: a new version of a file was written (a tool wrote
	// it, or a proposed change was accepted); payload [FileVersionData].
	EventFileVersion EventType = "fileVersion"
	// EventDataSourceAccess: the agent reached into an external data source
	// (SharePoint, Drive, FTP…); payload [DataSourceAccessData].
	EventDataSourceAccess EventType = "dataSourceAccess"
	// EventVoiceResponse: spoken audio (text to speech) of an answer;
	// payload [VoiceResponseData].
	EventVoiceResponse EventType = "voiceResponse"
	// EventBackgroundJob: a background job this workflow started changed
	// state (it ended: completed, failed, cancelled); payload
	// [BackgroundJobData]. The job's result is also a message.
	EventBackgroundJob EventType = "backgroundJob"
	// EventRoundRestarted: the round runs again from its request on another
	// host (or this one restarted), because the host running it stopped
	// before it ended: handed off in a deploy, or died; payload
	// [RoundRestartedData]. The cut attempt's events stay in the stream,
	// but the message it was streaming (chunks and no `message` event)
	// never ends: clients drop such messages here. The costCHF of later
	// agentProgress and agentSummary events is the new attempt's own; what
	// the cut attempt cost is in its last agentProgress or agentSummary
	// (and, for a hand-off, in the workflow's statistics).
	EventRoundRestarted EventType = "roundRestarted"
	// EventApprovalRequested: the round waits for a person to approve,
	// edit or deny a tool call with an external side effect (the
	// workspace's approval policy says `ask`); payload
	// [ApprovalRequestedData]. Nothing runs (and nothing is billed) while
	// it waits; the decision may come to any host.
	EventApprovalRequested EventType = "approvalRequested"
	// EventApprovalDecided: a person approved or denied a requested call,
	// or it expired; payload [ApprovalDecidedData].
	EventApprovalDecided EventType = "approvalDecided"
	// EventBranchSelected: the person moved to another branch of the
	// conversation (an edited prompt's or a regenerated answer's);
	// payload [BranchSelectedData]. Clients show the branch through it.
	EventBranchSelected EventType = "branchSelected"
	// EventMessageFeedback: the person said whether an answer helped;
	// payload [MessageFeedbackData] (an empty rating withdraws it).
	EventMessageFeedback EventType = "messageFeedback"
	// EventRenamed: the conversation was named after its first exchange
	// (the title model); payload [RenamedData]. It follows the first
	// round's `complete` event. A person's rename appends none: it answers
	// the request that made it.
	EventRenamed EventType = "renamed"
	// EventComplete: the round ended successfully, the workflow is
	// completed; payload [EndData] (Reason). Appended by Complete only.
	EventComplete EventType = "complete"
	// EventStopped: the user stopped the workflow; payload [EndData]
	// (Reason). Appended by Stop only.
	EventStopped EventType = "stopped"
	// EventError: the workflow failed; payload [EndData] (Message).
	// Appended by Fail only; errors the agent recovers from are toolResult
	// events, not this.
	EventError EventType = "error"
)

// EventTypes lists every event type, the ends of a run last.
func EventTypes() []EventType {
	return []EventType{EventMessage, EventStatus, EventChunk, EventToolCall, EventToolResult,
		EventAgentProgress, EventAgentSummary, EventFileCreated, EventFileEditProposal, EventFileVersion,
		EventDataSourceAccess, EventVoiceResponse, EventBackgroundJob, EventRoundRestarted, EventApprovalRequested, EventApprovalDecided, EventBranchSelected, EventMessageFeedback, EventRenamed, EventComplete, EventStopped, EventError}
}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	switch t {
	case EventMessage, EventStatus, EventChunk, EventToolCall, EventToolResult,
		EventAgentProgress, EventAgentSummary, EventFileCreated, EventFileEditProposal, EventFileVersion,
		EventDataSourceAccess, EventVoiceResponse, EventBackgroundJob, EventRoundRestarted, EventApprovalRequested, EventApprovalDecided, EventBranchSelected, EventMessageFeedback, EventRenamed, EventComplete, EventStopped, EventError:
		return true
	}
	return false
}

// Terminal reports whether t ends a round (complete, stopped, error).
func (t EventType) Terminal() bool {
	return t == EventComplete || t == EventStopped || t == EventError
}

// Event is one persisted event of a workflow's stream.
type Event struct {
	WorkflowID string `json:"workflowId"`
	// Seq numbers the workflow's events 1, 2, 3, … without gaps; it is the
	// SSE id a client resumes from with Last-Event-ID.
	Seq  int64           `json:"seq"`
	Type EventType       `json:"type"`
	Data json.RawMessage `json:"data"`
	Time time.Time       `json:"time"`
}

// ApprovalRequestedData is the payload of an `approvalRequested` event.
type ApprovalRequestedData struct {
	ApprovalID string `json:"approvalId"`
	Round      int    `json:"round"`
	CallID     string `json:"callId"`
	Tool       string `json:"tool"`
	// External is the tool's declared side effect ("mail", "upload", "mcp", …).
	External string `json:"external,omitempty"`
	// Arguments as the model sent them (JSON).
	Arguments json.RawMessage `json:"arguments"`
	// Reason is what the model said before asking for the call (its
	// stated reason), empty when it said nothing.
	Reason    string    `json:"reason,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// BranchSelectedData is the payload of a `branchSelected` event.
type BranchSelectedData struct {
	// MessageID is the selected turn; the branch runs through it and, below
	// it, through the newest turn at each step.
	MessageID string `json:"messageId"`
}

// RenamedData is the payload of a `renamed` event: the conversation's new
// name.
type RenamedData struct {
	Name string `json:"name"`
}

// MessageFeedbackData is the payload of a `messageFeedback` event.
type MessageFeedbackData struct {
	MessageID string    `json:"messageId"`
	Rating    string    `json:"rating"`
	Note      string    `json:"note,omitempty"`
	At        time.Time `json:"at,omitzero"`
}

// ApprovalDecidedData is the payload of an `approvalDecided` event.
type ApprovalDecidedData struct {
	ApprovalID string `json:"approvalId"`
	CallID     string `json:"callId"`
	Tool       string `json:"tool"`
	// Decision is approved, denied or expired.
	Decision string `json:"decision"`
	// Edited: the person changed the arguments; Arguments are the ones
	// that run.
	Edited    bool            `json:"edited,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// DecidedBy is the user who decided (empty for an expiry).
	DecidedBy string `json:"decidedBy,omitempty"`
}

// StatusData is the payload of a `status` event.
type StatusData struct {
	Status Status `json:"status"`
	Label  string `json:"label"`
}

// ChunkData is the payload of a `chunk` event.
type ChunkData struct {
	MessageID string `json:"messageId"`
	Text      string `json:"text"`
}

// ToolCallData is the payload of a `toolCall` event.
type ToolCallData struct {
	Round  int    `json:"round"`
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
	// Arguments as the model sent them (JSON).
	Arguments json.RawMessage `json:"arguments"`
	// CostCHF is what the run's model calls cost when the model asked for
	// the call, an exact decimal: a round cut while its tools run (its
	// host killed) has shown what its model call cost, as billed.
	CostCHF string `json:"costCHF,omitempty"`
}

// ToolResultData is the payload of a `toolResult` event.
type ToolResultData struct {
	Round  int    `json:"round"`
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
	OK     bool   `json:"ok"`
	// Content is a preview of the result as the model sees it (at most
	// some 4 KB; the whole is Document's when Fitted).
	Content string `json:"content,omitempty"`
	// Bytes is the size of the whole result.
	Bytes int64 `json:"bytes,omitempty"`
	// Fitted: the result was too large for the model's context; the model
	// got its head and shape, and the whole is kept as Document
	// (docItem:<id>) / FileID, which the UI links to.
	Fitted   bool   `json:"fitted,omitempty"`
	Document string `json:"document,omitempty"`
	FileID   string `json:"fileId,omitempty"`
	// ErrorCode is the runtime's stable code (unknown_tool, invalid_arguments,
	// timeout…) of a failed call; Error its message.
	ErrorCode string `json:"errorCode,omitempty"`
	Error     string `json:"error,omitempty"`
	// Attempts counts tries (external failures are retried).
	Attempts   int   `json:"attempts,omitempty"`
	DurationMS int64 `json:"durationMs"`
}

// AgentProgressData is the payload of an `agentProgress` event.
type AgentProgressData struct {
	Round     int `json:"round"`
	MaxRounds int `json:"maxRounds"`
	ToolCalls int `json:"toolCalls"`
	// CostCHF is what the run's model calls cost so far, an exact decimal
	// ("0.42"; host/money).
	CostCHF string `json:"costCHF"`
	Tokens  int64  `json:"tokens"`
	// Model is the model that answered the round (the fallback chain's
	// next when the first failed).
	Model string `json:"model,omitempty"`
}

// AgentSummaryData is the payload of an `agentSummary` event.
type AgentSummaryData struct {
	Rounds    int `json:"rounds"`
	ToolCalls int `json:"toolCalls"`
	// CostCHF is what the run's model calls cost, an exact decimal.
	CostCHF    string `json:"costCHF"`
	Tokens     int64  `json:"tokens"`
	DurationMS int64  `json:"durationMs"`
	// Reason the run ended, as the trace names it: "completed",
	// "maxRoundsReached", "budgetExceeded", "stopped", "failed"; and
	// "handedOff" for an attempt cut because its host stopped (the round
	// goes on elsewhere: `roundRestarted`).
	Reason string `json:"reason"`
	// Model is the model that answered the run's last call.
	Model string `json:"model,omitempty"`
	// ChosenModel is the conversation's chosen model (provider/model) the
	// run's calls started with; empty: none chosen, the chain's first.
	ChosenModel string `json:"chosenModel,omitempty"`
}

// FileCreatedData is the payload of a `fileCreated` event: the file and the
// document that binds it to the workflow (its docItem reference).
type FileCreatedData struct {
	FileID     string `json:"fileId"`
	DocumentID string `json:"documentId,omitempty"`
	MessageID  string `json:"messageId,omitempty"`
	Name       string `json:"name"`
	MIMEType   string `json:"mimeType"`
	Size       int64  `json:"size"`
	// Tool that made the file (writeFile, renderDocument…).
	Tool string `json:"tool,omitempty"`
}

// FileEditProposalData is the payload of a `fileEditProposal` event.
type FileEditProposalData struct {
	ProposalID string `json:"proposalId"`
	FileID     string `json:"fileId"`
	Name       string `json:"name"`
	// Description says what the change does and why.
	Description string `json:"description,omitempty"`
	// Diff is the change as a unified diff of the file's text.
	Diff string `json:"diff"`
	// BaseVersion is the file version the change was made on.
	BaseVersion int `json:"baseVersion,omitempty"`
}

// FileVersionData is the payload of a `fileVersion` event.
type FileVersionData struct {
	ProposalID string `json:"proposalId,omitempty"`
	FileID     string `json:"fileId"`
	Name       string `json:"name"`
	// SHA256 and Size are the new content's.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Version is the file's new version number.
	Version int `json:"version,omitempty"`
}

// DataSourceAccessData is the payload of a `dataSourceAccess` event.
type DataSourceAccessData struct {
	DataSourceID string `json:"dataSourceId,omitempty"`
	// Provider and Service name the connector (microsoft / sharepoint).
	Provider string `json:"provider"`
	Service  string `json:"service,omitempty"`
	// Operation is browse, download, upload or search.
	Operation string `json:"operation"`
	// Path is the item or folder reached, as the source names it.
	Path string `json:"path,omitempty"`
	Tool string `json:"tool,omitempty"`
}

// VoiceResponseData is the payload of a `voiceResponse` event. Audio beyond
// a few seconds should be stored as a file and named by FileID rather than
// inlined, to keep the event log small.
type VoiceResponseData struct {
	MessageID string `json:"messageId,omitempty"`
	MIMEType  string `json:"mimeType"`
	// Audio is inline audio (base64 in JSON); FileID a stored file instead.
	Audio  []byte `json:"audio,omitempty"`
	FileID string `json:"fileId,omitempty"`
	// Text is what is spoken.
	Text string `json:"text,omitempty"`
}

// EndData is the payload of `complete` and `stopped` (Reason) and `error`
// (Message) events.
type EndData struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// The reasons of a `roundRestarted` event.
const (
	// RestartHandedOff: the host stopped (a deploy) and handed the round
	// over on purpose.
	RestartHandedOff = "handedOff"
	// RestartHostDied: the host stopped beating (killed, cut off) and the
	// round was taken over once its lease lapsed.
	RestartHostDied = "hostDied"
)

// RoundRestartedData is the payload of a `roundRestarted` event.
type RoundRestartedData struct {
	Round int `json:"round"`
	// Reason is handedOff or hostDied.
	Reason string `json:"reason"`
	// FromHost is the host that ran the cut attempt.
	FromHost string `json:"fromHost,omitempty"`
}

// BackgroundJobData is the payload of a `backgroundJob` event.
type BackgroundJobData struct {
	JobID       string `json:"jobId"`
	Status      string `json:"status"`
	Description string `json:"description"`
	Summary     string `json:"summary,omitempty"`
	Error       string `json:"error,omitempty"`
	// WorkflowID is the workflow the job's agent ran in (its trace).
	WorkflowID string `json:"workflowId,omitempty"`
}
