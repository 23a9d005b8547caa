package ledger

import (
	"encoding/csv"
	"fmt"
	"github.com/agenthost/agenthost/host/money"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dimension is what a report groups by.
type Dimension string

// The dimensions of a report: the attributions of a record, and periods
// (calendar day and month, UTC).
const (
	ByTenant    Dimension = "tenant"
	ByWorkspace Dimension = "workspace"
	ByUser      Dimension = "user"
	ByWorkflow  Dimension = "workflow"
	ByModel     Dimension = "model"
	ByOperation Dimension = "operation"
	ByPurpose   Dimension = "purpose"
	ByDay       Dimension = "day"
	ByMonth     Dimension = "month"
)

// Dimensions lists every dimension, in the order reports print them.
func Dimensions() []Dimension {
	return []Dimension{ByTenant, ByWorkspace, ByUser, ByWorkflow, ByModel, ByOperation, ByPurpose, ByDay, ByMonth}
}

// ParseDimensions reads a comma-separated list ("model,month"); an unknown
// name is an error that lists the known ones.
func ParseDimensions(s string) ([]Dimension, error) {
	var out []Dimension
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d := Dimension(f)
		if !slices.Contains(Dimensions(), d) {
			names := make([]string, 0, len(Dimensions()))
			for _, k := range Dimensions() {
				names = append(names, string(k))
			}
			return nil, fmt.Errorf("billing: unknown report dimension %q (one of %s)", f, strings.Join(names, ", "))
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// UsageGroup is the store's finest grouping of records: one row per
// attribution, model, operation, purpose and day.
type UsageGroup struct {
	TenantID, WorkspaceID, UserID, WorkflowID string
	Operation, Provider, Model, Purpose       string
	// Day is the calendar day (UTC) of the records.
	Day                                          time.Time
	Calls                                        int64
	PromptTokens, CompletionTokens, CachedTokens int64
	Cost                                         money.Amount
}

// ReportRow is one line of a report: the group's keys (one per dimension
// asked for, in that order) and its sums.
type ReportRow struct {
	Keys             []string     `json:"keys"`
	Calls            int64        `json:"calls"`
	PromptTokens     int64        `json:"promptTokens"`
	CompletionTokens int64        `json:"completionTokens"`
	CachedTokens     int64        `json:"cachedTokens"`
	Cost             money.Amount `json:"-"`
	// CostCHF is Cost as an exact decimal string ("0.000123").
	CostCHF string `json:"costCHF"`
}

// Report sums groups by the dimensions, ordered by its keys. No dimension
// gives one row of totals.
func Report(groups []UsageGroup, by []Dimension) []ReportRow {
	idx := map[string]int{}
	var rows []ReportRow
	for _, g := range groups {
		keys := make([]string, len(by))
		for i, d := range by {
			keys[i] = g.Key(d)
		}
		k := strings.Join(keys, "\x00")
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, ReportRow{Keys: keys})
		}
		r := &rows[i]
		r.Calls += g.Calls
		r.PromptTokens += g.PromptTokens
		r.CompletionTokens += g.CompletionTokens
		r.CachedTokens += g.CachedTokens
		r.Cost += g.Cost
	}
	slices.SortFunc(rows, func(a, b ReportRow) int { return slices.Compare(a.Keys, b.Keys) })
	for i := range rows {
		rows[i].CostCHF = rows[i].Cost.String()
	}
	return rows
}

func (g UsageGroup) Key(d Dimension) string {
	switch d {
	case ByTenant:
		return g.TenantID
	case ByWorkspace:
		return g.WorkspaceID
	case ByUser:
		return g.UserID
	case ByWorkflow:
		return g.WorkflowID
	case ByModel:
		if g.Provider == "" {
			return g.Model
		}
		return g.Provider + "/" + g.Model
	case ByOperation:
		return g.Operation
	case ByPurpose:
		return g.Purpose
	case ByDay:
		return g.Day.UTC().Format(time.DateOnly)
	case ByMonth:
		return g.Day.UTC().Format("2006-01")
	}
	return ""
}

// WriteCSV writes a report with a header: the dimensions, then calls,
// promptTokens, completionTokens, cachedTokens and costCHF (exact decimal).
func WriteCSV(w io.Writer, by []Dimension, rows []ReportRow) error {
	cw := csv.NewWriter(w)
	head := make([]string, 0, len(by)+5)
	for _, d := range by {
		head = append(head, string(d))
	}
	head = append(head, "calls", "promptTokens", "completionTokens", "cachedTokens", "costCHF")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range rows {
		rec := append(slices.Clone(r.Keys), strconv.FormatInt(r.Calls, 10), strconv.FormatInt(r.PromptTokens, 10),
			strconv.FormatInt(r.CompletionTokens, 10), strconv.FormatInt(r.CachedTokens, 10), r.Cost.String())
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
