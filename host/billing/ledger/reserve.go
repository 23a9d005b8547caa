package ledger

import (
	"time"

	"github.com/agenthost/agenthost/host/money"
)

// Reservation is an estimate held against a tenant's limits for one call in
// flight, until the call's usage record settles it or the call fails.
type Reservation struct {
	TenantID  string
	Amount    money.Amount
	Purpose   string
	CreatedAt time.Time
	// ExpiresAt ends the hold of a reservation nobody settled (its process
	// died): the limits count it no longer.
	ExpiresAt time.Time
}
