package rounds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/schema"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

// Approvals is what approvals before consequential tool calls need of the
// store (host/store implements it; docs/agent.md#approval-policy).
type Approvals interface {
	ToolPolicies(ctx context.Context, p tenancy.Principal, workspaceID string) (map[string]string, error)
	SetToolPolicy(ctx context.Context, p tenancy.Principal, workspaceID, tool, policy string) (string, error)
	PauseRound(ctx context.Context, workflowID string, as []workflows.Approval) ([]workflows.Approval, error)
	Approvals(ctx context.Context, p tenancy.Principal, workflowID string) ([]workflows.Approval, error)
	Approval(ctx context.Context, id string) (workflows.Approval, error)
	ApprovalWorkflow(ctx context.Context, approvalID string) (workflows.Workflow, error)
	PauseApprovals(ctx context.Context, pauseID string) ([]workflows.Approval, error)
	DecideApproval(ctx context.Context, id string, state workflows.ApprovalState, args []byte, reason, by string) (bool, error)
	ClaimResume(ctx context.Context, pauseID, hostID string) (bool, error)
	ExpiredApprovals(ctx context.Context, now time.Time) ([]workflows.Approval, error)
	UnresumedPauses(ctx context.Context) ([]string, error)
}

// DefaultApprovalTTL is how long a call waits for a person before it
// expires (the model is then told it did not run).
const DefaultApprovalTTL = 24 * time.Hour

// WithApprovals makes the workspaces' approval policies apply to their
// rounds: a call whose policy is ask pauses its round until a person
// decides or ttl (0: DefaultApprovalTTL) passes; every decision is
// recorded in rec's audit log.
func (s *Service) WithApprovals(st Approvals, rec audit.Recorder, ttl time.Duration) *Service {
	if ttl <= 0 {
		ttl = DefaultApprovalTTL
	}
	s.approvals, s.audit, s.approvalTTL = st, rec, ttl
	return s
}

// DefaultPolicy is a tool's policy where its workspace set none: ask for a
// side effect outside agenthost, auto for the rest.
func DefaultPolicy(t tools.Tool) agent.Policy {
	if t.External != "" {
		return agent.PolicyAsk
	}
	return agent.PolicyAuto
}

// policyGate is a round's view of its workspace's policies, read once when
// the round starts.
type policyGate map[string]string

func (g policyGate) Policy(_ context.Context, t tools.Tool) agent.Policy {
	if p := agent.Policy(g[t.Name]); p.Valid() {
		return p
	}
	return DefaultPolicy(t)
}

// refuseAsk is the gate of a round nobody can approve for (a background
// job's): what would wait for a person is refused.
type refuseAsk struct{ agent.Gate }

func (g refuseAsk) Policy(ctx context.Context, t tools.Tool) agent.Policy {
	if p := g.Gate.Policy(ctx, t); p != agent.PolicyAsk {
		return p
	}
	return agent.PolicyDeny
}

// gate is the round's approval gate; nil (every call runs) when approvals
// are not configured. Policies that cannot be read leave the defaults.
func (s *Service) gate(ctx context.Context, p tenancy.Principal, workspaceID string) agent.Gate {
	if s.approvals == nil {
		return nil
	}
	pol, err := s.approvals.ToolPolicies(ctx, p, workspaceID)
	if err != nil {
		s.logger.Warn("rounds: reading the approval policies; the defaults apply", "workspace", workspaceID, "err", err)
	}
	return policyGate(pol)
}

// Notifier tells a person of a tool call that waits for their approval
// (notifications.Service).
type Notifier interface {
	Notify(ctx context.Context, n notifications.Notification)
}

// WithNotifier makes the service tell the person when a round of theirs
// waits for their approval.
func (s *Service) WithNotifier(n Notifier) *Service {
	s.notify = n
	return s
}

// pause keeps a round that waits for approval: its asked calls become
// pending approvals (with the checkpoint), the workflow waits with no host,
// and an approvalRequested event per call tells the person. Nothing runs
// until a decision (on any host) or the expiry resumes it.
func (s *Service) pause(ctx context.Context, p tenancy.Principal, w workflows.Workflow, res agent.Result, stats workflows.Stats) {
	cp, err := json.Marshal(res.Paused)
	if err == nil && s.approvals == nil {
		err = errors.New("the round paused without approvals configured")
	}
	var as []workflows.Approval
	exp := time.Now().Add(s.approvalTTL).UTC()
	for _, c := range res.Paused.Calls {
		if c.Policy == agent.PolicyAsk {
			as = append(as, workflows.Approval{Round: w.CurrentRound, CallID: c.ID, Tool: c.Tool, External: c.External,
				Arguments: jsonArgs(c.Arguments), Reason: res.Paused.Reason(), Checkpoint: cp, ExpiresAt: exp})
		}
	}
	if err == nil {
		as, err = s.approvals.PauseRound(ctx, w.ID, as)
	}
	if _, uerr := s.wf.Update(ctx, p, w.ID, workflows.Update{Stats: stats}); uerr != nil {
		s.recordFailed("rounds: workflow statistics", w.ID, uerr)
	}
	if errors.Is(err, tenancy.ErrConflict) {
		// Stopped (or deleted) while the model was asking: nothing waits.
		s.logger.Info("rounds: a round that asked for approval ended meanwhile", "workflow", w.ID)
		return
	}
	if err != nil {
		s.log(ctx, p, w.ID, workflows.LogError, "The round could not wait for approval: "+err.Error(), 100)
		if _, ferr := s.wf.Fail(ctx, p, w.ID, "waiting for approval: "+err.Error()); ferr != nil {
			s.recordFailed("rounds: ending a round", w.ID, ferr)
		}
		return
	}
	for _, a := range as {
		d := workflows.ApprovalRequestedData{ApprovalID: a.ID, Round: a.Round, CallID: a.CallID, Tool: a.Tool, External: a.External,
			Arguments: a.Arguments, Reason: a.Reason, ExpiresAt: a.ExpiresAt}
		if _, err := s.wf.Append(ctx, p, w.ID, workflows.EventApprovalRequested, d); err != nil {
			s.recordFailed("rounds: approval event", w.ID, err)
		}
		s.log(ctx, p, w.ID, workflows.LogInfo, fmt.Sprintf("Waiting for approval of %s (until %s)", a.Tool, a.ExpiresAt.Format(time.RFC3339)), 50)
		if s.notify != nil {
			s.notify.Notify(ctx, notifications.Notification{TenantID: p.TenantID, UserID: p.UserID, WorkspaceID: w.WorkspaceID,
				Kind: notifications.Approval, SubjectID: a.ID, Status: "pending", Name: a.Tool, Detail: a.Reason, WorkflowID: w.ID})
		}
	}
}

// jsonArgs keeps a model's arguments as JSON, or as a JSON string when
// they are not JSON.
func jsonArgs(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// Decision is a person's answer to an approval request.
type Decision struct {
	// Approve runs the call; false denies it.
	Approve bool `json:"approve"`
	// Arguments, when set with Approve, replace the model's; they must
	// meet the tool's schema.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason is told to the model with a denial (and kept in the audit
	// log either way).
	Reason string `json:"reason,omitempty"`
}

// ErrNoApprovals: approvals are not configured on this host.
var ErrNoApprovals = errors.New("approvals are not configured")

// Approvals lists a workflow's approvals for a principal who may read it.
func (s *Service) Approvals(ctx context.Context, p tenancy.Principal, workflowID string) ([]workflows.Approval, error) {
	if s.approvals == nil {
		return nil, ErrNoApprovals
	}
	return s.approvals.Approvals(ctx, p, workflowID)
}

// Decide records a person's decision on a pending approval of their
// workflow, on whichever host receives it; when it was the pause's last
// pending approval, the round resumes here. Only the workflow's owner
// decides (a tenant admin reads but does not act for them); an approval
// decided already, expired or of a stopped workflow is ErrConflict;
// arguments that do not meet the tool's schema are ErrInvalid.
func (s *Service) Decide(ctx context.Context, p tenancy.Principal, workflowID, approvalID string, d Decision) (workflows.Approval, error) {
	if s.approvals == nil {
		return workflows.Approval{}, ErrNoApprovals
	}
	w, err := s.wf.Get(ctx, p, workflowID)
	if err != nil {
		return workflows.Approval{}, err
	}
	if w.UserID != p.UserID {
		return workflows.Approval{}, fmt.Errorf("%w: only the workflow's owner decides its approvals", tenancy.ErrForbidden)
	}
	a, err := s.approvals.Approval(ctx, approvalID)
	if err != nil {
		return a, err
	}
	if a.WorkflowID != w.ID {
		return workflows.Approval{}, fmt.Errorf("%w: approval %q", tenancy.ErrNotFound, approvalID)
	}
	if a.State != workflows.ApprovalPending {
		return a, fmt.Errorf("%w: the approval is %s already", tenancy.ErrConflict, a.State)
	}
	if w.Status != workflows.StatusRunning || w.Outcome != workflows.OutcomeWaitingForApproval {
		return a, fmt.Errorf("%w: the workflow is %s, not waiting for approval", tenancy.ErrConflict, w.Status)
	}
	state, args := workflows.ApprovalDenied, []byte(nil)
	if d.Approve {
		state = workflows.ApprovalApproved
		if len(d.Arguments) > 0 {
			if err := s.checkArguments(ctx, p, w.WorkspaceID, a.Tool, d.Arguments); err != nil {
				return a, err
			}
			args = d.Arguments
		}
	}
	if len(d.Reason) > 2000 {
		return a, fmt.Errorf("%w: the reason is longer than 2000 bytes", tenancy.ErrInvalid)
	}
	ok, err := s.approvals.DecideApproval(ctx, a.ID, state, args, d.Reason, p.UserID)
	if err != nil {
		return a, err
	}
	if !ok {
		return a, fmt.Errorf("%w: the approval was decided meanwhile", tenancy.ErrConflict)
	}
	s.decided(ctx, p, w, a, state, args, d.Reason, p.UserID)
	s.tryResume(ctx, a.PauseID)
	return s.approvals.Approval(ctx, a.ID)
}

// checkArguments validates edited arguments against the tool's schema as
// the workspace's tool set offers it.
func (s *Service) checkArguments(ctx context.Context, p tenancy.Principal, workspaceID, tool string, args json.RawMessage) error {
	set, err := s.roundSet(ctx, p, workspaceID)
	if err != nil {
		return err
	}
	t, ok := set.Lookup(tool)
	if !ok {
		return fmt.Errorf("%w: the workspace offers no tool %q any more", tenancy.ErrConflict, tool)
	}
	sc, err := schema.Compile("approval:"+tool, t.Parameters)
	if err != nil {
		return fmt.Errorf("the schema of tool %s: %w", tool, err)
	}
	if err := sc.ValidateJSON(args); err != nil {
		return fmt.Errorf("%w: arguments: %v", tenancy.ErrInvalid, err)
	}
	return nil
}

// roundSet is the tool set a round of the workspace gets.
func (s *Service) roundSet(ctx context.Context, p tenancy.Principal, workspaceID string) (*tools.Set, error) {
	setName, extra, err := s.toolSets.WorkspaceTools(ctx, p, workspaceID)
	if err != nil {
		return nil, err
	}
	set, _, err := s.registry.WorkspaceSet(ctx, p, workspaceID, setName, extra...)
	return set, err
}

// decided records a decision in the audit log and the event stream.
func (s *Service) decided(ctx context.Context, p tenancy.Principal, w workflows.Workflow, a workflows.Approval, state workflows.ApprovalState,
	args []byte, reason, by string) {
	action := map[workflows.ApprovalState]string{workflows.ApprovalApproved: audit.ApprovalApproved,
		workflows.ApprovalDenied: audit.ApprovalDenied, workflows.ApprovalExpired: audit.ApprovalExpired}[state]
	detail := map[string]any{"workflow": w.ID, "tool": a.Tool, "external": a.External, "call": a.CallID,
		"arguments": audit.Summarize(a.Arguments), "edited": len(args) > 0, "reason": audit.Clip(reason, 300)}
	if len(args) > 0 {
		detail["editedArguments"] = audit.Summarize(args)
	}
	e := audit.Entry{TenantID: w.TenantID, Action: action, TargetType: "approval", TargetID: a.ID, WorkspaceID: w.WorkspaceID,
		Detail: audit.Detail(detail)}
	if by == "" {
		e.Actor = audit.Actor{Kind: audit.ActorSystem}
	}
	if err := audit.Record(ctx, s.audit, e); err != nil {
		s.logger.Error("rounds: recording an approval decision in the audit log", "approval", a.ID, "err", err)
	}
	ev := workflows.ApprovalDecidedData{ApprovalID: a.ID, CallID: a.CallID, Tool: a.Tool, Decision: string(state), Edited: len(args) > 0,
		Reason: reason, DecidedBy: by}
	if len(args) > 0 {
		ev.Arguments = args
	}
	if _, err := s.wf.Append(ctx, p, w.ID, workflows.EventApprovalDecided, ev); err != nil {
		s.recordFailed("rounds: approval event", w.ID, err)
	}
}

// tryResume resumes a pause on this host if all its approvals are decided
// and no other host claimed it first.
func (s *Service) tryResume(ctx context.Context, pauseID string) {
	if s.agent == nil {
		return // no model here: a host with one resumes it (its sweep, or a later decision there)
	}
	host := ""
	if s.hosts != nil {
		host = s.hosts.HostID()
	}
	ok, err := s.approvals.ClaimResume(ctx, pauseID, host)
	if err != nil || !ok {
		if err != nil {
			s.logger.Warn("rounds: claiming a paused round", "pause", pauseID, "err", err)
		}
		return
	}
	as, err := s.approvals.PauseApprovals(ctx, pauseID)
	if err != nil || len(as) == 0 {
		s.logger.Error("rounds: reading a paused round", "pause", pauseID, "err", err)
		return
	}
	w, err := s.approvals.ApprovalWorkflow(ctx, as[0].ID)
	if err != nil {
		s.logger.Error("rounds: reading a paused round's workflow", "pause", pauseID, "err", err)
		return
	}
	p := s.owner(ctx, w)
	var cp agent.Checkpoint
	if err := json.Unmarshal(as[0].Checkpoint, &cp); err != nil {
		s.failEarly(ctx, p, w, fmt.Errorf("the paused round's checkpoint is unreadable: %w", err))
		return
	}
	decisions := map[string]agent.Decision{}
	for _, a := range as {
		switch a.State {
		case workflows.ApprovalApproved:
			decisions[a.CallID] = agent.Decision{Verdict: agent.Approved, Arguments: string(a.DecidedArguments)}
		case workflows.ApprovalDenied:
			decisions[a.CallID] = agent.Decision{Verdict: agent.Denied, Reason: a.DecisionReason}
		default:
			decisions[a.CallID] = agent.Decision{Verdict: agent.Expired}
		}
	}
	set, err := s.roundSet(ctx, p, w.WorkspaceID)
	if err != nil {
		s.failEarly(ctx, p, w, fmt.Errorf("resuming after approval: %w", err))
		return
	}
	prompt := ""
	for _, m := range cp.Messages {
		if m.Role == "user" {
			prompt = m.Content
		}
	}
	// The answer goes under the prompt the paused round answers.
	promptID := ""
	if req, _, err := s.roundPrompt(ctx, p, w); err == nil {
		promptID = req.ID
	}
	s.log(ctx, p, w.ID, workflows.LogInfo, "Approvals decided: the round goes on", 50)
	s.launch(context.WithoutCancel(ctx), p, w, StartRequest{Prompt: prompt, promptID: promptID, resume: &agent.Resume{Checkpoint: cp, Decisions: decisions}}, nil, nil, set, nil)
}

// ExpireApprovals expires the pending approvals whose time ran out and
// resumes their rounds (the model learns the calls did not run), and
// resumes rounds whose approvals were all decided but that no host
// claimed; every host runs it periodically, and each approval expires
// once. It returns how many expired here.
func (s *Service) ExpireApprovals(ctx context.Context) (int, error) {
	if s.approvals == nil {
		return 0, nil
	}
	as, err := s.approvals.ExpiredApprovals(ctx, time.Now())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range as {
		ok, err := s.approvals.DecideApproval(ctx, a.ID, workflows.ApprovalExpired, nil, "", "")
		if err != nil {
			return n, err
		}
		if !ok {
			continue // decided meanwhile
		}
		n++
		w, err := s.approvals.ApprovalWorkflow(ctx, a.ID)
		if err != nil {
			s.logger.Warn("rounds: an expired approval's workflow", "approval", a.ID, "err", err)
			continue
		}
		s.decided(ctx, s.owner(ctx, w), w, a, workflows.ApprovalExpired, nil, "", "")
		s.tryResume(ctx, a.PauseID)
	}
	// Pauses decided but never resumed: the host that recorded the last
	// decision died before it claimed the round.
	if s.agent == nil {
		return n, nil
	}
	pauses, err := s.approvals.UnresumedPauses(ctx)
	if err != nil {
		return n, err
	}
	for _, id := range pauses {
		s.tryResume(ctx, id)
	}
	return n, nil
}

// ToolPolicy is one tool of a workspace's set with its approval policy.
type ToolPolicy struct {
	Tool string `json:"tool"`
	// External is the tool's declared side effect; empty for none.
	External string `json:"external,omitempty"`
	ReadOnly bool   `json:"readOnly"`
	// Policy is what applies: the workspace's own, or the default.
	Policy agent.Policy `json:"policy"`
	// Default is the policy without the workspace's own.
	Default agent.Policy `json:"default"`
	// Set: the workspace set Policy itself.
	Set bool `json:"set"`
}

// ToolPolicies lists the workspace's tools with their approval policies
// (any member reads them).
func (s *Service) ToolPolicies(ctx context.Context, p tenancy.Principal, workspaceID string) ([]ToolPolicy, error) {
	if s.approvals == nil {
		return nil, ErrNoApprovals
	}
	pol, err := s.approvals.ToolPolicies(ctx, p, workspaceID)
	if err != nil {
		return nil, err
	}
	set, err := s.roundSet(ctx, p, workspaceID)
	if err != nil {
		return nil, err
	}
	out := []ToolPolicy{}
	for _, t := range set.Tools() {
		tp := ToolPolicy{Tool: t.Name, External: t.External, ReadOnly: t.ReadOnly, Default: DefaultPolicy(t)}
		tp.Policy = policyGate(pol).Policy(ctx, t)
		_, tp.Set = pol[t.Name]
		out = append(out, tp)
	}
	return out, nil
}

// SetToolPolicy sets a tool's approval policy in a workspace ("" returns
// it to the default) and records the change in the audit log: the
// workspace's managers and the tenant's admin.
func (s *Service) SetToolPolicy(ctx context.Context, p tenancy.Principal, workspaceID, tool string, policy agent.Policy) error {
	if s.approvals == nil {
		return ErrNoApprovals
	}
	if policy != "" && !policy.Valid() {
		return fmt.Errorf("%w: policy %q is not auto, ask or deny", tenancy.ErrInvalid, policy)
	}
	was, err := s.approvals.SetToolPolicy(ctx, p, workspaceID, tool, string(policy))
	if err != nil {
		return err
	}
	e := audit.Entry{TenantID: p.TenantID, Action: audit.ToolPolicyChanged, TargetType: "tool", TargetID: tool, WorkspaceID: workspaceID,
		Detail: audit.Detail(map[string]any{"tool": tool, "from": was, "to": string(policy)})}
	if err := audit.Record(ctx, s.audit, e); err != nil {
		s.logger.Error("rounds: recording a policy change in the audit log", "tool", tool, "err", err)
	}
	return nil
}

// ToolPolicyOf is the policy that applies to a workspace's tool
// ("auto", "ask", "deny"): the MCP endpoint asks it of direct calls.
// Without approvals configured every call runs.
func (s *Service) ToolPolicyOf(ctx context.Context, p tenancy.Principal, workspaceID string, t tools.Tool) (string, error) {
	if s.approvals == nil {
		return string(agent.PolicyAuto), nil
	}
	pol, err := s.approvals.ToolPolicies(ctx, p, workspaceID)
	if err != nil {
		return "", err
	}
	return string(policyGate(pol).Policy(ctx, t)), nil
}
