package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/background/bgjob"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Outcomes of Work that the queue binding turns into the queue's own: a
// permanent error ends the queue's job at once, a Wait puts it back without
// counting an attempt.
var ErrPermanent = errors.New("background: not to be retried")

// Wait asks the queue to run the job again after Duration (the tenant has
// no room for it yet).
type Wait struct{ Duration time.Duration }

func (w Wait) Error() string {
	return fmt.Sprintf("background: waiting %v for room under the tenant's cap", w.Duration)
}

func permanent(err error) error { return fmt.Errorf("%w: %w", ErrPermanent, err) }

// cancelledByUser is the error Cancel records on a running job, which its
// worker reads to tell a cancel from a host shutting down.
const cancelledByUser = "cancelled by the user"

// Work is one attempt (of maxAttempts) at a job, run by the queue: wait for
// room under the tenant's cap, run the agent, record the end once and tell
// the originating workflow. An error it returns is retried unless it wraps
// ErrPermanent or is a Wait.
func (s *Service) Work(ctx context.Context, jobID string, attempt, maxAttempts int) error {
	j, err := s.store.BackgroundJobByID(ctx, jobID)
	if errors.Is(err, tenancy.ErrNotFound) {
		return permanent(err) // the tenant was deleted
	}
	if err != nil {
		return err
	}
	if j.Status.Terminal() {
		return nil
	}
	if j.Status == bgjob.Queued {
		n, err := s.store.RunningBackgroundJobs(ctx, j.TenantID)
		if err != nil {
			return err
		}
		if n >= s.cfg.PerTenant {
			return Wait{s.cfg.Wait}
		}
	}
	running := bgjob.Running
	if ok, err := s.store.UpdateBackgroundJob(ctx, j.ID, []bgjob.Status{bgjob.Queued, bgjob.Running}, bgjob.Update{Status: &running, Attempt: true}); err != nil || !ok {
		return err // nil when it was cancelled meanwhile
	}
	owner := tenancy.Principal{TenantID: j.TenantID, UserID: j.UserID}
	if j.WorkflowID != "" {
		// An earlier attempt's round, left running by a host that died, is
		// closed before the job runs again in the same workflow.
		if w, err := s.wf.Get(ctx, owner, j.WorkflowID); err == nil && w.Status == workflows.StatusRunning {
			if _, err := s.wf.Fail(ctx, owner, w.ID, "interrupted: the host running this background job stopped; the job runs again"); err != nil {
				return err
			}
		}
	}
	req := rounds.StartRequest{Prompt: prompt(j), WorkflowID: j.WorkflowID}
	if j.MaxCost != nil {
		req.MaxCostCHF = *j.MaxCost
	}
	follow, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFollowing()
	_, res, err := s.runner.Run(ctx, owner, j.WorkspaceID, req, func(w workflows.Workflow) {
		id := w.ID
		if _, err := s.store.UpdateBackgroundJob(context.WithoutCancel(ctx), j.ID, []bgjob.Status{bgjob.Running}, bgjob.Update{WorkflowID: &id}); err != nil {
			s.log.Warn("background: recording the job's workflow", "job", j.ID, "err", err)
		}
		j.WorkflowID = id
		go s.followProgress(follow, owner, j.ID, id)
	})
	stopFollowing()
	bg := context.WithoutCancel(ctx)
	if err != nil {
		// The round could not start (workspace deleted, tool set broken,
		// no model): retried while attempts remain.
		if attempt >= maxAttempts {
			s.end(bg, j, bgjob.Failed, "", "could not start: "+err.Error())
			return permanent(err)
		}
		return s.requeue(bg, j, err)
	}
	switch res.Outcome {
	case agent.Completed, agent.MaxRounds:
		s.end(bg, j, bgjob.Completed, res.Answer, "")
	case agent.BudgetExceeded:
		s.end(bg, j, bgjob.Cancelled, res.Answer, "budgetExceeded: the job's budget is spent")
	case agent.Stopped:
		if cur, err := s.store.BackgroundJobByID(bg, j.ID); err == nil && cur.Error == cancelledByUser {
			s.end(bg, j, bgjob.Cancelled, res.Answer, cancelledByUser)
			return nil
		}
		// Stopped by the host shutting down: the queue runs it again.
		return s.requeue(bg, j, fmt.Errorf("the round was stopped: %w", context.Cause(ctx)))
	default:
		msg := "the agent failed"
		if res.Err != nil {
			msg = res.Err.Error()
		}
		if attempt >= maxAttempts {
			s.end(bg, j, bgjob.Failed, res.Answer, msg)
			return permanent(errors.New(msg))
		}
		return s.requeue(bg, j, errors.New(msg))
	}
	return nil
}

// requeue records why an attempt failed and hands the job back to the
// queue, which retries it after a backoff.
func (s *Service) requeue(ctx context.Context, j bgjob.Job, cause error) error {
	st, msg := bgjob.Queued, cause.Error()
	if _, err := s.store.UpdateBackgroundJob(ctx, j.ID, []bgjob.Status{bgjob.Running}, bgjob.Update{Status: &st, Error: &msg}); err != nil {
		s.log.Warn("background: recording a failed attempt", "job", j.ID, "err", err)
	}
	return cause
}

// end records how the job ended, once (of two hosts racing, one records),
// and tells the workflow that started it.
func (s *Service) end(ctx context.Context, j bgjob.Job, st bgjob.Status, summary, errMsg string) {
	now := time.Now().UTC()
	u := bgjob.Update{Status: &st, ResultSummary: &summary, Error: &errMsg, CompletedAt: &now}
	if st == bgjob.Completed {
		one := 1.0
		u.Progress = &one
	}
	ok, err := s.store.UpdateBackgroundJob(ctx, j.ID, []bgjob.Status{bgjob.Running}, u)
	if err != nil {
		s.log.Error("background: recording the job's end", "job", j.ID, "err", err)
		return
	}
	if ok {
		s.tellOrigin(ctx, j, st, summary, errMsg)
		s.tellPerson(ctx, j, st, summary, errMsg)
	}
}

// tellPerson notifies the job's person that it ended, wherever they are
// in the UI.
func (s *Service) tellPerson(ctx context.Context, j bgjob.Job, st bgjob.Status, summary, errMsg string) {
	if s.notify == nil {
		return
	}
	detail := summary
	if errMsg != "" {
		detail = errMsg
	}
	wf := j.OriginWorkflowID
	if wf == "" {
		wf = j.WorkflowID
	}
	s.notify.Notify(ctx, notifications.Notification{TenantID: j.TenantID, UserID: j.UserID, WorkspaceID: j.WorkspaceID,
		Kind: notifications.BackgroundJob, SubjectID: j.ID, Status: string(st), Name: j.Description, Detail: detail, WorkflowID: wf})
}

// tellOrigin adds the job's result to the workflow that started it: a
// message the user reads and a `backgroundJob` event for live clients.
func (s *Service) tellOrigin(ctx context.Context, j bgjob.Job, st bgjob.Status, summary, errMsg string) {
	if j.OriginWorkflowID == "" {
		return
	}
	owner := tenancy.Principal{TenantID: j.TenantID, UserID: j.UserID}
	var b strings.Builder
	fmt.Fprintf(&b, "Background job “%s” %s.", j.Description, st)
	if errMsg != "" {
		fmt.Fprintf(&b, " (%s)", errMsg)
	}
	if summary != "" {
		b.WriteString("\n\n" + summary)
	}
	now := time.Now().UTC()
	if _, err := s.wf.AddMessage(ctx, owner, workflows.Message{WorkflowID: j.OriginWorkflowID, Role: workflows.RoleAssistant,
		Status: workflows.MessageLast, Content: b.String(), AgentName: "background", StartedAt: now, FinishedAt: &now}); err != nil {
		s.log.Warn("background: telling the originating workflow", "job", j.ID, "workflow", j.OriginWorkflowID, "err", err)
	}
	if _, err := s.wf.Append(ctx, owner, j.OriginWorkflowID, workflows.EventBackgroundJob, workflows.BackgroundJobData{
		JobID: j.ID, Status: string(st), Description: j.Description, Summary: summary, Error: errMsg, WorkflowID: j.WorkflowID}); err != nil {
		s.log.Warn("background: telling the originating workflow", "job", j.ID, "workflow", j.OriginWorkflowID, "err", err)
	}
}

// followProgress keeps the job's progress at the share of the round limit
// its run has used, from the run's agentProgress events.
func (s *Service) followProgress(ctx context.Context, p tenancy.Principal, jobID, workflowID string) {
	ch, err := s.wf.Subscribe(ctx, p, workflowID, 0)
	if err != nil {
		return
	}
	for ev := range ch {
		if ev.Type != workflows.EventAgentProgress {
			continue
		}
		var d workflows.AgentProgressData
		if json.Unmarshal(ev.Data, &d) != nil || d.MaxRounds <= 0 {
			continue
		}
		pr := min(float64(d.Round)/float64(d.MaxRounds), 0.99)
		if _, err := s.store.UpdateBackgroundJob(ctx, jobID, []bgjob.Status{bgjob.Running}, bgjob.Update{Progress: &pr}); err != nil && ctx.Err() == nil {
			s.log.Warn("background: recording progress", "job", jobID, "err", err)
		}
	}
}

// prompt is what the job's agent is asked.
func prompt(j bgjob.Job) string {
	var b strings.Builder
	b.WriteString("Background job: " + j.Description)
	if len(j.Subtasks) > 0 {
		b.WriteString("\n\nSubtasks:")
		for i, st := range j.Subtasks {
			fmt.Fprintf(&b, "\n%d. %s", i+1, st)
		}
	}
	b.WriteString("\n\nWork through it without asking the user (nobody is watching) and finish with a summary of the results.")
	return b.String()
}
