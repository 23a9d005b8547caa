package sdk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// EventType names an event of a workflow's stream (the SSE event name).
type EventType string

// The event types of a workflow's stream; docs/agent.md describes them.
const (
	EventMessage           EventType = "message"           // a stored message: *Message
	EventStatus            EventType = "status"            // a progress label: *StatusData
	EventChunk             EventType = "chunk"             // streamed answer text: *ChunkData
	EventToolCall          EventType = "toolCall"          // the agent calls a tool: *ToolCallData
	EventToolResult        EventType = "toolResult"        // a tool call's result: *ToolResultData
	EventAgentProgress     EventType = "agentProgress"     // after each round: *AgentProgressData
	EventAgentSummary      EventType = "agentSummary"      // an agent run's totals: *AgentSummaryData
	EventFileCreated       EventType = "fileCreated"       // a tool made a file: *FileCreatedData
	EventFileEditProposal  EventType = "fileEditProposal"  // a proposed change: *FileEditProposalData
	EventFileVersion       EventType = "fileVersion"       // an accepted change: *FileVersionData
	EventDataSourceAccess  EventType = "dataSourceAccess"  // an external source reached: *DataSourceAccessData
	EventVoiceResponse     EventType = "voiceResponse"     // spoken audio of an answer: *VoiceResponseData
	EventBackgroundJob     EventType = "backgroundJob"     // a background job ended: *BackgroundJobData
	EventRoundRestarted    EventType = "roundRestarted"    // the round runs again elsewhere: *RoundRestartedData
	EventApprovalRequested EventType = "approvalRequested" // a call waits for a person: *ApprovalRequestedData
	EventApprovalDecided   EventType = "approvalDecided"   // a person decided, or it expired: *ApprovalDecidedData
	EventBranchSelected    EventType = "branchSelected"    // another branch of the conversation shown: *BranchSelectedData
	EventMessageFeedback   EventType = "messageFeedback"   // feedback on an answer: *MessageFeedbackData
	EventRenamed           EventType = "renamed"           // named after its first exchange: *RenamedData
	EventComplete          EventType = "complete"          // the round ended well: *EndData
	EventStopped           EventType = "stopped"           // the round was stopped: *EndData
	EventError             EventType = "error"             // the round failed: *EndData
)

// Terminal reports whether t ends a round (complete, stopped, error).
func (t EventType) Terminal() bool {
	return t == EventComplete || t == EventStopped || t == EventError
}

// Event is one event of a workflow's stream.
type Event struct {
	// Seq numbers the workflow's events 1, 2, 3, … without gaps.
	Seq  int64
	Type EventType
	// Data is the payload as sent; Payload the same decoded into the type
	// its event type names (nil for a type this client does not know).
	Data    json.RawMessage
	Payload any
}

// StatusData is the payload of a status event.
type StatusData struct {
	Status string `json:"status"`
	Label  string `json:"label"`
}

// ChunkData is the payload of a chunk event: a piece of the answer being
// written; the whole message follows as a message event with the same id.
type ChunkData struct {
	MessageID string `json:"messageId"`
	Text      string `json:"text"`
}

// ToolCallData is the payload of a toolCall event.
type ToolCallData struct {
	Round     int             `json:"round"`
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// CostCHF is the run's cost when the model asked for the call.
	CostCHF CHF `json:"costCHF,omitempty"`
}

// ToolResultData is the payload of a toolResult event.
type ToolResultData struct {
	Round   int    `json:"round"`
	CallID  string `json:"callId"`
	Tool    string `json:"tool"`
	OK      bool   `json:"ok"`
	Content string `json:"content,omitempty"`
	// Bytes is the size of the whole result; Fitted says it was too large
	// for the model's context, and Content is a preview of what the model
	// got (its head): the whole is the document Document (docItem:<id>),
	// file FileID.
	Bytes      int64  `json:"bytes,omitempty"`
	Fitted     bool   `json:"fitted,omitempty"`
	Document   string `json:"document,omitempty"`
	FileID     string `json:"fileId,omitempty"`
	ErrorCode  string `json:"errorCode,omitempty"`
	Error      string `json:"error,omitempty"`
	Attempts   int    `json:"attempts,omitempty"`
	DurationMS int64  `json:"durationMs"`
}

// AgentProgressData is the payload of an agentProgress event, sent after
// each round; CostCHF is the run's cost so far, exact (the sum of its
// model calls as billed).
type AgentProgressData struct {
	Round     int   `json:"round"`
	MaxRounds int   `json:"maxRounds"`
	ToolCalls int   `json:"toolCalls"`
	CostCHF   CHF   `json:"costCHF"`
	Tokens    int64 `json:"tokens"`
	// Model is the model that answered the round (the fallback chain's
	// next when the first failed).
	Model string `json:"model,omitempty"`
}

// AgentSummaryData is the payload of an agentSummary event.
type AgentSummaryData struct {
	Rounds     int   `json:"rounds"`
	ToolCalls  int   `json:"toolCalls"`
	CostCHF    CHF   `json:"costCHF"`
	Tokens     int64 `json:"tokens"`
	DurationMS int64 `json:"durationMs"`
	// Reason is completed, maxRoundsReached, budgetExceeded, stopped or
	// failed; handedOff for an attempt cut by its host's stop (the round
	// goes on: a roundRestarted event follows).
	Reason string `json:"reason"`
	// Model is the model that answered the run's last call.
	Model string `json:"model,omitempty"`
	// ChosenModel is the conversation's chosen model (provider/model) the
	// run's calls started with; empty: none chosen.
	ChosenModel string `json:"chosenModel,omitempty"`
}

// FileCreatedData is the payload of a fileCreated event.
type FileCreatedData struct {
	FileID     string `json:"fileId"`
	DocumentID string `json:"documentId,omitempty"`
	MessageID  string `json:"messageId,omitempty"`
	Name       string `json:"name"`
	MIMEType   string `json:"mimeType"`
	Size       int64  `json:"size"`
	Tool       string `json:"tool,omitempty"`
}

// FileEditProposalData is the payload of a fileEditProposal event.
type FileEditProposalData struct {
	ProposalID  string `json:"proposalId"`
	FileID      string `json:"fileId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Diff        string `json:"diff"`
	BaseVersion int    `json:"baseVersion,omitempty"`
}

// FileVersionData is the payload of a fileVersion event.
type FileVersionData struct {
	ProposalID string `json:"proposalId,omitempty"`
	FileID     string `json:"fileId"`
	Name       string `json:"name"`
	SHA256     string `json:"sha256"`
	Size       int64  `json:"size"`
	Version    int    `json:"version,omitempty"`
}

// DataSourceAccessData is the payload of a dataSourceAccess event.
type DataSourceAccessData struct {
	DataSourceID string `json:"dataSourceId,omitempty"`
	Provider     string `json:"provider"`
	Service      string `json:"service,omitempty"`
	Operation    string `json:"operation"`
	Path         string `json:"path,omitempty"`
	Tool         string `json:"tool,omitempty"`
}

// VoiceResponseData is the payload of a voiceResponse event.
type VoiceResponseData struct {
	MessageID string `json:"messageId,omitempty"`
	MIMEType  string `json:"mimeType"`
	Audio     []byte `json:"audio,omitempty"`
	FileID    string `json:"fileId,omitempty"`
	Text      string `json:"text,omitempty"`
}

// BackgroundJobData is the payload of a backgroundJob event.
type BackgroundJobData struct {
	JobID       string `json:"jobId"`
	Status      string `json:"status"`
	Description string `json:"description"`
	Summary     string `json:"summary,omitempty"`
	Error       string `json:"error,omitempty"`
	WorkflowID  string `json:"workflowId,omitempty"`
}

// RoundRestartedData is the payload of a roundRestarted event: the host
// running the round stopped before it ended (Reason handedOff: a deploy;
// hostDied: it was killed or cut off), and another host (or the same one
// restarted) runs it again from its request. The message the cut attempt
// was streaming (chunk events with no message event) never ends: drop it.
// Later agentProgress and agentSummary costs are the new attempt's own.
type RoundRestartedData struct {
	Round    int    `json:"round"`
	Reason   string `json:"reason"`
	FromHost string `json:"fromHost,omitempty"`
}

// ApprovalRequestedData is the payload of an approvalRequested event: the
// round waits (nothing runs, nothing is billed) until the call is approved
// or denied (Client.DecideApproval) or expires at ExpiresAt.
type ApprovalRequestedData struct {
	ApprovalID string          `json:"approvalId"`
	Round      int             `json:"round"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	External   string          `json:"external,omitempty"`
	Arguments  json.RawMessage `json:"arguments"`
	Reason     string          `json:"reason,omitempty"`
	ExpiresAt  time.Time       `json:"expiresAt"`
}

// ApprovalDecidedData is the payload of an approvalDecided event; Decision
// is approved, denied or expired.
type ApprovalDecidedData struct {
	ApprovalID string          `json:"approvalId"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Decision   string          `json:"decision"`
	Edited     bool            `json:"edited,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	DecidedBy  string          `json:"decidedBy,omitempty"`
}

// BranchSelectedData is the payload of a branchSelected event: the prompt
// or answer the conversation's shown branch runs through.
type BranchSelectedData struct {
	MessageID string `json:"messageId"`
}

// RenamedData is the payload of a renamed event: the name the conversation
// got from its first exchange (the server's title model).
type RenamedData struct {
	Name string `json:"name"`
}

// MessageFeedbackData is the payload of a messageFeedback event; an empty
// Rating withdraws the feedback.
type MessageFeedbackData struct {
	MessageID string    `json:"messageId"`
	Rating    string    `json:"rating"`
	Note      string    `json:"note,omitempty"`
	At        time.Time `json:"at,omitzero"`
}

// EndData is the payload of complete and stopped (Reason) and error
// (Message) events.
type EndData struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// payload returns a new value of the payload type of t.
func payload(t EventType) any {
	switch t {
	case EventMessage:
		return new(Message)
	case EventStatus:
		return new(StatusData)
	case EventChunk:
		return new(ChunkData)
	case EventToolCall:
		return new(ToolCallData)
	case EventToolResult:
		return new(ToolResultData)
	case EventAgentProgress:
		return new(AgentProgressData)
	case EventAgentSummary:
		return new(AgentSummaryData)
	case EventFileCreated:
		return new(FileCreatedData)
	case EventFileEditProposal:
		return new(FileEditProposalData)
	case EventFileVersion:
		return new(FileVersionData)
	case EventDataSourceAccess:
		return new(DataSourceAccessData)
	case EventVoiceResponse:
		return new(VoiceResponseData)
	case EventBackgroundJob:
		return new(BackgroundJobData)
	case EventRoundRestarted:
		return new(RoundRestartedData)
	case EventApprovalRequested:
		return new(ApprovalRequestedData)
	case EventApprovalDecided:
		return new(ApprovalDecidedData)
	case EventBranchSelected:
		return new(BranchSelectedData)
	case EventMessageFeedback:
		return new(MessageFeedbackData)
	case EventRenamed:
		return new(RenamedData)
	case EventComplete, EventStopped, EventError:
		return new(EndData)
	}
	return nil
}

// ErrStreamClosed is what Next returns after Close.
var ErrStreamClosed = errors.New("sdk: event stream closed")

// maxEventLine bounds one line of the stream (a message's whole text
// arrives in one data line).
const maxEventLine = 16 << 20

// errLineTooLong is not retried: the server would send the same line again.
var errLineTooLong = fmt.Errorf("sdk: an event stream line is longer than %d bytes", maxEventLine)

// EventStream follows a workflow's events. After a dropped connection it
// reconnects with Last-Event-ID set to the last event it returned, and the
// server sends exactly what came after, so no event is lost or repeated.
// It is not safe for concurrent use.
type EventStream struct {
	// MaxFailures is how many connection attempts in a row may fail (or
	// end before an event arrives) before Next gives up; default 8, with
	// waits of 250 ms doubling to 10 s between them.
	MaxFailures int

	c          *Client
	ctx        context.Context
	cancel     context.CancelFunc
	parent     context.Context
	workflowID string
	last       int64
	body       io.ReadCloser
	r          *bufio.Reader
	failures   int
	reconnects int
	connected  bool
	retry      time.Duration
	closed     atomic.Bool
}

// Events follows the events of workflow workflowID after sequence number
// after (0: from the first). Each Next returns the next event; ending ctx
// or Close ends the stream.
func (c *Client) Events(ctx context.Context, workflowID string, after int64) *EventStream {
	inner, cancel := context.WithCancel(ctx)
	return &EventStream{c: c, ctx: inner, cancel: cancel, parent: ctx, workflowID: workflowID, last: after, MaxFailures: 8, retry: 250 * time.Millisecond}
}

// LastEventID is the sequence number of the last event Next returned.
func (s *EventStream) LastEventID() int64 { return s.last }

// Reconnects counts the connections made after the first.
func (s *EventStream) Reconnects() int { return s.reconnects }

// Close ends the stream; it may be called while another goroutine waits
// in Next, which then returns ErrStreamClosed.
func (s *EventStream) Close() error {
	s.closed.Store(true)
	s.cancel()
	return nil
}

// ended is the error of a stream whose context ended: ErrStreamClosed
// after Close, else the caller's context's error.
func (s *EventStream) ended() error {
	if s.closed.Load() {
		return ErrStreamClosed
	}
	if err := s.parent.Err(); err != nil {
		return err
	}
	return s.ctx.Err()
}

// Next returns the next event, waiting for it. Its error is the context's
// when ctx ended, an *Error when the server refused the stream (a
// workflow that does not exist, a revoked token), ErrStreamClosed after
// Close, or the last connection error once MaxFailures attempts in a row
// failed.
func (s *EventStream) Next() (Event, error) {
	for {
		if s.ctx.Err() != nil {
			if s.body != nil {
				s.body.Close()
				s.body = nil
			}
			return Event{}, s.ended()
		}
		if s.body == nil {
			if err := s.connect(); err != nil {
				return Event{}, err
			}
		}
		ev, err := s.read()
		if err == nil {
			if ev.Seq != 0 && ev.Seq <= s.last {
				continue // already returned (a server replaying too much)
			}
			if ev.Seq != 0 {
				s.last = ev.Seq
			}
			s.failures = 0
			if p := payload(ev.Type); p != nil {
				if err := json.Unmarshal(ev.Data, p); err != nil {
					return ev, fmt.Errorf("sdk: event %d (%s): %w", ev.Seq, ev.Type, err)
				}
				ev.Payload = p
			}
			return ev, nil
		}
		s.body.Close()
		s.body = nil
		if s.ctx.Err() != nil {
			return Event{}, s.ended()
		}
		if errors.Is(err, errLineTooLong) {
			return Event{}, err
		}
		// The connection dropped: count it and reconnect from s.last.
		s.failures++
		if s.failures > s.MaxFailures {
			return Event{}, fmt.Errorf("sdk: events of workflow %s: %w", s.workflowID, err)
		}
	}
}

// connect opens the stream after s.last, waiting before a retry.
func (s *EventStream) connect() error {
	for {
		if s.failures > 0 {
			wait := s.retry << min(s.failures-1, 6)
			wait = min(wait, 10*time.Second)
			t := time.NewTimer(wait)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return s.ended()
			case <-t.C:
			}
		}
		if s.connected {
			s.reconnects++
		}
		s.connected = true
		resp, err := s.c.StreamWorkflowEvents(s.ctx, s.workflowID, &StreamWorkflowEventsParams{LastEventID: s.last})
		if err == nil {
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !bytes.HasPrefix([]byte(ct), []byte("text/event-stream")) {
				resp.Body.Close()
				err = fmt.Errorf("sdk: events of workflow %s: answer %d %q is not an event stream", s.workflowID, resp.StatusCode, ct)
			} else {
				s.body, s.r = resp.Body, bufio.NewReaderSize(resp.Body, 64<<10)
				return nil
			}
		}
		if s.ctx.Err() != nil {
			return s.ended()
		}
		var apiErr *Error
		if errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != http.StatusTooManyRequests && apiErr.Status != http.StatusRequestTimeout {
			return err // the server refuses: retrying changes nothing
		}
		s.failures++
		if s.failures > s.MaxFailures {
			return err
		}
	}
}

// read parses the stream up to the next event (the SSE format of the
// WHATWG HTML standard: fields until a blank line; comments skipped). An
// event cut off by the end of the connection is not returned: the
// reconnect asks for it again.
func (s *EventStream) read() (Event, error) {
	var ev Event
	var data []byte
	hasData := false
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the server never ends a stream
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData || ev.Type != "" {
				if ev.Type == "" {
					ev.Type = "message"
				}
				ev.Data = data
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "id":
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
				ev.Seq = n
			}
		case "event":
			ev.Type = EventType(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms > 0 {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// line reads one line without its end (LF, CRLF or CR before LF).
func (s *EventStream) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxEventLine {
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		return bytes.TrimSuffix(buf, []byte("\r")), nil
	}
}
