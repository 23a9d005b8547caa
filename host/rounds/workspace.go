// Package workspace runs what a user asks of a workspace: a
// prompt with files becomes a workflow round whose agent loop runs in the
// background, every step persisted as an event that clients stream, and the
// round ends in a state of the workflow state machine (completed, stopped,
// failed; package workflows).
package rounds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/dbwait"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

// ErrNoModel: no model is configured for the agent. The workspace still
// serves files, search and direct tool calls.
var ErrNoModel = errors.New("no model is configured for the agent: set AGENTHOST_OPENAI_BASE_URL, AGENTHOST_OPENAI_API_KEY and AGENTHOST_MODEL_AGENT, or an llm section in the configuration file (docs/configuration.md)")

// StartRequest is a prompt as a user sends it: text, files, data sources,
// voice mode, language and the workflow it continues.
type StartRequest struct {
	Prompt  string   `json:"prompt"`
	FileIDs []string `json:"fileIds,omitempty"`
	// DataSourceIDs name external sources (a later issue); refused for now.
	DataSourceIDs []string `json:"dataSourceIds,omitempty"`
	VoiceMode     bool     `json:"voiceMode,omitempty"`
	// WorkflowID continues that workflow in a new round; empty starts one.
	WorkflowID   string `json:"workflowId,omitempty"`
	UserLanguage string `json:"userLanguage,omitempty"`
	// Model, when set, is the conversation's model from this round on
	// (provider/model, one the workspace allows); empty keeps its choice.
	Model string `json:"model,omitempty"`
	// MaxCostCHF is the round's own budget (the lower of it and the
	// host's applies); 0 leaves the host's. On the wire it is a number of
	// francs, as it was when it was a float.
	MaxCostCHF money.Amount `json:"maxCostCHF,omitempty"`
	// continues is the traceparent of the trace a taken-over round
	// continues (agent.Input.Continues).
	continues string
	// EditOf names a prompt of the workflow this one replaces: the round
	// is a new branch beside it (branches.go).
	EditOf string `json:"editOf,omitempty"`
	// resume continues a round paused for approval (approval.go).
	resume *agent.Resume
	// regenerate names the prompt (or the answer to it) the round answers
	// again, without a new prompt (Regenerate).
	regenerate string
	// promptID is the stored prompt the round answers: its answer's parent.
	promptID string
}

// Orphans finds rounds left running by a host that stopped (administrative).
type Orphans interface {
	RunningWorkflowsBefore(ctx context.Context, before time.Time) ([]workflows.Workflow, error)
}

// ToolSets says which tool set (and extra tools) a workspace's agent sees.
// When it is a SettingsStore too (the store is), it also keeps each
// workspace's agent settings.
type ToolSets interface {
	WorkspaceTools(ctx context.Context, p tenancy.Principal, workspaceID string) (set string, extra []string, err error)
}

// Config bounds requests and sets the agent.
type Config struct {
	// MaxPromptBytes bounds a prompt [64 KiB].
	MaxPromptBytes int
	// HistoryMessages is how many earlier messages a round sees verbatim
	// (older ones live in the workflow's summary) [20].
	HistoryMessages int
}

// Service starts, stops and runs workflows. It is safe for concurrent use.
type Service struct {
	wf       *workflows.Service
	files    *files.Service
	agent    *agent.Agent // nil when no model is configured
	registry *tools.Registry
	toolSets ToolSets
	cfg      Config
	logger   *slog.Logger
	know     *Knowledge   // nil: rounds get no retrieved context
	hosts    Hosts        // nil: one host, rounds are not stamped
	catalog  ModelCatalog // nil: no model choice, the chain as configured
	// approvals keeps the approval policies and paused rounds; nil: every
	// call runs (approval.go).
	approvals   Approvals
	audit       audit.Recorder
	approvalTTL time.Duration
	// notify tells the person of calls that wait for them; nil: no one.
	notify Notifier
	// titler names new conversations after their first exchange; nil:
	// they keep the start of their first prompt (title.go).
	titler Titler

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc
	// stopping: HandOff began; no new round runs here.
	stopping bool
	wg       sync.WaitGroup
	// records ends the writes of rounds that wait for the database, once a
	// stop can wait no longer (HandOff); recordsDone ends it.
	records     context.Context
	recordsDone context.CancelFunc
}

// New returns a service; ag nil means no model is configured.
func New(wf *workflows.Service, fs *files.Service, ag *agent.Agent, registry *tools.Registry, toolSets ToolSets, cfg Config, logger *slog.Logger) *Service {
	if cfg.MaxPromptBytes <= 0 {
		cfg.MaxPromptBytes = 64 << 10
	}
	if cfg.HistoryMessages <= 0 {
		cfg.HistoryMessages = 20
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	records, recordsDone := context.WithCancel(context.Background())
	return &Service{wf: wf, files: fs, agent: ag, registry: registry, toolSets: toolSets, cfg: cfg, logger: logger,
		running: map[string]context.CancelCauseFunc{}, records: records, recordsDone: recordsDone}
}

// Start starts a workflow (or a new round of req.WorkflowID) in a workspace
// and returns at once; the agent runs in the background and its steps arrive
// as events.
func (s *Service) Start(ctx context.Context, p tenancy.Principal, workspaceID string, req StartRequest) (workflows.Workflow, error) {
	return s.start(ctx, p, workspaceID, req, nil)
}

// Run starts a round as Start does and waits until it has ended, returning
// the workflow as it ended and the agent's result (background jobs run
// rounds this way); started, if set, is told the workflow once the round
// runs. Cancelling ctx stops the round.
func (s *Service) Run(ctx context.Context, p tenancy.Principal, workspaceID string, req StartRequest, started func(workflows.Workflow)) (workflows.Workflow, agent.Result, error) {
	done := make(chan agent.Result, 1)
	w, err := s.start(ctx, p, workspaceID, req, func(r agent.Result) { done <- r })
	if err != nil {
		return workflows.Workflow{}, agent.Result{}, err
	}
	if started != nil {
		started(w)
	}
	var res agent.Result
	select {
	case res = <-done:
	case <-ctx.Done():
		if _, err := s.Stop(context.WithoutCancel(ctx), p, w.ID); err != nil {
			s.logger.Warn("rounds: stopping a round whose caller gave up", "workflow", w.ID, "err", err)
		}
		res = <-done
	}
	w, err = s.wf.Get(context.WithoutCancel(ctx), p, w.ID)
	return w, res, err
}

func (s *Service) start(ctx context.Context, p tenancy.Principal, workspaceID string, req StartRequest, onEnd func(agent.Result)) (workflows.Workflow, error) {
	var branch branchPoint
	if req.WorkflowID != "" {
		var err error
		if branch, err = s.branchFor(ctx, p, req.WorkflowID, req); err != nil {
			return workflows.Workflow{}, err
		}
		if branch.prompt != nil {
			req.Prompt, req.FileIDs = branch.prompt.Content, nil
		}
	} else if req.EditOf != "" || req.regenerate != "" {
		return workflows.Workflow{}, fmt.Errorf("%w: editOf needs the workflowId of the prompt it edits", tenancy.ErrInvalid)
	}
	prompt := strings.TrimSpace(req.Prompt)
	switch {
	case prompt == "":
		return workflows.Workflow{}, fmt.Errorf("%w: prompt is empty", tenancy.ErrInvalid)
	case len(req.Prompt) > s.cfg.MaxPromptBytes:
		return workflows.Workflow{}, fmt.Errorf("%w: prompt is %d bytes, more than the limit of %d", tenancy.ErrInvalid, len(req.Prompt), s.cfg.MaxPromptBytes)
	case !utf8.ValidString(req.Prompt):
		return workflows.Workflow{}, fmt.Errorf("%w: prompt is not valid UTF-8", tenancy.ErrInvalid)
	case len(req.DataSourceIDs) > 0:
		return workflows.Workflow{}, fmt.Errorf("%w: data sources are not supported yet", tenancy.ErrInvalid)
	case s.agent == nil:
		return workflows.Workflow{}, ErrNoModel
	case s.isStopping():
		return workflows.Workflow{}, ErrHandingOff
	}
	// Everything the round needs is checked before the workflow changes.
	var docs []workflows.Document
	for _, id := range req.FileIDs {
		f, err := s.files.Get(ctx, p, id)
		if err != nil {
			return workflows.Workflow{}, fmt.Errorf("fileIds: %w", err)
		}
		if f.WorkspaceID != workspaceID && !f.Shared {
			return workflows.Workflow{}, fmt.Errorf("fileIds: %w: file %q is in another workspace", tenancy.ErrNotFound, id)
		}
		docs = append(docs, workflows.Document{FileID: f.ID, Label: "upload"})
	}
	setName, extra, err := s.toolSets.WorkspaceTools(ctx, p, workspaceID)
	if err != nil {
		return workflows.Workflow{}, err
	}
	set, missing, err := s.registry.WorkspaceSet(ctx, p, workspaceID, setName, extra...)
	if err != nil {
		return workflows.Workflow{}, err
	}
	if len(missing) > 0 {
		s.logger.Debug("tool set names tools no plugin provides", "set", setName, "missing", missing)
	}
	for _, e := range set.Problems() {
		s.logger.Warn("tool set: a source's tools are left out", "workspace", workspaceID, "err", e)
	}

	if req.WorkflowID == "" && req.Model == "" {
		req.Model = s.personalModel(ctx, p, workspaceID)
	}
	if err := s.checkRoundModel(ctx, p, workspaceID, req); err != nil {
		return workflows.Workflow{}, err
	}

	var w workflows.Workflow
	if req.WorkflowID == "" {
		w, err = s.wf.Start(ctx, p, workflows.NewWorkflow{WorkspaceID: workspaceID, Name: title(prompt)})
	} else {
		if w, err = s.wf.Get(ctx, p, req.WorkflowID); err == nil && w.WorkspaceID != workspaceID {
			err = fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, req.WorkflowID)
		}
		if err == nil {
			w, err = s.wf.Resume(ctx, p, req.WorkflowID)
		}
	}
	if err != nil {
		return workflows.Workflow{}, err
	}
	if err := s.keepRoundModel(ctx, p, w.ID, req.Model); err != nil {
		return s.failEarly(ctx, p, w, err)
	}
	userMsg := workflows.Message{}
	if branch.prompt != nil {
		userMsg = *branch.prompt
	} else {
		userMsg, err = s.wf.AddMessage(ctx, p, workflows.Message{WorkflowID: w.ID, ParentID: branch.parent, Root: branch.parent == "", Status: workflows.MessageFirst,
			Role: workflows.RoleUser, Content: req.Prompt, Documents: docs})
		if err != nil {
			return s.failEarly(ctx, p, w, err)
		}
	}
	if branch.selects {
		if w, err = s.wf.SelectBranch(ctx, p, w.ID, userMsg.ID); err != nil {
			return s.failEarly(ctx, p, w, err)
		}
	}
	req.promptID = userMsg.ID
	s.log(ctx, p, w.ID, workflows.LogInfo, "Workflow processing started", 0)
	for _, note := range unavailableNotes(set) {
		s.log(ctx, p, w.ID, workflows.LogWarning, note, 0)
	}
	s.launch(ctx, p, w, req, userMsg.Documents, branch.history, set, onEnd)
	return w, nil
}

// launch runs a round's agent loop in the background on this host: the
// round is stamped with the host (so that another host can take it over
// should this one die), and a stop recorded by any host cancels it. The
// round's writes wait out a database that is away (workflows.WithRetries).
func (s *Service) launch(ctx context.Context, p tenancy.Principal, w workflows.Workflow, req StartRequest, docs []workflows.Document,
	history []llm.Message, set *tools.Set, onEnd func(agent.Result)) {
	// A round whose caller waits for it (a background job) is recovered by
	// that caller's own lease should this host die; stamping it for
	// take-over too would run it twice.
	stamped := s.hosts != nil && onEnd == nil
	var cancelCause context.CancelCauseFunc
	var guard func(context.Context) error
	if stamped {
		// A write that waited for the database goes in only if the round
		// is still this host's: one cut off for longer than its lease has
		// had it taken over, and its writes would interleave with the
		// taker's.
		guard = func(ctx context.Context) error {
			host, err := s.hosts.RoundHost(ctx, w.ID)
			if err == nil && host != s.hosts.HostID() {
				cancelCause(errTakenOver)
				return errTakenOver
			}
			return err
		}
	}
	runCtx, cancelCause := context.WithCancelCause(dbwait.WithRetries(context.WithoutCancel(ctx), guard))
	cancel := func() { cancelCause(nil) }
	if s.hosts != nil {
		// A waited-for round clears the stamp an earlier round of the
		// workflow left, which would otherwise make it look like a dead
		// host's round to take over.
		host := ""
		if stamped {
			host = s.hosts.HostID()
		}
		if err := s.hosts.SetRoundHost(runCtx, w.ID, host); err != nil {
			s.logger.Warn("rounds: stamping the round's host", "workflow", w.ID, "err", err)
		}
	}
	s.mu.Lock()
	if s.stopping {
		// A round launched while the host stops (a request that passed
		// the check, a take-over under way) is handed off at once.
		s.mu.Unlock()
		cancel()
		s.log(ctx, p, w.ID, workflows.LogWarning, "This host is stopping: the round is handed to another host", 0)
		s.release(context.WithoutCancel(ctx), w.ID)
		if onEnd != nil {
			onEnd(agent.Result{Outcome: agent.Stopped})
		}
		return
	}
	s.running[w.ID] = cancelCause
	s.wg.Add(2)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.watchStop(runCtx, p, w.ID, cancel)
	}()
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.running, w.ID)
			s.mu.Unlock()
			cancel()
		}()
		r := round{w: w, req: req, docs: docs, history: history, set: set, stamped: stamped, waited: onEnd != nil, cancel: cancelCause}
		res := s.run(runCtx, p, r)
		if onEnd != nil {
			onEnd(res)
		}
	}()
}

// RecoverInterrupted fails the rounds still marked running whose last
// activity is older than before and whose loop does not run on this host:
// their host stopped mid-round (a crash, a deploy), so nobody will end them.
// The embedded store has one host, so `serve` passes its start time; with a
// shared PostgreSQL it passes a horizon well beyond any live round's silence.
// Each is failed as its owner, with an `error` event saying why; the user
// may resume it.
func (s *Service) RecoverInterrupted(ctx context.Context, orphans Orphans, before time.Time) (int, error) {
	ws, err := orphans.RunningWorkflowsBefore(ctx, before)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, w := range ws {
		if s.Running(w.ID) {
			continue
		}
		if _, err := s.wf.Fail(ctx, s.owner(ctx, w), w.ID, "interrupted: the host running this round stopped; send the request again to resume"); err != nil {
			s.logger.Warn("rounds: failing an interrupted round", "workflow", w.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// failEarly ends a round that could not begin.
func (s *Service) failEarly(ctx context.Context, p tenancy.Principal, w workflows.Workflow, cause error) (workflows.Workflow, error) {
	if _, err := s.wf.Fail(context.WithoutCancel(ctx), p, w.ID, cause.Error()); err != nil {
		s.logger.Error("rounds: failing a workflow", "workflow", w.ID, "err", err)
	}
	return workflows.Workflow{}, cause
}

// Stop stops a running workflow: the state changes at once (and a `stopped`
// event is appended), and the agent loop, if it runs on this host, is
// cancelled.
func (s *Service) Stop(ctx context.Context, p tenancy.Principal, workflowID string) (workflows.Workflow, error) {
	w, err := s.wf.Stop(ctx, p, workflowID, "stopped by the user")
	if err != nil {
		return workflows.Workflow{}, err
	}
	s.mu.Lock()
	cancel := s.running[workflowID]
	s.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
	return w, nil
}

// Running reports whether a workflow's agent runs on this host.
func (s *Service) Running(workflowID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.running[workflowID]
	return ok
}

// Close cancels every running loop and waits for them to record how they
// ended.
func (s *Service) Close() {
	s.mu.Lock()
	for _, cancel := range s.running {
		cancel(nil)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Wait waits until no loop runs (tests, graceful shutdown).
func (s *Service) Wait() { s.wg.Wait() }

// unavailableNotes say which tools of the set cannot be called now and
// why, one note per reason (a server's tools share theirs), and which a
// source could not offer at all (a server never reached, a name taken),
// so that a round's log shows them instead of their silent absence.
func unavailableNotes(set *tools.Set) []string {
	var reasons []string
	byReason := map[string][]string{}
	for _, t := range set.Tools() {
		if t.Unavailable == "" {
			continue
		}
		if _, ok := byReason[t.Unavailable]; !ok {
			reasons = append(reasons, t.Unavailable)
		}
		byReason[t.Unavailable] = append(byReason[t.Unavailable], t.Name)
	}
	notes := make([]string, 0, len(reasons)+len(set.Problems()))
	for _, r := range reasons {
		notes = append(notes, fmt.Sprintf("Tools unavailable in this round: %s (%s)", strings.Join(byReason[r], ", "), r))
	}
	for _, e := range set.Problems() {
		notes = append(notes, "Tools left out of this round: "+e.Error())
	}
	return notes
}

func (s *Service) log(ctx context.Context, p tenancy.Principal, workflowID string, typ workflows.LogType, msg string, progress int) {
	if _, err := s.wf.AddLog(context.WithoutCancel(ctx), p, workflows.Log{WorkflowID: workflowID, Type: typ, Message: msg,
		AgentName: "agent", Progress: progress}); err != nil {
		if errors.Is(err, tenancy.ErrNotFound) {
			return // the workflow was deleted while its round ran
		}
		s.logger.Warn("rounds: log", "workflow", workflowID, "err", err)
	}
}

// title names a workflow after the start of its first prompt.
func title(prompt string) string {
	prompt = strings.Join(strings.Fields(prompt), " ")
	if utf8.RuneCountInString(prompt) <= 60 {
		return prompt
	}
	return string([]rune(prompt)[:60]) + "…"
}
