package api

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Billing is what the API needs of the usage records: the caller's usage
// grouped for reports, and the tenant's budget.
type Billing interface {
	UsageGroups(ctx context.Context, p tenancy.Principal, from, to time.Time) ([]ledger.UsageGroup, error)
	TenantBudget(ctx context.Context, tenantID string, now time.Time) (ledger.Budget, error)
	UsageRecords(ctx context.Context, p tenancy.Principal, workflowID string) ([]ledger.Record, error)
}

// usageReport is the JSON form of GET /billing/usage.
type usageReport struct {
	From  time.Time          `json:"from"`
	To    time.Time          `json:"to"`
	By    []ledger.Dimension `json:"by"`
	Rows  []ledger.ReportRow `json:"rows"`
	Total ledger.ReportRow   `json:"total"`
}

// handleUsageReport: GET /billing/usage?by=model,month&from=&to=&format=csv.
// A tenant admin's report covers the tenant, a user's their own usage. The
// period is [from, to), dates or RFC 3339 times; it defaults to the current
// calendar month (UTC).
func handleUsageReport(b Billing) fiber.Handler {
	return func(c *fiber.Ctx) error {
		by, err := ledger.ParseDimensions(c.Query("by"))
		if err != nil {
			return fmt.Errorf("%w: by: %w", tenancy.ErrInvalid, err)
		}
		now := time.Now().UTC()
		from, err := queryTime(c, "from", time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return err
		}
		to, err := queryTime(c, "to", now.Add(time.Second))
		if err != nil {
			return err
		}
		if !to.After(from) {
			return fmt.Errorf("%w: to (%s) must be after from (%s)", tenancy.ErrInvalid, to.Format(time.RFC3339), from.Format(time.RFC3339))
		}
		groups, err := b.UsageGroups(c.UserContext(), principal(c), from, to)
		if err != nil {
			return err
		}
		rows := ledger.Report(groups, by)
		switch c.Query("format", "json") {
		case "csv":
			c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
			c.Set(fiber.HeaderContentDisposition, `attachment; filename="usage.csv"`)
			return ledger.WriteCSV(c, by, rows)
		case "json":
		default:
			return fmt.Errorf("%w: format must be json or csv", tenancy.ErrInvalid)
		}
		if rows == nil {
			rows = []ledger.ReportRow{}
		}
		if by == nil {
			by = []ledger.Dimension{}
		}
		total := ledger.ReportRow{Keys: []string{}, CostCHF: "0.00"}
		if t := ledger.Report(groups, nil); len(t) == 1 {
			total = t[0]
		}
		return c.JSON(usageReport{From: from, To: to, By: by, Rows: rows, Total: total})
	}
}

func queryTime(c *fiber.Ctx, key string, def time.Time) (time.Time, error) {
	v := c.Query(key)
	if v == "" {
		return def, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s: %q is neither a date (2006-01-02) nor an RFC 3339 time", tenancy.ErrInvalid, key, v)
	}
	return t.UTC(), nil
}

// budgetView is the JSON form of GET /billing/budget: amounts as exact
// decimal strings of CHF, limits null when none is set.
type budgetView struct {
	CreditCHF     *string `json:"creditCHF"`
	MonthlyCHF    *string `json:"monthlyCHF"`
	SpentTotalCHF string  `json:"spentTotalCHF"`
	SpentMonthCHF string  `json:"spentMonthCHF"`
	// ReservedCHF is what the tenant's calls in flight hold against its
	// limits, on every host (their estimates).
	ReservedCHF string `json:"reservedCHF"`
	Month       string `json:"month"`
	// Admitted says whether the tenant is below its limits; Reason says
	// why not. A call also needs its estimate to fit with what calls in
	// flight hold (docs/billing.md).
	Admitted bool   `json:"admitted"`
	Reason   string `json:"reason,omitempty"`
}

// handleBudget: GET /billing/budget, the caller's tenant's limits and
// spending (any member may see why runs are refused).
func handleBudget(b Billing) fiber.Handler {
	return func(c *fiber.Ctx) error {
		now := time.Now().UTC()
		bud, err := b.TenantBudget(c.UserContext(), principal(c).TenantID, now)
		if err != nil {
			return err
		}
		v := budgetView{SpentTotalCHF: bud.SpentTotal.String(), SpentMonthCHF: bud.SpentMonth.String(),
			ReservedCHF: bud.Reserved.String(), Month: now.Format("2006-01"), Admitted: true}
		if bud.Credit != nil {
			s := bud.Credit.String()
			v.CreditCHF = &s
		}
		if bud.Monthly != nil {
			s := bud.Monthly.String()
			v.MonthlyCHF = &s
		}
		if err := bud.Check(); err != nil {
			v.Admitted, v.Reason = false, err.Error()
		}
		return c.JSON(v)
	}
}

// requireBudget refuses to start a workflow for a tenant over its spending
// limits (402), before anything is stored or any model is asked.
func requireBudget(b Billing) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if b == nil {
			return c.Next()
		}
		bud, err := b.TenantBudget(c.UserContext(), principal(c).TenantID, time.Now().UTC())
		if err != nil {
			return err
		}
		if err := bud.Check(); err != nil {
			return err
		}
		return c.Next()
	}
}
