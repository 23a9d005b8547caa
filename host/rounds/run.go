package rounds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

// conversation keeps of msgs what the agent sees verbatim: prompts and
// final answers, the newest HistoryMessages.
func (s *Service) conversation(msgs []workflows.Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		switch {
		case m.Role == workflows.RoleUser && m.Status == workflows.MessageFirst:
			out = append(out, llm.Message{Role: "user", Content: m.Content + documentsNote(m.Documents)})
		case m.Role == workflows.RoleAssistant && m.Status == workflows.MessageLast:
			out = append(out, llm.Message{Role: "assistant", Content: m.Content})
		}
	}
	if len(out) > s.cfg.HistoryMessages {
		out = out[len(out)-s.cfg.HistoryMessages:]
	}
	return out
}

// documentsNote tells the model which documents came with a prompt, by the
// references its tools take (docItem:<id> and the file id, docs/files.md).
func documentsNote(docs []workflows.Document) string {
	if len(docs) == 0 {
		return ""
	}
	s := "\n\nAttached documents:"
	for _, d := range docs {
		s += fmt.Sprintf("\n- %s (%s, %d bytes): documentList ref %s, file id %s", d.Name, d.MIMEType, d.Size, d.Ref(), d.FileID)
	}
	return s
}

// mentionsNote resolves the prompt's @references in the caller's scope; a
// failure to look them up is noted, never the round's failure.
func (s *Service) mentionsNote(ctx context.Context, p tenancy.Principal, workspaceID, prompt string) string {
	if s.files == nil {
		return ""
	}
	ms, err := ResolveMentions(ctx, s.files, p, workspaceID, prompt)
	if err != nil {
		s.logger.Warn("rounds: resolving @references", "workspace", workspaceID, "err", err)
		return "\n\n(The @references of the prompt could not be looked up: " + err.Error() + ")"
	}
	return MentionsNote(ms)
}

// round is what one round's run needs.
type round struct {
	w       workflows.Workflow
	req     StartRequest
	docs    []workflows.Document
	history []llm.Message
	set     *tools.Set
	// stamped: the round carries this host's id, and another host may
	// take it over.
	stamped bool
	// waited: a caller waits for the round's end (a background job): no
	// person is there to approve, so a call that needs approval is refused
	// rather than paused.
	waited bool
	cancel context.CancelCauseFunc
}

// run is one round's agent loop and its ending.
func (s *Service) run(ctx context.Context, p tenancy.Principal, r round) agent.Result {
	w, req, docs, history, set := r.w, r.req, r.docs, r.history, r.set
	start := time.Now()
	// The round's records outlive its cancellation (a stop still records
	// the answer so far), and wait out an unavailable database until a
	// stop of the host can wait no longer (HandOff).
	bg, cancelBg := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBg()
	defer context.AfterFunc(s.records, cancelBg)()
	answerID := uuid.Must(uuid.NewV7()).String()
	rk := s.roundKnowledge(ctx, p, w, req.Prompt)
	sink := func(_ context.Context, e agent.Event) {
		if errors.Is(context.Cause(ctx), errTakenOver) {
			return // the round is another host's now: nothing more of this attempt
		}
		data := e.Data
		switch d := data.(type) {
		case workflows.ChunkData:
			d.MessageID = answerID // chunks name the answer they will become
			data = d
		case workflows.AgentSummaryData:
			if handedOff(ctx) {
				d.Reason = handedOffReason
				data = d
			}
		}
		// The workflow's execution state follows the loop: a loop round is a
		// task, a tool call an action of it.
		switch e.Type {
		case workflows.EventToolCall:
			if _, err := s.wf.NextAction(bg, p, w.ID); err != nil && !errors.Is(err, tenancy.ErrNotFound) {
				s.logger.Warn("rounds: execution state", "workflow", w.ID, "err", err)
			}
		case workflows.EventAgentProgress:
			// A host cut off from the database for longer than its lease
			// finds, once it is back, that another host took the round
			// over: it stops at the next loop round and records nothing.
			if r.stamped && !s.stillMine(bg, w.ID) {
				r.cancel(errTakenOver)
				return
			}
			defer func() {
				if _, err := s.wf.NextTask(bg, p, w.ID); err != nil && !errors.Is(err, tenancy.ErrNotFound) {
					s.logger.Warn("rounds: execution state", "workflow", w.ID, "err", err)
				}
			}()
		}
		if _, err := s.wf.Append(bg, p, w.ID, e.Type, data); err != nil && !errors.Is(err, tenancy.ErrNotFound) {
			s.logger.Warn("rounds: event", "workflow", w.ID, "type", e.Type, "err", err)
		}
		if rk != nil {
			rk.observe(bg, e)
		}
		if pr, ok := data.(workflows.AgentProgressData); ok {
			s.log(bg, p, w.ID, workflows.LogInfo, fmt.Sprintf("Round %d of at most %d: %d tool call(s) so far", pr.Round, pr.MaxRounds, pr.ToolCalls),
				min(90, 10+80*pr.Round/max(1, pr.MaxRounds)))
		}
	}
	prompt := req.Prompt + documentsNote(docs) + s.mentionsNote(ctx, p, w.WorkspaceID, req.Prompt)
	if req.UserLanguage != "" {
		prompt += "\n\n(Answer in the user's language: " + req.UserLanguage + ".)"
	}
	ctx = s.withRoundModel(ctx, p, w.WorkspaceID, w.ID)
	// Every model call of the round is billed to its tenant, workspace, user
	// and workflow.
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: p.TenantID, WorkspaceID: w.WorkspaceID, UserID: p.UserID,
		WorkflowID: w.ID, Purpose: "agent"})
	// Host capabilities of the tools act for this user in this workflow.
	ctx = toolcall.With(ctx, toolcall.Caller{Principal: p, WorkspaceID: w.WorkspaceID, WorkflowID: w.ID})
	in := agent.Input{Prompt: prompt, History: history, Summary: w.Summary, Spent: w.Stats.CostCHF, Round: w.CurrentRound,
		MaxCost: req.MaxCostCHF, Continues: req.continues}
	in.Resume, in.Gate = req.resume, s.gate(ctx, p, w.WorkspaceID)
	in.Instructions = s.preferences(ctx, p).CustomInstructions
	if r.waited && in.Gate != nil {
		in.Gate = refuseAsk{in.Gate}
	}
	if rk != nil {
		in.ContextSource = rk
	}
	// The round's data statistics are the bytes its model calls (the
	// loop's and its tools') sent and received.
	traffic := &llm.Traffic{}
	ctx = llm.WithTraffic(ctx, traffic)
	res := s.agent.Run(ctx, in, set, sink)

	now := time.Now()
	stats := workflows.Stats{TokensUsed: int64(res.PromptTokens + res.CompletionTokens), CostCHF: res.Cost,
		ProcessingTime: now.Sub(start).Seconds(), BytesSent: traffic.Sent(), BytesReceived: traffic.Received()}
	if r.stamped && (errors.Is(context.Cause(ctx), errTakenOver) || !s.stillMine(bg, w.ID)) {
		s.logger.Warn("rounds: another host took this round over while this one could not reach the database; its end is that host's to record",
			"workflow", w.ID)
		return res
	}
	if res.Outcome == agent.WaitingForApproval && res.Paused != nil {
		s.pause(bg, p, w, res, stats)
		return res
	}
	if handedOff(ctx) && res.Outcome != agent.Completed && res.Outcome != agent.MaxRounds && res.Outcome != agent.BudgetExceeded {
		// The host stops before the round ended: no answer, no end. What
		// the attempt cost counts (its model calls were billed), and the
		// round is released for another host to run again.
		if _, err := s.wf.Update(bg, p, w.ID, workflows.Update{Stats: stats}); err != nil {
			s.recordFailed("rounds: workflow statistics", w.ID, err)
		}
		s.log(bg, p, w.ID, workflows.LogWarning, "This host is stopping: the round is handed to another host, which runs it again from its request", 0)
		s.release(bg, w.ID)
		return res
	}
	if _, err := s.wf.AddMessage(bg, p, workflows.Message{ID: answerID, WorkflowID: w.ID, ParentID: req.promptID, Status: workflows.MessageLast,
		Role: workflows.RoleAssistant, Content: res.Answer, AgentName: "agent", StartedAt: start, FinishedAt: &now, Stats: stats}); err != nil {
		s.recordFailed("rounds: storing the answer", w.ID, err)
	}
	summary := res.Summary
	if _, err := s.wf.Update(bg, p, w.ID, workflows.Update{Summary: &summary, Stats: stats}); err != nil {
		s.recordFailed("rounds: workflow statistics", w.ID, err)
	}
	var err error
	switch res.Outcome {
	case agent.Completed, agent.MaxRounds, agent.BudgetExceeded:
		s.log(bg, p, w.ID, workflows.LogInfo, "Workflow completed ("+string(res.Outcome)+")", 100)
		_, err = s.wf.Complete(bg, p, w.ID, string(res.Outcome))
		if err == nil && res.Outcome == agent.Completed && len(history) == 0 && !r.waited {
			s.nameConversation(bg, p, w, req.Prompt, res.Answer, req.UserLanguage)
		}
	case agent.Stopped:
		s.log(bg, p, w.ID, workflows.LogInfo, "Workflow stopped by user", 100)
		// Stop has usually changed the state already; this covers a
		// cancellation from elsewhere (shutdown).
		if cur, gerr := s.wf.Get(bg, p, w.ID); gerr == nil && cur.Status == workflows.StatusRunning {
			_, err = s.wf.Stop(bg, p, w.ID, "stopped")
		}
	default:
		msg := "the agent failed"
		if res.Err != nil {
			msg = res.Err.Error()
		}
		s.log(bg, p, w.ID, workflows.LogError, msg, 100)
		_, err = s.wf.Fail(bg, p, w.ID, msg)
	}
	if err != nil {
		s.recordFailed("rounds: ending a round", w.ID, err, "outcome", res.Outcome)
	}
	return res
}

// recordFailed logs a round's record that could not be written. A workflow
// deleted while its round ran (DELETE stops it, then removes it) has nowhere
// to keep the answer: that is the user's choice, not a fault, so it is
// logged at debug level; anything else is an error.
func (s *Service) recordFailed(msg, workflowID string, err error, attrs ...any) {
	attrs = append([]any{"workflow", workflowID, "err", err}, attrs...)
	if errors.Is(err, tenancy.ErrNotFound) {
		s.logger.Debug(msg+" (the workflow was deleted)", attrs...)
		return
	}
	s.logger.Error(msg, attrs...)
}
