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

type billingFlags struct{ pluginPerHour *string }

func addBillingFlags(fs *flag.FlagSet) billingFlags {
	return billingFlags{pluginPerHour: fs.String("plugin-chf-per-hour", envOr(pluginPriceEnv, "0"),
		"price of plugin compute time in CHF per hour of a tool call's wall time (decimal, e.g. 0.36); every tool call is a transaction")}
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
// (and every plugin run) into the usage records and refuses calls of
// tenants over their limits. The price table's version is saved first.
func openModels(ctx context.Context, cfg llm.Config, prices billing.Prices, db *store.DB, logger *slog.Logger) (*llm.Client, *billing.Meter, error) {
	if err := prices.Save(ctx, db); err != nil {
		return nil, nil, err
	}
	meter := billing.NewMeter(db, prices, logger)
	client, err := llm.New(cfg, meter, logger)
	if err != nil {
		return nil, nil, err
	}
	return client, meter, nil
}
