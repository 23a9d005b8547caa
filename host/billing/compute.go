package billing

import (
	"context"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
)

// OpPlugin is the operation of a plugin run's usage record: the provider is
// "plugin", the model the plugin's name, the purpose the tool's.
const OpPlugin llm.Operation = "plugin"

// Runner is what tool sets call plugins through (tools.Runner).
type Runner interface {
	Tools() []wasm.ToolInfo
	Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result
}

// MeteredRunner wraps a runner so that every tool call made for a caller
// becomes a transaction priced by its wall time (Prices.PluginPerHour),
// attributed like the model calls of the same run.
func (m *Meter) MeteredRunner(r Runner) Runner { return meteredRunner{Runner: r, m: m} }

type meteredRunner struct {
	Runner
	m *Meter
}

func (mr meteredRunner) Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result {
	res := mr.Runner.Call(ctx, tool, args, opts)
	// A stopped call still used what it used.
	if err := mr.m.recordCompute(context.WithoutCancel(ctx), mr.pluginOf(tool), tool, res.Stats.Duration); err != nil {
		// The tool ran and may have changed something: its result stands
		// (an error would invite a retry), and the lost record is logged.
		mr.m.log.Error("billing: plugin run not recorded", "tool", tool, "err", err)
	}
	return res
}

func (mr meteredRunner) pluginOf(tool string) string {
	// A pinned call ("tool@1.2.0") runs a version of the plugin that
	// offers the tool under its plain name.
	name, _, _ := strings.Cut(tool, "@")
	for _, t := range mr.Runner.Tools() {
		if t.Name == name {
			return t.Plugin
		}
	}
	return ""
}

// RecordCompute writes one plugin run that is not a tool call (an
// extractor's), attributed by ctx like a model call (llm.WithAttribution)
// or, in a tool call, to its caller.
func (m *Meter) RecordCompute(ctx context.Context, plugin, tool string, d time.Duration) error {
	return m.recordCompute(context.WithoutCancel(ctx), plugin, tool, d)
}

// recordCompute writes one plugin run. Calls outside any caller (start-up
// checks, unattributed internal calls) are not billed to anyone.
func (m *Meter) recordCompute(ctx context.Context, plugin, tool string, d time.Duration) error {
	a := llm.AttributionFrom(ctx)
	if a.TenantID == "" {
		c, ok := toolcall.From(ctx)
		if !ok || c.Principal.TenantID == "" {
			return nil
		}
		a = llm.Attribution{TenantID: c.Principal.TenantID, WorkspaceID: c.WorkspaceID, UserID: c.Principal.UserID, WorkflowID: c.WorkflowID}
	}
	if d <= 0 || plugin == "" {
		return nil
	}
	u := llm.Usage{Operation: OpPlugin, Provider: "plugin", Model: plugin, Duration: d, Cost: m.prices.computeCost(d), Attempts: 1}
	return m.store.InsertUsage(ctx, Record{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, UserID: a.UserID,
		WorkflowID: a.WorkflowID, Purpose: "tool:" + tool, Usage: u, CreatedAt: m.now(), PriceVersion: m.prices.Version()})
}
