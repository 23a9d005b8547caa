package billing

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/dbwait"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/toolcall"
)

// Defaults of BudgetConfig.
const (
	// DefaultOverdraft is about one agent round's estimate on a mid-priced
	// model: enough that a tenant's last francs stay usable, small next to
	// any credit worth setting.
	DefaultOverdraft = 10 * money.Rappen
	// DefaultReservationTTL bounds how long a model call's reservation
	// holds when its process dies before settling it.
	DefaultReservationTTL = 15 * time.Minute
	// DefaultToolTimeout estimates a tool call whose plugin's time limit
	// is unknown: the runtime's default time limit.
	DefaultToolTimeout = 30 * time.Second
)

// BudgetConfig says how the meter holds calls' estimates against tenants'
// limits. Zero fields take the defaults; a negative Overdraft is none.
type BudgetConfig struct {
	// Overdraft is how far a tenant's spending may pass a limit: a call is
	// admitted while spending plus the estimates of the calls in flight
	// plus its own estimate stays within limit + Overdraft. It bounds the
	// overspend of any number of concurrent calls, save calls that cost
	// more than their estimates (see docs/billing.md).
	Overdraft money.Amount
	// ReservationTTL is how long a model call's reservation holds at most;
	// a tool call's holds for its plugin's time limit plus this.
	ReservationTTL time.Duration
	// ToolTimeout estimates tool calls whose plugin's time limit the meter
	// cannot learn.
	ToolTimeout time.Duration
}

func (c BudgetConfig) withDefaults() BudgetConfig {
	switch {
	case c.Overdraft == 0:
		c.Overdraft = DefaultOverdraft
	case c.Overdraft < 0:
		c.Overdraft = 0
	}
	if c.ReservationTTL <= 0 {
		c.ReservationTTL = DefaultReservationTTL
	}
	if c.ToolTimeout <= 0 {
		c.ToolTimeout = DefaultToolTimeout
	}
	return c
}

// WithBudget sets how the meter holds estimates (defaults otherwise).
func (m *Meter) WithBudget(c BudgetConfig) *Meter {
	m.budget = c.withDefaults()
	return m
}

// Overdraft is the overdraft the meter admits calls with.
func (m *Meter) Overdraft() money.Amount { return m.budget.Overdraft }

// Hold is one call's reservation, used by one goroutine. After a Settle
// that succeeded, Settle and Release are no-ops, so a deferred Release
// after Settle is safe; a failed Settle leaves the hold to Release.
type Hold struct {
	m    *Meter
	id   string // "" when nothing is held (the tenant has no limits)
	a    llm.Attribution
	done atomic.Bool
}

// Settle implements llm.Hold: the call's usage is recorded and the
// reservation deleted in one transaction. It records even when the hold
// expired meanwhile: the money was spent.
func (h *Hold) Settle(ctx context.Context, u modeluse.Usage) error {
	if h.done.Load() {
		return nil
	}
	a := h.a
	err := h.m.insertUsage(context.WithoutCancel(ctx), ledger.Record{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID,
		UserID: a.UserID, WorkflowID: a.WorkflowID, Purpose: a.Purpose, Usage: u, CreatedAt: h.m.now(),
		PriceVersion: h.m.prices.Version(), ReservationID: h.id})
	if err == nil {
		// A failed record leaves the hold to Release, which deletes it.
		h.done.Store(true)
	}
	return err
}

// Release implements llm.Hold: the call recorded nothing, its estimate is
// given back. A failed delete is logged; the reservation expires anyway.
func (h *Hold) Release(ctx context.Context) {
	if !h.done.CompareAndSwap(false, true) || h.id == "" {
		return
	}
	if err := h.m.store.ReleaseReservation(context.WithoutCancel(ctx), h.id); err != nil {
		h.m.log.Warn("billing: reservation not released; it holds until it expires", "tenant", h.a.TenantID, "err", err)
	}
}

// Reserve implements llm.Reserver: the call's estimate is held against
// the tenant's limits, or the call is refused (an error wrapping
// ErrOverLimit) when the estimate does not fit (Budget.Admits). A call
// without a tenant is left to Record, which refuses to record it.
func (m *Meter) Reserve(ctx context.Context, op modeluse.Operation, estimate money.Amount) (llm.Hold, error) {
	a := llm.AttributionFrom(ctx)
	if a.TenantID == "" {
		return unattributed{m}, nil
	}
	h, err := m.reserve(ctx, a, estimate, m.budget.ReservationTTL)
	if err != nil {
		return nil, reserveError(err, string(op)+" call")
	}
	return h, nil
}

// unattributed is the hold of a call without a tenant: nothing is held,
// and Record refuses its usage.
type unattributed struct{ m *Meter }

func (u unattributed) Settle(ctx context.Context, us modeluse.Usage) error {
	return u.m.Record(ctx, us)
}
func (unattributed) Release(context.Context) {}

func (m *Meter) reserve(ctx context.Context, a llm.Attribution, estimate money.Amount, ttl time.Duration) (*Hold, error) {
	overdraft := m.budget.Overdraft
	var r ledger.Reservation
	// A round's call waits out an unavailable database here too: refused,
	// it would fail the round. Each try's hold runs from its own time.
	id, err := dbwait.Do(ctx, m.transient, m.log, "billing: reserve", a.WorkflowID, func() (string, error) {
		now := m.now()
		r = ledger.Reservation{TenantID: a.TenantID, Amount: max(estimate, 0), Purpose: a.Purpose, CreatedAt: now, ExpiresAt: now.Add(ttl)}
		return m.store.Reserve(ctx, r, func(b ledger.Budget) error { return b.Admits(r.Amount, overdraft) })
	})
	if err != nil {
		return nil, err
	}
	return &Hold{m: m, id: id, a: a}, nil
}

// reserveError is a refusal as it is (it names the limit and the sums), or
// the failure to read the budget, which refuses too: spending without
// knowing the balance is what limits exist to prevent.
func reserveError(err error, what string) error {
	if errors.Is(err, ledger.ErrOverLimit) {
		return err
	}
	return fmt.Errorf("billing: %s: holding its estimate against the tenant's budget: %w", what, err)
}

// ReserveCompute holds the estimate of a plugin run of at most timeout
// (its time limit, priced per hour) against the caller's limits, attributed
// like RecordCompute. The hold is nil, and nothing is checked, when plugin
// time is free or the run has no caller: such runs bill nobody. Settle it
// with SettleCompute.
func (m *Meter) ReserveCompute(ctx context.Context, tool string, timeout time.Duration) (*Hold, error) {
	if m.prices.PluginPerHour <= 0 {
		return nil, nil
	}
	a, ok := computeAttribution(ctx)
	if !ok {
		return nil, nil
	}
	if timeout <= 0 {
		timeout = m.budget.ToolTimeout
	}
	a.Purpose = "tool:" + tool
	h, err := m.reserve(ctx, a, m.prices.computeCost(timeout), timeout+m.budget.ReservationTTL)
	if err != nil {
		return nil, reserveError(err, "tool "+tool)
	}
	return h, nil
}

// SettleCompute records the plugin run the hold was for and ends the hold;
// a nil hold records as RecordCompute does.
func (m *Meter) SettleCompute(ctx context.Context, h *Hold, plugin, tool string, d time.Duration) error {
	ctx = context.WithoutCancel(ctx)
	if h == nil {
		return m.recordCompute(ctx, plugin, tool, d)
	}
	if d <= 0 || plugin == "" {
		h.Release(ctx)
		return nil
	}
	return h.Settle(ctx, m.computeUsage(plugin, d))
}

// HoldCompute is ReserveCompute for callers that know the meter by an
// interface of their own (the MCP client, extractors): the returned func
// settles the hold with the run's plugin and duration (SettleCompute). An
// error is a refusal: the run must not start.
func (m *Meter) HoldCompute(ctx context.Context, tool string, limit time.Duration) (func(ctx context.Context, plugin string, d time.Duration) error, error) {
	h, err := m.ReserveCompute(ctx, tool, limit)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, plugin string, d time.Duration) error {
		if limit > 0 {
			d = min(d, limit) // see meteredRunner.Call
		}
		return m.SettleCompute(ctx, h, plugin, tool, d)
	}, nil
}

// computeAttribution is whom a plugin run is billed to: the model
// attribution of ctx, else the tool call's caller.
func computeAttribution(ctx context.Context) (llm.Attribution, bool) {
	if a := llm.AttributionFrom(ctx); a.TenantID != "" {
		return a, true
	}
	c, ok := toolcall.From(ctx)
	if !ok || c.Principal.TenantID == "" {
		return llm.Attribution{}, false
	}
	return llm.Attribution{TenantID: c.Principal.TenantID, WorkspaceID: c.WorkspaceID, UserID: c.Principal.UserID, WorkflowID: c.WorkflowID}, true
}
