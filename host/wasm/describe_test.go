package wasm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
)

// TestDescribeCompileNotCounted: describing a plugin gives the guest's code
// its whole run limit, counted from the end of the compilation: a compile
// slower than the limit (a large module on a loaded machine; here a hook
// that sleeps past it) does not time the guest out, while the caller's
// context still bounds the whole.
func TestDescribeCompileNotCounted(t *testing.T) {
	module := testModule(t, "echo")
	const runLimit = 3 * time.Second
	for _, c := range []struct {
		name     string
		compiled func(cancel context.CancelFunc)
		want     error // nil: the tools are described
	}{
		{"compile slower than the run limit", func(context.CancelFunc) { time.Sleep(runLimit + time.Second) }, nil},
		{"caller gives up during the compile", func(cancel context.CancelFunc) { cancel() }, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tools, err := wasm.DescribeWith(ctx, module, nil, runLimit, func() { c.compiled(cancel) })
			if c.want == nil {
				if err != nil || len(tools) == 0 || tools[0].Name == "" {
					t.Fatalf("describe: %v, tools %+v", err, tools)
				}
				return
			}
			var werr *wasm.Error
			if err == nil || !errors.As(err, &werr) || werr.Code != wasm.CodeCanceled {
				t.Fatalf("describe: %v, want the guest's run canceled (%v)", err, c.want)
			}
		})
	}
}
