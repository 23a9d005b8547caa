package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/docref"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Store is what the workflow service needs from the database (host/store
// implements it). Every method that takes a principal applies the access
// rules of the package comment: another user's workflow is ErrNotFound, and
// a change a tenant admin may see but not make is ErrForbidden.
type Store interface {
	// CreateWorkflow stores a new running workflow in round 1 of a
	// workspace the principal belongs to, and appends emit's event.
	CreateWorkflow(ctx context.Context, p tenancy.Principal, w Workflow, emit Emit) (Workflow, Event, error)
	Workflow(ctx context.Context, p tenancy.Principal, id string) (Workflow, error)
	Workflows(ctx context.Context, p tenancy.Principal, f Filter) ([]Workflow, error)
	// Transition applies t atomically: the workflow's state changes only if
	// it is one of t.From, else the error is a *TransitionError naming the
	// state found. The returned event is the zero Event when t.Emit is nil.
	Transition(ctx context.Context, p tenancy.Principal, t Transition) (Workflow, Event, error)
	UpdateWorkflow(ctx context.Context, p tenancy.Principal, id string, u Update) (Workflow, error)
	AdvanceExec(ctx context.Context, p tenancy.Principal, id string, step ExecStep) (Exec, error)
	// DeleteWorkflow deletes the workflow with its messages, documents, logs
	// and events.
	DeleteWorkflow(ctx context.Context, p tenancy.Principal, id string) error

	// AddMessage stores a message, its documents and a `message` event in
	// one transaction.
	AddMessage(ctx context.Context, p tenancy.Principal, m Message) (Message, Event, error)
	Messages(ctx context.Context, p tenancy.Principal, workflowID string, after After, limit int) ([]Message, error)
	DeleteMessage(ctx context.Context, p tenancy.Principal, workflowID, messageID string) error
	// SetMessageFeedback keeps (or, with an empty rating, clears) the
	// feedback on an answer (an assistant's last message) of the workflow.
	SetMessageFeedback(ctx context.Context, p tenancy.Principal, workflowID, messageID string, f Feedback) (Message, error)
	// RemoveMessageFile detaches a file from a message (its documents that
	// point at the file); the file itself stays.
	RemoveMessageFile(ctx context.Context, p tenancy.Principal, workflowID, messageID, fileID string) error
	// Documents returns the workflow's documents whose id is in ids or whose
	// label is in labels, in message order.
	Documents(ctx context.Context, p tenancy.Principal, workflowID string, ids, labels []string) ([]Document, error)

	AddLog(ctx context.Context, p tenancy.Principal, l Log) (Log, error)
	Logs(ctx context.Context, p tenancy.Principal, workflowID string, after After, limit int) ([]Log, error)

	// AppendEvent appends one event with the workflow's next sequence number.
	AppendEvent(ctx context.Context, p tenancy.Principal, workflowID string, typ EventType, data json.RawMessage) (Event, error)
	EventSource
}

// Limits of listings.
const (
	defaultListLimit = 200
	maxListLimit     = 1000
	// MaxEventsPage is the most events one Events call returns.
	MaxEventsPage = 1000
)

// Service is the workflow API the HTTP layer and the agent use.
type Service struct {
	store  Store
	broker *Broker
	logger *slog.Logger
	// transient says which store errors pass once the database is back
	// (WithRetry); nil: none is retried.
	transient func(error) bool
}

// NewService returns a workflow service over store. Events it appends are
// announced to broker, so this process's subscribers get them at once; a nil
// broker (a process that serves no streams) skips that.
func NewService(store Store, broker *Broker, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, broker: broker, logger: logger}
}

// Broker returns the broker the service announces events to.
func (s *Service) Broker() *Broker { return s.broker }

// NewWorkflow is what Start needs.
type NewWorkflow struct {
	WorkspaceID string
	Name        string
}

// Start creates a running workflow in round 1 ((new) → running)
// and appends its first event, `status` running.
func (s *Service) Start(ctx context.Context, p tenancy.Principal, nw NewWorkflow) (Workflow, error) {
	if strings.TrimSpace(nw.WorkspaceID) == "" {
		return Workflow{}, fmt.Errorf("%w: a workflow needs a workspace", tenancy.ErrInvalid)
	}
	name := strings.TrimSpace(nw.Name)
	if name == "" {
		name = "Workflow"
	}
	w, ev, err := s.store.CreateWorkflow(ctx, p, Workflow{WorkspaceID: nw.WorkspaceID, Name: name, RoundTrace: traceParent(ctx)}, emitRound)
	if err != nil {
		return Workflow{}, err
	}
	s.broker.Notify(ev)
	s.logger.DebugContext(ctx, "workflow started", "workflow", w.ID, "workspace", w.WorkspaceID, "user", p.UserID)
	return w, nil
}

// traceParent is the W3C traceparent of ctx's span, empty when ctx is not
// traced.
func traceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

func emitRound(w Workflow) (EventType, any) {
	return EventStatus, StatusData{Status: StatusRunning, Label: "round " + strconv.Itoa(w.CurrentRound)}
}

// Resume continues a completed, stopped or failed workflow in a new round
// (round+1, task and action 0) and appends `status` running. A running
// workflow cannot be resumed: *TransitionError (ErrConflict).
func (s *Service) Resume(ctx context.Context, p tenancy.Principal, id string) (Workflow, error) {
	return s.transition(ctx, p, Transition{ID: id, To: StatusRunning, NewRound: true, Emit: emitRound, RoundTrace: traceParent(ctx)})
}

// Complete ends the round successfully and appends `complete`.
func (s *Service) Complete(ctx context.Context, p tenancy.Principal, id, reason string) (Workflow, error) {
	outcome := reason
	if outcome == "" {
		outcome = string(StatusCompleted)
	}
	return s.transition(ctx, p, Transition{ID: id, To: StatusCompleted, Outcome: outcome, Emit: func(Workflow) (EventType, any) {
		return EventComplete, EndData{Reason: reason}
	}})
}

// Stop stops a running workflow at the user's request and appends `stopped`.
// The agent working on it notices by its state (or its context) and ends.
func (s *Service) Stop(ctx context.Context, p tenancy.Principal, id, reason string) (Workflow, error) {
	return s.transition(ctx, p, Transition{ID: id, To: StatusStopped, Outcome: string(StatusStopped), Emit: func(Workflow) (EventType, any) {
		return EventStopped, EndData{Reason: reason}
	}})
}

// Fail marks a running workflow failed and appends `error` with message.
func (s *Service) Fail(ctx context.Context, p tenancy.Principal, id, message string) (Workflow, error) {
	return s.transition(ctx, p, Transition{ID: id, To: StatusFailed, Outcome: string(StatusFailed), Emit: func(Workflow) (EventType, any) {
		return EventError, EndData{Message: message}
	}})
}

func (s *Service) transition(ctx context.Context, p tenancy.Principal, t Transition) (Workflow, error) {
	t.From = sources(t.To)
	type result struct {
		w  Workflow
		ev Event
	}
	r, err := retry(ctx, s, "transition", t.ID, func() (result, error) {
		w, ev, err := s.store.Transition(ctx, p, t)
		return result{w, ev}, err
	})
	w, ev := r.w, r.ev
	if err != nil {
		return Workflow{}, err
	}
	s.broker.Notify(ev)
	s.logger.DebugContext(ctx, "workflow state", "workflow", w.ID, "status", w.Status, "round", w.CurrentRound)
	return w, nil
}

// Delete deletes a workflow in any state, with everything it holds. Its
// subscribers' channels close.
func (s *Service) Delete(ctx context.Context, p tenancy.Principal, id string) error {
	if err := s.store.DeleteWorkflow(ctx, p, id); err != nil {
		return err
	}
	s.broker.Gone(id)
	return nil
}

// Get returns a workflow.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id string) (Workflow, error) {
	return s.store.Workflow(ctx, p, id)
}

// List returns the principal's workflows (for a tenant admin: the tenant's),
// most recently active first.
func (s *Service) List(ctx context.Context, p tenancy.Principal, f Filter) ([]Workflow, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, fmt.Errorf("%w: unknown workflow status %q", tenancy.ErrInvalid, f.Status)
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	f.Limit = min(f.Limit, maxListLimit)
	return s.store.Workflows(ctx, p, f)
}

// Update renames a workflow, replaces its summary and adds to its statistics.
func (s *Service) Update(ctx context.Context, p tenancy.Principal, id string, u Update) (Workflow, error) {
	if u.Name != nil && strings.TrimSpace(*u.Name) == "" {
		return Workflow{}, fmt.Errorf("%w: workflow name is empty", tenancy.ErrInvalid)
	}
	st := u.Stats
	if st.BytesSent < 0 || st.BytesReceived < 0 || st.TokensUsed < 0 || st.ProcessingTime < 0 || st.CostCHF < 0 {
		return Workflow{}, fmt.Errorf("%w: statistics only grow", tenancy.ErrInvalid)
	}
	return retry(ctx, s, "update", id, func() (Workflow, error) { return s.store.UpdateWorkflow(ctx, p, id, u) })
}

// NextTask starts the next task of the current round and returns the new position.
func (s *Service) NextTask(ctx context.Context, p tenancy.Principal, id string) (Exec, error) {
	return retry(ctx, s, "next task", id, func() (Exec, error) { return s.store.AdvanceExec(ctx, p, id, StepTask) })
}

// NextAction starts the next action of the current task.
func (s *Service) NextAction(ctx context.Context, p tenancy.Principal, id string) (Exec, error) {
	return retry(ctx, s, "next action", id, func() (Exec, error) { return s.store.AdvanceExec(ctx, p, id, StepAction) })
}

// AddMessage stores a message with its documents and appends its `message`
// event, in one transaction, so no reader sees a message without its documents. Every
// document's file must be readable by p. Status and Role are required; Round
// 0 means the current round.
func (s *Service) AddMessage(ctx context.Context, p tenancy.Principal, m Message) (Message, error) {
	if !m.Status.Valid() {
		return Message{}, fmt.Errorf("%w: message status %q (want first, step or last)", tenancy.ErrInvalid, m.Status)
	}
	if !m.Role.Valid() {
		return Message{}, fmt.Errorf("%w: message role %q (want user, assistant, system or tool)", tenancy.ErrInvalid, m.Role)
	}
	if m.Round < 0 {
		return Message{}, fmt.Errorf("%w: message round %d", tenancy.ErrInvalid, m.Round)
	}
	if len(m.ID) > 128 {
		return Message{}, fmt.Errorf("%w: message id longer than 128 characters", tenancy.ErrInvalid)
	}
	for i, d := range m.Documents {
		if strings.TrimSpace(d.FileID) == "" {
			return Message{}, fmt.Errorf("%w: document %d names no file", tenancy.ErrInvalid, i)
		}
	}
	type result struct {
		m  Message
		ev Event
	}
	r, err := retry(ctx, s, "add message", m.WorkflowID, func() (result, error) {
		out, ev, err := s.store.AddMessage(ctx, p, m)
		return result{out, ev}, err
	})
	out, ev := r.m, r.ev
	if err != nil {
		return Message{}, err
	}
	s.broker.Notify(ev)
	return out, nil
}

// Messages lists a workflow's messages after a position, with documents.
// limit ≤ 0 means 200; at most 1000.
func (s *Service) Messages(ctx context.Context, p tenancy.Principal, workflowID string, after After, limit int) ([]Message, error) {
	return s.store.Messages(ctx, p, workflowID, after, clampLimit(limit))
}

// DeleteMessage deletes a message and its documents; messages answering it
// keep their place and lose their parent.
func (s *Service) DeleteMessage(ctx context.Context, p tenancy.Principal, workflowID, messageID string) error {
	return s.store.DeleteMessage(ctx, p, workflowID, messageID)
}

// RemoveFile detaches a file from a message of the workflow (DELETE
// …/messages/{messageId}/files/{fileId}); the file stays stored.
func (s *Service) RemoveFile(ctx context.Context, p tenancy.Principal, workflowID, messageID, fileID string) error {
	return s.store.RemoveMessageFile(ctx, p, workflowID, messageID, fileID)
}

// ResolveDocuments turns an agent's document references into the workflow's
// documents (docref parses them): "docItem:<id>" names one (a bare id is
// taken as one too), "docList:<label>" all with that label and
// "docList:<messageId>:<label>" those of one message. A docItem that is not
// in the workflow is ErrNotFound naming it; a reference that does not parse
// is ErrInvalid; an empty docList is not an error.
func (s *Service) ResolveDocuments(ctx context.Context, p tenancy.Principal, workflowID string, refs []string) ([]Document, error) {
	var ids, labels []string
	var parsed []docref.Ref
	for _, raw := range refs {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		r, err := docref.ParseString(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", tenancy.ErrInvalid, err)
		}
		parsed = append(parsed, r)
		if r.Kind == docref.List {
			labels = append(labels, r.Label)
		} else {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 && len(labels) == 0 {
		return []Document{}, nil
	}
	docs, err := s.store.Documents(ctx, p, workflowID, ids, labels)
	if err != nil {
		return nil, err
	}
	found := make(map[string]bool, len(docs))
	for _, d := range docs {
		found[d.ID] = true
	}
	for _, id := range ids {
		if !found[id] {
			return nil, fmt.Errorf("%w: document docItem:%s is not in workflow %q", tenancy.ErrNotFound, id, workflowID)
		}
	}
	// The store selects by id or label; a label limited to one message
	// keeps only that message's documents.
	out := docs[:0]
	for _, d := range docs {
		for _, r := range parsed {
			if (r.Kind != docref.List && r.ID == d.ID) || (r.Kind == docref.List && r.Label == d.Label && (r.MessageID == "" || r.MessageID == d.MessageID)) {
				out = append(out, d)
				break
			}
		}
	}
	return out, nil
}

// AddLog appends a log entry. Type empty means info; Status empty means the
// workflow's current state.
func (s *Service) AddLog(ctx context.Context, p tenancy.Principal, l Log) (Log, error) {
	if l.Type == "" {
		l.Type = LogInfo
	}
	if !l.Type.Valid() {
		return Log{}, fmt.Errorf("%w: log type %q (want info, warning or error)", tenancy.ErrInvalid, l.Type)
	}
	if l.Status != "" && !l.Status.Valid() {
		return Log{}, fmt.Errorf("%w: log status %q", tenancy.ErrInvalid, l.Status)
	}
	if l.Progress < 0 || l.Progress > 100 {
		return Log{}, fmt.Errorf("%w: log progress %d is not within 0..100", tenancy.ErrInvalid, l.Progress)
	}
	return retry(ctx, s, "add log", l.WorkflowID, func() (Log, error) { return s.store.AddLog(ctx, p, l) })
}

// Logs lists a workflow's log entries after a position. limit ≤ 0 means 200;
// at most 1000.
func (s *Service) Logs(ctx context.Context, p tenancy.Principal, workflowID string, after After, limit int) ([]Log, error) {
	return s.store.Logs(ctx, p, workflowID, after, clampLimit(limit))
}

// Append appends an event with the workflow's next sequence number and
// announces it to this process's subscribers. payload is marshalled to JSON
// (a json.RawMessage is taken as is). `message` events come only from
// AddMessage and the terminal ones (complete, stopped, error) only from
// Complete, Stop and Fail, so the stream never claims what the state does
// not hold: appending them here is ErrInvalid.
//
// Append is on the path of every streamed token (`chunk`): one short
// transaction that bumps the workflow's counter and inserts the row.
func (s *Service) Append(ctx context.Context, p tenancy.Principal, workflowID string, typ EventType, payload any) (Event, error) {
	if !typ.Valid() {
		return Event{}, fmt.Errorf("%w: unknown event type %q", tenancy.ErrInvalid, typ)
	}
	if typ == EventMessage || typ.Terminal() {
		return Event{}, fmt.Errorf("%w: %s events are appended by the operation they report (AddMessage, Complete, Stop, Fail)", tenancy.ErrInvalid, typ)
	}
	var data json.RawMessage
	switch v := payload.(type) {
	case json.RawMessage:
		if !json.Valid(v) {
			return Event{}, fmt.Errorf("%w: %s event payload is not JSON", tenancy.ErrInvalid, typ)
		}
		data = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return Event{}, fmt.Errorf("%w: %s event payload: %w", tenancy.ErrInvalid, typ, err)
		}
		data = b
	}
	ev, err := retry(ctx, s, "append event", workflowID, func() (Event, error) {
		return s.store.AppendEvent(ctx, p, workflowID, typ, data)
	})
	if err != nil {
		return Event{}, err
	}
	s.broker.Notify(ev)
	return ev, nil
}

// Events returns the workflow's events after sequence number afterSeq, in
// order; limit ≤ 0 or above MaxEventsPage means MaxEventsPage.
func (s *Service) Events(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64, limit int) ([]Event, error) {
	if limit <= 0 || limit > MaxEventsPage {
		limit = MaxEventsPage
	}
	return s.store.Events(ctx, p, workflowID, max(afterSeq, 0), limit)
}

// Head returns the sequence number of the workflow's last event (0 when it
// has none), without access checks: for the host's own bookkeeping, never
// for a user.
func (s *Service) Head(ctx context.Context, workflowID string) (int64, error) {
	if s.broker == nil {
		return 0, fmt.Errorf("workflows: this service has no broker")
	}
	heads, err := s.broker.src.EventHeads(ctx, []string{workflowID})
	if err != nil {
		return 0, err
	}
	return heads[workflowID], nil
}

// Subscribe follows a workflow's events after afterSeq (0: from the first):
// see [Broker.Subscribe].
func (s *Service) Subscribe(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64) (<-chan Event, error) {
	if s.broker == nil {
		return nil, fmt.Errorf("workflows: this service has no broker to subscribe to")
	}
	return s.broker.Subscribe(ctx, p, workflowID, afterSeq)
}

func clampLimit(limit int) int {
	if limit <= 0 {
		return defaultListLimit
	}
	return min(limit, maxListLimit)
}

// Open follows a workflow's events for a caller that reads them in its own
// goroutine: see [Broker.Open].
func (s *Service) Open(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64) (*Subscription, error) {
	if s.broker == nil {
		return nil, fmt.Errorf("workflows: this service has no broker to subscribe to")
	}
	return s.broker.Open(ctx, p, workflowID, afterSeq)
}
