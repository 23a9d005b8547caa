package ledger

import (
	"time"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// Record is one metered call: a transaction.
type Record struct {
	ID          string         `json:"id"`
	TenantID    string         `json:"tenantId"`
	WorkspaceID string         `json:"workspaceId,omitempty"`
	UserID      string         `json:"userId,omitempty"`
	WorkflowID  string         `json:"workflowId,omitempty"`
	Purpose     string         `json:"purpose,omitempty"`
	Usage       modeluse.Usage `json:"usage"`
	CreatedAt   time.Time      `json:"createdAt"`
	Duration    time.Duration  `json:"-"`
	// PriceVersion names the price table the cost was computed with.
	PriceVersion string `json:"priceVersion,omitempty"`
	// ReservationID names the reservation the record settles: it is
	// deleted in the record's transaction, so the estimate and the cost
	// are never both counted, nor neither.
	ReservationID string `json:"-"`
}

// Totals sums records.
type Totals struct {
	Calls            int          `json:"calls"`
	PromptTokens     int64        `json:"promptTokens"`
	CompletionTokens int64        `json:"completionTokens"`
	Cost             money.Amount `json:"-"`
}
