package wasm

import (
	"context"
	"encoding/binary"
	"log/slog"

	"github.com/tetratelabs/wazero/api"
)

// ExtismEnv is the import module of the Extism guest ABI.
const ExtismEnv = "extism:host/env"

var (
	i64 = api.ValueTypeI64
	i32 = api.ValueTypeI32
)

// kernelFunctions are the Extism kernel and runtime functions every plugin gets:
// memory, input/output, errors, config, variables and logs, and agenthost's
// block copies (blockFunctions). HTTP is a capability.
func kernelFunctions(logLevel slog.Level) []HostFunction {
	f := func(name string, params, results []api.ValueType, fn func(ctx context.Context, c *Call, s []uint64)) HostFunction {
		return HostFunction{Module: ExtismEnv, Name: name, Params: params, Results: results, Func: fn}
	}
	p := func(ts ...api.ValueType) []api.ValueType { return ts }
	out := []HostFunction{
		f("alloc", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) {
			off, err := c.k.alloc(s[0])
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "%v", err))
			}
			s[0] = off
		}),
		f("free", p(i64), nil, func(_ context.Context, c *Call, s []uint64) { c.k.free(s[0]) }),
		f("length", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) { s[0] = c.k.length(s[0]) }),
		f("length_unsafe", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) { s[0] = c.k.length(s[0]) }),
		f("load_u8", p(i64), p(i32), func(_ context.Context, c *Call, s []uint64) {
			b, err := c.k.span(s[0], 1)
			if err != nil {
				panic(c.Fail(CodeTrap, "load_u8: %v", err))
			}
			s[0] = uint64(b[0])
		}),
		f("load_u64", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) {
			b, err := c.k.span(s[0], 8)
			if err != nil {
				panic(c.Fail(CodeTrap, "load_u64: %v", err))
			}
			s[0] = binary.LittleEndian.Uint64(b)
		}),
		f("store_u8", p(i64, i32), nil, func(_ context.Context, c *Call, s []uint64) {
			b, err := c.k.span(s[0], 1)
			if err != nil {
				panic(c.Fail(CodeTrap, "store_u8: %v", err))
			}
			b[0] = byte(s[1])
		}),
		f("store_u64", p(i64, i64), nil, func(_ context.Context, c *Call, s []uint64) {
			b, err := c.k.span(s[0], 8)
			if err != nil {
				panic(c.Fail(CodeTrap, "store_u64: %v", err))
			}
			binary.LittleEndian.PutUint64(b, s[1])
		}),
		f("input_length", nil, p(i64), func(_ context.Context, c *Call, s []uint64) { s[0] = uint64(len(c.k.input)) }),
		f("input_offset", nil, p(i64), func(_ context.Context, c *Call, s []uint64) {
			// Rarely used: materialise the input as a kernel block on demand.
			off, err := c.k.write(c.k.input)
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "%v", err))
			}
			s[0] = off
		}),
		f("input_load_u8", p(i64), p(i32), func(_ context.Context, c *Call, s []uint64) {
			if s[0] >= uint64(len(c.k.input)) {
				panic(c.Fail(CodeTrap, "input_load_u8: offset %d beyond input of %d bytes", s[0], len(c.k.input)))
			}
			s[0] = uint64(c.k.input[s[0]])
		}),
		f("input_load_u64", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) {
			in := c.k.input
			o := s[0]
			if o >= uint64(len(in)) {
				panic(c.Fail(CodeTrap, "input_load_u64: offset %d beyond input of %d bytes", o, len(in)))
			}
			if o+8 <= uint64(len(in)) {
				s[0] = binary.LittleEndian.Uint64(in[o:])
				return
			}
			// The reference kernel reads past the end of a short tail; we zero-fill.
			var tail [8]byte
			copy(tail[:], in[o:])
			s[0] = binary.LittleEndian.Uint64(tail[:])
		}),
		f("output_set", p(i64, i64), nil, func(_ context.Context, c *Call, s []uint64) {
			if _, err := c.k.span(s[0], s[1]); err != nil && s[1] > 0 {
				panic(c.Fail(CodeTrap, "output_set: %v", err))
			}
			c.k.outOffset, c.k.outLen = s[0], s[1]
		}),
		f("error_set", p(i64), nil, func(_ context.Context, c *Call, s []uint64) {
			if s[0] == 0 {
				c.k.err = ""
				return
			}
			b, err := c.k.block(s[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "error_set: %v", err))
			}
			c.k.err = clipText(b, maxErrorMessage)
		}),
		f("error_get", nil, p(i64), func(_ context.Context, c *Call, s []uint64) {
			off, _ := c.k.write([]byte(c.k.err))
			s[0] = off
		}),
		f("reset", nil, nil, func(_ context.Context, c *Call, s []uint64) { c.k.reset(c.k.input) }),
		f("memory_bytes", nil, p(i64), func(_ context.Context, c *Call, s []uint64) { s[0] = uint64(len(c.k.mem)) }),
		f("config_get", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) {
			key, err := c.k.block(s[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "config_get: %v", err))
			}
			v, ok := c.p.config[string(key)]
			if !ok {
				s[0] = 0
				return
			}
			off, err := c.k.write([]byte(v))
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "%v", err))
			}
			s[0] = off
		}),
		f("var_get", p(i64), p(i64), func(_ context.Context, c *Call, s []uint64) {
			key, err := c.k.block(s[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "var_get: %v", err))
			}
			v, ok := c.p.vars.get(c.tenant, string(key))
			if !ok {
				s[0] = 0
				return
			}
			off, err := c.k.write(v)
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "%v", err))
			}
			s[0] = off
		}),
		f("var_set", p(i64, i64), nil, func(_ context.Context, c *Call, s []uint64) {
			key, err := c.k.block(s[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "var_set: %v", err))
			}
			if s[1] == 0 {
				c.p.vars.del(c.tenant, string(key))
				return
			}
			val, err := c.k.block(s[1])
			if err != nil {
				panic(c.Fail(CodeTrap, "var_set: %v", err))
			}
			if err := c.p.vars.set(c.tenant, string(key), val); err != nil {
				panic(c.Fail(CodeOutOfMemory, "var_set: %v", err))
			}
		}),
		f("get_log_level", nil, p(i32), func(_ context.Context, c *Call, s []uint64) { s[0] = uint64(extismLevel(logLevel)) }),
	}
	for _, lv := range []struct {
		name  string
		level slog.Level
	}{{"log_trace", slog.LevelDebug - 4}, {"log_debug", slog.LevelDebug}, {"log_info", slog.LevelInfo}, {"log_warn", slog.LevelWarn}, {"log_error", slog.LevelError}} {
		out = append(out, f(lv.name, p(i64), nil, func(ctx context.Context, c *Call, s []uint64) {
			msg, err := c.k.block(s[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "%s: %v", lv.name, err))
			}
			// Below the plugin log level a message is ignored, not counted as
			// dropped: get_log_level told the guest not to send it.
			if lv.level >= logLevel {
				c.log(ctx, lv.level, msg)
			}
			c.k.free(s[0])
		}))
	}
	return append(out, blockFunctions()...)
}

// extismLevel maps a slog level to Extism's numbering (0 trace … 4 error).
func extismLevel(l slog.Level) int32 {
	switch {
	case l < slog.LevelDebug:
		return 0
	case l < slog.LevelInfo:
		return 1
	case l < slog.LevelWarn:
		return 2
	case l < slog.LevelError:
		return 3
	default:
		return 4
	}
}
