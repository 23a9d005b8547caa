package wasm

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// instantiateWASI instantiates WASI preview 1 in rt with a sched_yield of
// our own. Every interrupt check of an instrumented module yields through
// it, also in a guest that outlived its grace and whose module is being
// closed under it (instance.giveUp); wazero's sched_yield reads the module's
// system context, which closing the module clears at the same time (a data
// race). Ours reads only the call's stop flag, the one thing a yield asks:
// a stopped call traps here.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	b.NewFunctionBuilder().WithFunc(func(ctx context.Context, _ api.Module) int32 {
		if c, ok := ctx.Value(callKey{}).(*Call); ok && c.stop != nil && c.stop.Load() {
			panic(errStopped)
		}
		return 0 // ESUCCESS
	}).Export("sched_yield")
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("WASI: %w", err)
	}
	return nil
}
