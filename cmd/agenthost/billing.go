package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/store"
)

// pluginPriceEnv sets -plugin-chf-per-hour for serve and worker alike, so
// that every host bills with the same price table (one version).
const pluginPriceEnv = "AGENTHOST_PLUGIN_CHF_PER_HOUR"

// overdraftEnv sets -budget-overdraft-chf; hosts sharing a database should
// agree on it, as they do on prices.
const overdraftEnv = "AGENTHOST_BUDGET_OVERDRAFT_CHF"

type billingFlags struct{ pluginPerHour, overdraft *string }

func addBillingFlags(fs *flag.FlagSet) billingFlags {
	return billingFlags{
		pluginPerHour: fs.String("plugin-chf-per-hour", envOr(pluginPriceEnv, "0"),
			"price of plugin compute time in CHF per hour of a tool call's wall time (decimal, e.g. 0.36); every tool call is a transaction"),
		overdraft: fs.String("budget-overdraft-chf", envOr(overdraftEnv, billing.DefaultOverdraft.String()),
			"how far a tenant's spending may pass its credit or monthly limit (decimal CHF): each billable call holds its estimate "+
				"and is admitted while spending, the estimates in flight and its own stay within limit plus this, however many run at once"),
	}
}

// budget is how the meter holds estimates against tenants' limits.
func (bf billingFlags) budget() (billing.BudgetConfig, error) {
	od, err := money.Parse(*bf.overdraft)
	if err != nil || od < 0 {
		return billing.BudgetConfig{}, fmt.Errorf("-budget-overdraft-chf: %q is not a non-negative decimal amount", *bf.overdraft)
	}
	if od == 0 {
		od = -1 // BudgetConfig's zero is the default; the operator asked for none
	}
	return billing.BudgetConfig{Overdraft: od}, nil
}

// prices is the price table this host bills with: the models' prices and
// the plugin compute price. A malformed price is refused before anything
// is opened.
func (bf billingFlags) prices(cfg llm.Config) (billing.Prices, error) {
	perHour, err := money.Parse(*bf.pluginPerHour)
	if err != nil || perHour < 0 {
		return billing.Prices{}, fmt.Errorf("-plugin-chf-per-hour: %q is not a non-negative decimal amount", *bf.pluginPerHour)
	}
	return billing.Prices{Models: cfg.Prices(), PluginPerHour: perHour}, nil
}

// openModels returns the client of the model configuration (file and
// environment, see llm.LoadConfig) and the meter that records every call
// (and every plugin run) into the usage records and holds each call's
// estimate against its tenant's limits, refusing calls that do not fit. The price table's version is saved first.
func openModels(ctx context.Context, cfg llm.Config, prices billing.Prices, budget billing.BudgetConfig, db *store.DB, logger *slog.Logger) (*llm.Client, *billing.Meter, error) {
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
