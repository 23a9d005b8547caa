package workflows

import (
	"encoding/json"
	"time"
)

// ApprovalState is where a tool call that needs a person's approval stands.
type ApprovalState string

// The approval states: pending until a person approves or denies it, or
// until it expires.
const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
)

// OutcomeWaitingForApproval is the Outcome of a running workflow whose
// round waits for approvals: no host runs it (its round carries no host),
// and the decision, on any host, resumes it.
const OutcomeWaitingForApproval = "waitingForApproval"

// Approval is one tool call of a paused round that waits for (or got) a
// person's decision (docs/agent.md#approval-policy).
type Approval struct {
	ID         string `json:"id"`
	TenantID   string `json:"-"`
	WorkflowID string `json:"workflowId"`
	// PauseID groups the calls of one paused round: the round resumes
	// when all of them are decided.
	PauseID  string `json:"pauseId"`
	Round    int    `json:"round"`
	CallID   string `json:"callId"`
	Tool     string `json:"tool"`
	External string `json:"external,omitempty"`
	// Arguments are the model's (JSON).
	Arguments json.RawMessage `json:"arguments"`
	// Reason is what the model said before asking for the call.
	Reason string        `json:"reason,omitempty"`
	State  ApprovalState `json:"state"`
	// DecidedArguments are a person's edit of the arguments, when they
	// edited them.
	DecidedArguments json.RawMessage `json:"decidedArguments,omitempty"`
	DecisionReason   string          `json:"decisionReason,omitempty"`
	DecidedBy        string          `json:"decidedBy,omitempty"`
	// Checkpoint is the paused run (agent.Checkpoint as JSON); only the
	// host that resumes reads it.
	Checkpoint json.RawMessage `json:"-"`
	CreatedAt  time.Time       `json:"createdAt"`
	ExpiresAt  time.Time       `json:"expiresAt"`
	DecidedAt  *time.Time      `json:"decidedAt,omitempty"`
}
