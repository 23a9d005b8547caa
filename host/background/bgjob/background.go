package bgjob

import (
	"time"

	"github.com/agenthost/agenthost/host/money"
)

// Status is where a job is.
type Status string

// The states of a background job.
const (
	Queued    Status = "queued"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// Terminal reports whether the job has ended.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Job is a background job as its users see it.
type Job struct {
	ID          string `json:"id"`
	TenantID    string `json:"-"`
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	// OriginWorkflowID is the workflow that started the job (told when it
	// ends); WorkflowID the one its agent runs in.
	OriginWorkflowID string   `json:"originWorkflowId,omitempty"`
	WorkflowID       string   `json:"workflowId,omitempty"`
	Description      string   `json:"description"`
	Subtasks         []string `json:"subtasks"`
	// MaxCost caps what the job's run may spend; nil: the host's budget.
	MaxCost       *money.Amount `json:"-"`
	Status        Status        `json:"status"`
	Progress      float64       `json:"progress"`
	ResultSummary string        `json:"resultSummary,omitempty"`
	Error         string        `json:"error,omitempty"`
	Attempts      int           `json:"attempts"`
	MaxRetries    int           `json:"maxRetries"`
	QueueJobID    int64         `json:"-"`
	CreatedAt     time.Time     `json:"createdAt"`
	StartedAt     *time.Time    `json:"startedAt,omitempty"`
	CompletedAt   *time.Time    `json:"completedAt,omitempty"`
}

// Update changes a job; nil fields stay.
type Update struct {
	Status        *Status
	Progress      *float64
	ResultSummary *string
	Error         *string
	WorkflowID    *string
	QueueJobID    *int64
	// Attempt counts an attempt and stamps started_at if unset.
	Attempt     bool
	CompletedAt *time.Time
}
