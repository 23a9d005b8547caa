package billing

import (
	"context"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
)

// OpPlugin is the operation of a plugin run's usage record: the provider is
// "plugin", the model the plugin's name, the purpose the tool's.
const OpPlugin modeluse.Operation = "plugin"

// Runner is what tool sets call plugins through (tools.Runner).
type Runner interface {
	Tools() []wasm.ToolInfo
	Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result
}

// MeteredRunner wraps a runner so that every tool call made for a caller
// becomes a transaction priced by its wall time (Prices.PluginPerHour), at
// most its plugin's time limit, attributed like the model calls of the same
// run. With plugin time priced, the call first holds its time limit, priced,
// against the caller's limits (ReserveCompute); a call that does not fit is
// refused with wasm.CodeSpendingLimit and does not run.
func (m *Meter) MeteredRunner(r Runner) Runner { return meteredRunner{Runner: r, m: m} }

type meteredRunner struct {
	Runner
	m *Meter
}

func (mr meteredRunner) Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result {
	plugin := mr.pluginOf(tool)
	// The run may last its plugin's time limit: that, priced, is held
	// against the caller's limits before it starts.
	timeout := mr.timeoutOf(plugin)
	h, err := mr.m.ReserveCompute(ctx, tool, timeout)
	if err != nil {
		return wasm.Result{Error: &wasm.Error{Code: wasm.CodeSpendingLimit, Message: err.Error()}}
	}
	res := mr.Runner.Call(ctx, tool, args, opts)
	// A stopped call still used what it used, but never more than its time
	// limit: beyond it is the host's compiling or checking a plugin on its
	// first call, which is not the caller's, and the estimate stays a bound.
	d := res.Stats.Duration
	if timeout > 0 {
		d = min(d, timeout)
	}
	if err := mr.m.SettleCompute(ctx, h, plugin, tool, d); err != nil {
		// The tool ran and may have changed something: its result stands
		// (an error would invite a retry), and the lost record is logged.
		mr.m.log.Error("billing: plugin run not recorded", "tool", tool, "err", err)
	}
	return res
}

// timeoutOf is the time limit of the plugin's calls, when the runner can
// say (a wasm.Host can); 0 otherwise.
func (mr meteredRunner) timeoutOf(plugin string) time.Duration {
	ps, ok := mr.Runner.(interface {
		Plugin(name string) (*wasm.Plugin, bool)
	})
	if !ok || plugin == "" {
		return 0
	}
	p, ok := ps.Plugin(plugin)
	if !ok {
		return 0
	}
	return time.Duration(p.Limits().TimeoutMs) * time.Millisecond
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
	a, ok := computeAttribution(ctx)
	if !ok || d <= 0 || plugin == "" {
		return nil
	}
	return m.insertUsage(ctx, ledger.Record{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, UserID: a.UserID,
		WorkflowID: a.WorkflowID, Purpose: "tool:" + tool, Usage: m.computeUsage(plugin, d), CreatedAt: m.now(), PriceVersion: m.prices.Version()})
}

// computeUsage is the usage of a plugin run of d.
func (m *Meter) computeUsage(plugin string, d time.Duration) modeluse.Usage {
	return modeluse.Usage{Operation: OpPlugin, Provider: "plugin", Model: plugin, Duration: d, Cost: m.prices.computeCost(d), Attempts: 1}
}
