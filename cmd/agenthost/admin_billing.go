package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// billingAdminFlags are the flags of `admin limits` and `admin usage`.
type billingAdminFlags struct {
	credit, monthly, by, from, to *string
	csv                           *bool

	// parsed
	setCredit, setMonthly bool
	creditAmt, monthlyAmt *money.Amount
	dims                  []ledger.Dimension
	fromT, toT            time.Time
}

func addBillingAdminFlags(fs *flag.FlagSet) *billingAdminFlags {
	return &billingAdminFlags{
		credit:  fs.String("credit", "", `credit: the most the tenant may ever spend, in CHF ("none" removes it) (limits)`),
		monthly: fs.String("monthly", "", `the most the tenant may spend in a calendar month (UTC), in CHF ("none" removes it) (limits)`),
		by:      fs.String("by", "", "report dimensions, comma-separated: "+dimensionNames()+" (usage)"),
		from:    fs.String("from", "", "report period start, a date (2006-01-02), inclusive; default: the first of this month (usage)"),
		to:      fs.String("to", "", "report period end, a date, exclusive; default: now (usage)"),
		csv:     fs.Bool("csv", false, "write the report as CSV (usage)"),
	}
}

func dimensionNames() string {
	var names []string
	for _, d := range ledger.Dimensions() {
		names = append(names, string(d))
	}
	return strings.Join(names, ", ")
}

// parse checks the flags before anything is opened.
func (b *billingAdminFlags) parse(sub string) error {
	var err error
	b.setCredit, b.creditAmt, err = parseLimit("credit", *b.credit)
	if err != nil {
		return fmt.Errorf("admin %s: %w", sub, err)
	}
	b.setMonthly, b.monthlyAmt, err = parseLimit("monthly", *b.monthly)
	if err != nil {
		return fmt.Errorf("admin %s: %w", sub, err)
	}
	if b.dims, err = ledger.ParseDimensions(*b.by); err != nil {
		return fmt.Errorf("admin %s: -by: %w", sub, err)
	}
	now := time.Now().UTC()
	b.fromT, b.toT = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), now.Add(time.Second)
	for _, f := range []struct {
		name string
		v    string
		t    *time.Time
	}{{"from", *b.from, &b.fromT}, {"to", *b.to, &b.toT}} {
		if f.v == "" {
			continue
		}
		if *f.t, err = time.Parse(time.DateOnly, f.v); err != nil {
			return fmt.Errorf("admin %s: -%s %q is not a date (2006-01-02)", sub, f.name, f.v)
		}
	}
	if !b.toT.After(b.fromT) {
		return fmt.Errorf("admin %s: -to must be after -from", sub)
	}
	return nil
}

// parseLimit reads a limit flag: "" leaves the limit as it is, "none"
// removes it, a decimal amount of CHF sets it.
func parseLimit(name, v string) (set bool, amt *money.Amount, err error) {
	switch v {
	case "":
		return false, nil, nil
	case "none":
		return true, nil, nil
	}
	a, err := money.Parse(v)
	if err != nil || a < 0 {
		return false, nil, fmt.Errorf(`-%s %q is neither a non-negative amount of CHF nor "none"`, name, v)
	}
	return true, &a, nil
}

// limits sets what the flags say and prints the tenant's limits and
// spending.
func (b *billingAdminFlags) limits(ctx context.Context, db *store.DB, tenantID string, w io.Writer) error {
	if _, err := db.Tenant(ctx, tenancy.Principal{TenantID: tenantID}); err != nil {
		return fmt.Errorf("admin limits: no tenant %s: %w", tenantID, err)
	}
	now := time.Now().UTC()
	bud, err := db.TenantBudget(ctx, tenantID, now)
	if err != nil {
		return err
	}
	if b.setCredit || b.setMonthly {
		l := bud.Limits
		if b.setCredit {
			l.Credit = b.creditAmt
		}
		if b.setMonthly {
			l.Monthly = b.monthlyAmt
		}
		if err := db.SetTenantLimits(ctx, tenantID, l); err != nil {
			return err
		}
		newCLIAudit(ctx, db, nil).record("", "", audit.Entry{TenantID: tenantID, Action: audit.LimitsChanged, TargetType: "tenant",
			TargetID: tenantID, Detail: audit.Detail(map[string]any{"credit": map[string]string{"from": chf(bud.Credit), "to": chf(l.Credit)},
				"monthly": map[string]string{"from": chf(bud.Monthly), "to": chf(l.Monthly)}})})
		bud.Limits = l
	}
	show := func(a *money.Amount) string {
		if a == nil {
			return "none"
		}
		return "CHF " + a.String()
	}
	fmt.Fprintf(w, "credit   %s (spent CHF %s in total)\n", show(bud.Credit), bud.SpentTotal)
	fmt.Fprintf(w, "monthly  %s (spent CHF %s in %s)\n", show(bud.Monthly), bud.SpentMonth, now.Format("2006-01"))
	if err := bud.Check(); err != nil {
		fmt.Fprintf(w, "refused  %v\n", err)
	}
	return nil
}

// usage prints the tenant's usage report, as its administrator sees it.
func (b *billingAdminFlags) usage(ctx context.Context, db *store.DB, tenantID string, w io.Writer) error {
	if _, err := db.Tenant(ctx, tenancy.Principal{TenantID: tenantID}); err != nil {
		return fmt.Errorf("admin usage: no tenant %s: %w", tenantID, err)
	}
	groups, err := db.UsageGroups(ctx, tenancy.Principal{TenantID: tenantID, Admin: true}, b.fromT, b.toT)
	if err != nil {
		return err
	}
	rows := ledger.Report(groups, b.dims)
	if *b.csv {
		return ledger.WriteCSV(w, b.dims, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := make([]string, 0, len(b.dims)+4)
	for _, d := range b.dims {
		head = append(head, string(d))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "calls", "prompt", "completion", "CHF"), "\t")+"\t")
	var total ledger.ReportRow
	for _, r := range rows {
		fmt.Fprintf(tw, "%s%d\t%d\t%d\t%s\t\n", prefix(r.Keys), r.Calls, r.PromptTokens, r.CompletionTokens, r.Cost)
		total.Calls += r.Calls
		total.PromptTokens += r.PromptTokens
		total.CompletionTokens += r.CompletionTokens
		total.Cost += r.Cost
	}
	if len(b.dims) > 0 {
		fmt.Fprintf(tw, "%s%d\t%d\t%d\t%s\t\n", prefix(append([]string{"total"}, make([]string, len(b.dims)-1)...)),
			total.Calls, total.PromptTokens, total.CompletionTokens, total.Cost)
	}
	return tw.Flush()
}

func prefix(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return strings.Join(keys, "\t") + "\t"
}

// chf is an amount for the audit log ("" when none is set).
func chf(a *money.Amount) string {
	if a == nil {
		return ""
	}
	return "CHF " + a.String()
}
