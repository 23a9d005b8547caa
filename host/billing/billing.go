// Package billing meters what agenthost spends on a tenant's behalf: every
// model call, embedding batch, transcription, speech synthesis and plugin
// run is one usage record (a transaction), priced in CHF from the price
// table in force when it happened and attributed to the tenant, workspace,
// user and workflow that caused it. Before each billable call its estimated
// cost is held against the tenant's credit limit and monthly budget
// (limits.go, reserve.go), so that concurrent calls pass a limit by at most
// the overdraft; reports sum the records by any of their attributions
// (report.go).
//
// Amounts are integer nano-francs (package money): sums are exact.
package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/dbwait"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Store keeps usage records, the price versions they refer to and the
// tenants' limits.
type Store interface {
	// InsertUsage writes the record and adds its cost to the tenant's
	// running sums, in one transaction.
	InsertUsage(ctx context.Context, r ledger.Record) error
	UsageTotals(ctx context.Context, p tenancy.Principal, workflowID string) (ledger.Totals, error)
	// SavePriceVersion keeps a price table under its version (a digest);
	// saving the same version again is a no-op.
	SavePriceVersion(ctx context.Context, version string, body []byte) error
	// TenantBudget returns the tenant's limits and what it has spent, in
	// total and in the calendar month (UTC) of now.
	TenantBudget(ctx context.Context, tenantID string, now time.Time) (ledger.Budget, error)
	// Reserve holds r.Amount against the tenant's limits if admit accepts
	// the tenant's budget as it is with every other unexpired reservation
	// (read and written under a per-tenant lock that holds across hosts),
	// and returns the reservation's id; admit's error is returned as is.
	// A tenant without limits gets no reservation: the id is empty.
	Reserve(ctx context.Context, r ledger.Reservation, admit func(ledger.Budget) error) (string, error)
	// ReleaseReservation deletes a reservation whose call recorded
	// nothing; an unknown or expired one is no error.
	ReleaseReservation(ctx context.Context, id string) error
}

// ErrUnattributed: a call carried no tenant, so nobody could be billed.
var ErrUnattributed = errors.New("billing: the call carries no tenant (llm.WithAttribution)")

// Meter is the llm.Meter that writes every call's usage to the store, and
// the llm.Reserver that holds each call's estimate against its tenant's
// limits, refusing calls that do not fit (reserve.go). It also meters and
// holds plugin runs (MeteredRunner, HoldCompute).
type Meter struct {
	store  Store
	prices Prices
	budget BudgetConfig
	log    *slog.Logger
	now    func() time.Time
	// transient says which store errors pass once the database is back
	// (WithRetry); nil: none is retried.
	transient func(error) bool
}

// WithRetry sets which store errors say the database is unavailable
// (store.IsUnavailable): a usage record made under a context marked by
// dbwait.WithRetries (a round's model and tool calls) then waits for the
// database instead of failing the call, so the round's cost is recorded.
func (m *Meter) WithRetry(transient func(error) bool) *Meter {
	m.transient = transient
	return m
}

// insertUsage writes r, waiting out an unavailable database for a round.
func (m *Meter) insertUsage(ctx context.Context, r ledger.Record) error {
	_, err := dbwait.Do(ctx, m.transient, m.log, "billing: usage", r.WorkflowID, func() (struct{}, error) {
		return struct{}{}, m.store.InsertUsage(ctx, r)
	})
	return err
}

// NewMeter returns a meter over the store that prices with prices (its
// version is written with every record). Call Prices.Save once at start-up
// so the version's body is kept. logger may be nil.
func NewMeter(store Store, prices Prices, logger *slog.Logger) *Meter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Meter{store: store, prices: prices, budget: BudgetConfig{}.withDefaults(), log: logger,
		now: func() time.Time { return time.Now().UTC() }}
}

// Record implements llm.Meter. A call without a tenant in its context is
// refused (the caller sees llm.ErrMeter) rather than recorded as nobody's.
func (m *Meter) Record(ctx context.Context, u modeluse.Usage) error {
	a := llm.AttributionFrom(ctx)
	if a.TenantID == "" {
		return fmt.Errorf("%w: %s call to %s", ErrUnattributed, u.Operation, u.Model)
	}
	return m.insertUsage(ctx, ledger.Record{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, UserID: a.UserID,
		WorkflowID: a.WorkflowID, Purpose: a.Purpose, Usage: u, CreatedAt: m.now(), PriceVersion: m.prices.Version()})
}
