package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// describeRunLimit bounds each run of the guest's code while it is described:
// its runtime's initialisation, then `describe`. Compiling the module is not
// counted: how long that takes depends on the module's size and on the
// machine's load, not on the guest (and wazero's compiler runs no guest code
// and cannot be interrupted), so a busy machine must not turn a slow compile
// into a guest's timeout.
const describeRunLimit = 30 * time.Second

// Description is what a module's code registers: tools, and the legacy
// actions of an actions plugin (pdk/actions).
type Description struct {
	Tools   []manifest.Tool
	Actions []manifest.Action
}

// DescribeModule runs a module's `describe` export once, in a sandbox where
// every capability refuses, and returns the tools (and the legacy actions)
// its code registers. `plugin build` writes the manifest from them; the
// module needs no manifest. The guest's code runs under its own time limit,
// which starts once the module is compiled; ctx bounds the whole.
func DescribeModule(ctx context.Context, module []byte, reg *Registry) (Description, error) {
	out, err := describe(ctx, module, reg, describeRunLimit, nil)
	if err != nil {
		return Description{}, err
	}
	return parseDescription(out)
}

// describedEntry is one entry of describe's answer: a tool, or with Action
// set a legacy action registered under the tool name "method.action".
type describedEntry struct {
	manifest.Tool
	Action *struct {
		Method      string `json:"method"`
		Action      string `json:"action"`
		DynamicMode bool   `json:"dynamicMode"`
	} `json:"action"`
}

// parseDescription splits describe's answer into tools and actions. An
// action whose tool name is not its method.action is refused: the host
// dispatches by that name.
func parseDescription(out []byte) (Description, error) {
	var entries []describedEntry
	if err := json.Unmarshal(out, &entries); err != nil {
		return Description{}, fmt.Errorf("describe returned invalid JSON: %w", err)
	}
	var d Description
	for _, e := range entries {
		if e.Action == nil {
			d.Tools = append(d.Tools, e.Tool)
			continue
		}
		a := manifest.Action{Method: e.Action.Method, Action: e.Action.Action, Description: e.Description,
			Parameters: e.InputSchema, DynamicMode: e.Action.DynamicMode, ReadOnly: e.ReadOnly}
		if a.ToolName() != e.Name {
			return Description{}, fmt.Errorf("describe: action %s is registered under the name %q", a.ToolName(), e.Name)
		}
		d.Actions = append(d.Actions, a)
	}
	return d, nil
}

// describe runs the module's describe export with the guest's run limit
// given, and returns its answer; compiled, when not nil, is called between
// the compilation and the guest's first instruction (where a test stands in
// for a slow compile).
func describe(ctx context.Context, module []byte, reg *Registry, runLimit time.Duration, compiled func()) ([]byte, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(256*16))
	defer rt.Close(context.WithoutCancel(ctx))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, err
	}
	fns := kernelFunctions(0)
	if reg != nil {
		for _, name := range reg.Names() {
			c, _ := reg.Lookup(name)
			for _, f := range c.Functions {
				fns = append(fns, refuseAll(f))
			}
		}
	}
	if err := linkFunctions(ctx, rt, fns); err != nil {
		return nil, err
	}
	mod, err := rt.CompileModule(ctx, module)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if compiled != nil {
		compiled()
	}
	// From here on the guest runs: the initialisation and describe each
	// under runLimit (invoke's deadline), counted from their own start.
	p := &Plugin{m: &manifest.Manifest{Name: "describe"}, logger: slog.New(slog.DiscardHandler), config: map[string]string{}, vars: newVars(1 << 20),
		limits: limits{maxOutput: 16 << 20, timeout: runLimit}}
	v := &variant{p: p, rt: rt, compiled: mod, readOnly: true}
	in, err := v.newInstance(ctx, "")
	if err != nil {
		return nil, err
	}
	defer in.close()
	fn := in.mod.ExportedFunction("describe")
	if fn == nil {
		return nil, fmt.Errorf("the module has no `describe` export: build it with pdk/")
	}
	c := &Call{Plugin: "describe", Tool: "describe", ReadOnly: true, Logger: p.logger, p: p}
	rc, ierr := in.invoke(ctx, c, fn, nil, runLimit)
	if ierr != nil {
		return nil, fmt.Errorf("describe: %w", ierr)
	}
	if rc != 0 {
		return nil, fmt.Errorf("describe failed: %s", in.k.err)
	}
	out, oerr := in.output()
	if oerr != nil {
		return nil, fmt.Errorf("describe: %w", oerr)
	}
	return out, nil
}

// refuseAll makes a capability function fail whatever the call.
func refuseAll(f HostFunction) HostFunction {
	g := f
	g.Func = func(ctx context.Context, c *Call, stack []uint64) {
		panic(c.Fail(CodeCapabilityDenied, "%s.%s is not available while describing a plugin", f.Module, f.Name))
	}
	return g
}
