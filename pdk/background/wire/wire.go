// Package wire holds the request and response documents of capability
// "background", shared by the host and the PDK so they cannot drift.
package wire

// StartRequest starts a background job in the caller's workspace; it
// reports to the caller's workflow when it ends.
type StartRequest struct {
	Description string   `json:"description"`
	Subtasks    []string `json:"subtasks,omitempty"`
	// MaxCostCHF caps the job's spending, a decimal amount ("0.50").
	MaxCostCHF string `json:"maxCostCHF,omitempty"`
}

// StatusRequest asks for a job's state.
type StatusRequest struct {
	JobID string `json:"jobId"`
}

// Job is a job's state as plugins see it.
type Job struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	Description   string  `json:"description"`
	Progress      float64 `json:"progress"`
	ResultSummary string  `json:"resultSummary,omitempty"`
	Error         string  `json:"error,omitempty"`
	WorkflowID    string  `json:"workflowId,omitempty"`
}
