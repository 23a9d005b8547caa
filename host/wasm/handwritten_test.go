package wasm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

func handModule(tb testing.TB, call, start []byte) []byte {
	return wasmtest.HandModule(tb, "hand", call, start)
}

var (
	spin    = wasmtest.Spin
	forever = wasmtest.Forever
)

// The rewrite adds the interrupt flag and the fuel counter as the module's
// next globals. A module whose code names them (indices it does not define)
// would, once rewritten, clear the flag or pin the fuel: it is refused at
// load, whatever the instruction.
func hostileInterruptGlobals(t testing.TB) int {
	cases := []struct {
		name string
		call []byte
	}{
		{"clears the flag", forever(asm.I32Const(0), asm.GlobalSet(0))},
		{"pins the fuel", forever(asm.I32Const(1<<30), asm.GlobalSet(1))},
		{"reads the flag", forever(asm.GlobalGet(0), asm.Drop())},
	}
	for _, tc := range cases {
		h := newHost(t, wasm.EgressOptions{}, nil)
		_, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: handModule(t, tc.call, nil)})
		if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), "global") {
			t.Fatalf("%s: Load: %v, want a refusal naming the global", tc.name, err)
		}
	}
	return len(cases)
}

// A start section that never returns is bounded like a call: the plugin is
// marked failed with the reason, and the host goes on.
func hostileStartSectionThatNeverReturns(t testing.TB) int {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithInitTimeout(200 * time.Millisecond) })
	p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: handModule(t, asm.I32Const(0), spin())})
	if err != nil {
		t.Fatal(err)
	}
	echo := load(t, h, "echo")
	if err := h.Warm(context.Background()); err == nil || !strings.Contains(err.Error(), "start") {
		t.Fatalf("Warm: %v, want the start function's failure", err)
	}
	if r := p.Call(context.Background(), "run", nil, nil); r.OK || r.Error.Code != wasm.CodeUnavailable {
		t.Fatalf("run: %+v", r)
	}
	if r := call(t, echo, "echo", map[string]any{"text": "on"}); !r.OK {
		t.Fatalf("echo: %+v", r)
	}
	return 1
}
