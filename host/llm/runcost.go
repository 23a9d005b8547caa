package llm

import (
	"context"
	"sync"

	"github.com/agenthost/agenthost/host/money"
)

// RunCost tallies what one agent run of a workflow has spent: the
// workflow's cost before the run, the loop's own model calls, and the
// model calls its tools make through the model and images capabilities.
// The agent loop creates it and carries it in the context of everything
// the run calls (WithRunCost), so the loop, before each model call, and a
// capability, before each call it makes for a tool, judge the workflow's
// budget by the same figure, and a tool's spending counts at once rather
// than when the run ends. It is safe for concurrent use (read-only tools of
// a round run in parallel).
//
// It is a tally, not a record: the loop's own cost reaches the workflow's
// statistics when the run ends, a tool's at once (Capabilities.account);
// each is added here exactly once.
type RunCost struct {
	mu    sync.Mutex
	spent money.Amount
}

// NewRunCost starts a tally at what the workflow spent before the run.
func NewRunCost(before money.Amount) *RunCost { return &RunCost{spent: before} }

// Add counts a call's cost.
func (c *RunCost) Add(cost money.Amount) {
	c.mu.Lock()
	c.spent += cost
	c.mu.Unlock()
}

// Spent is the workflow's spending so far: before the run plus everything
// added since.
func (c *RunCost) Spent() money.Amount {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}

type runCostKey struct{}

// WithRunCost carries a run's tally in ctx.
func WithRunCost(ctx context.Context, c *RunCost) context.Context {
	return context.WithValue(ctx, runCostKey{}, c)
}

// RunCostFrom returns the tally of the run ctx belongs to, if any (a tool
// called directly through the API runs outside any agent run).
func RunCostFrom(ctx context.Context) (*RunCost, bool) {
	c, ok := ctx.Value(runCostKey{}).(*RunCost)
	return c, ok && c != nil
}
