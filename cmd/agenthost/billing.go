package main

import (
	"flag"
	"fmt"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/server"
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
		pluginPerHour: fs.String("plugin-chf-per-hour", "0", settingUsage("plugin-chf-per-hour", "decimal, e.g. 0.36; every tool call is a transaction")),
		overdraft: fs.String("budget-overdraft-chf", billing.DefaultOverdraft.String(), settingUsage("budget-overdraft-chf",
			"decimal CHF; each billable call holds its estimate and is admitted while spending, the estimates in flight and its own stay within limit plus this")),
	}
}

// config is the price of plugin compute time and the budget's overdraft; a
// malformed amount is refused before anything is opened.
func (bf billingFlags) config() (server.Billing, error) {
	od, err := money.Parse(*bf.overdraft)
	if err != nil || od < 0 {
		return server.Billing{}, fmt.Errorf("-budget-overdraft-chf: %q is not a non-negative decimal amount", *bf.overdraft)
	}
	if od == 0 {
		od = -1 // BudgetConfig's zero is the default; the operator asked for none
	}
	perHour, err := money.Parse(*bf.pluginPerHour)
	if err != nil || perHour < 0 {
		return server.Billing{}, fmt.Errorf("-plugin-chf-per-hour: %q is not a non-negative decimal amount", *bf.pluginPerHour)
	}
	return server.Billing{PluginPerHour: perHour, Budget: billing.BudgetConfig{Overdraft: od}}, nil
}
