package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/workflows"
)

// The services below are built by New and, the same way, by the test
// fixtures that need a few of them without a whole server (host/worldtest):
// their wiring is written once, here.

// NewWorkflows builds the workflow service over db and its live broker.
// Events appended by other hosts sharing PostgreSQL (a stop among them)
// are announced by LISTEN/NOTIFY within milliseconds; the broker's
// periodic read of the heads delivers those whose announcement was lost
// (the listening connection dropped) within its interval. A round's
// writes wait out a database restart instead of losing events or its end
// (host/workflows/retry.go). Delivering other hosts' events needs the
// store's event listener running (Run starts it).
func NewWorkflows(db *store.DB, logger *slog.Logger) (*workflows.Service, *workflows.Broker) {
	cfg := workflows.BrokerConfig{Logger: logger, Announcer: db}
	if db.Dialect() == store.Postgres {
		cfg.Interval = 250 * time.Millisecond
	}
	broker := workflows.NewBroker(db, cfg)
	return workflows.NewService(db, broker, logger).WithRetry(store.IsUnavailable), broker
}

// OpenModels saves the price table and builds the model client of cfg,
// metered into db: every call is a transaction priced by prices, refused
// beyond the tenants' limits (budget), its record retried over a database
// restart.
func OpenModels(ctx context.Context, cfg llm.Config, prices billing.Prices, budget billing.BudgetConfig, db *store.DB, logger *slog.Logger) (*llm.Client, *billing.Meter, error) {
	if err := prices.Save(ctx, db); err != nil {
		return nil, nil, err
	}
	meter := billing.NewMeter(db, prices, logger).WithBudget(budget).WithRetry(store.IsUnavailable)
	client, err := llm.New(cfg, meter, logger)
	if err != nil {
		return nil, nil, err
	}
	return client, meter, nil
}
