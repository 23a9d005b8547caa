package wasm

import (
	"context"
	"errors"
	"io"

	"github.com/tetratelabs/wazero/api"
)

// Input is content a call reads by range (capability "input"): a stored blob
// given to an extractor, so a 500 MB PDF never crosses into the guest whole.
type Input interface {
	io.ReaderAt
	Size() int64
}

// maxReadAt bounds one read_at, so a guest cannot make the host allocate
// without limit in one call.
const maxReadAt = 16 << 20

// InputCapability links agenthost:input: size() -> i64 (−1 when the call has
// no input) and read_at(offset i64, ptr i32, len i32) -> i32, which copies
// up to len bytes of the input at offset straight into guest memory at ptr
// and returns how many (0 at the end). One copy, no JSON, no kernel memory:
// range reads cost what their bytes cost. Reading is all it allows, so
// read-only tools get it too.
func InputCapability() Capability {
	return Capability{
		Name:        "input",
		Description: "read the call's input document by range (extractors)",
		Functions: []HostFunction{
			{
				Module: CapabilityPrefix + "input", Name: "size",
				Results: []api.ValueType{api.ValueTypeI64},
				Func: func(_ context.Context, c *Call, s []uint64) {
					size := int64(-1)
					if c.opts != nil && c.opts.Input != nil {
						size = c.opts.Input.Size()
					}
					s[0] = uint64(size)
				},
			},
			{
				Module: CapabilityPrefix + "input", Name: "read_at",
				Params:  []api.ValueType{api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32},
				Results: []api.ValueType{api.ValueTypeI32},
				Func: func(_ context.Context, c *Call, s []uint64) {
					if c.opts == nil || c.opts.Input == nil {
						panic(c.Fail(CodeCapabilityDenied, "input.read_at: this call has no input"))
					}
					off, ptr, n := int64(s[0]), uint32(s[1]), uint32(s[2])
					if off < 0 || n > maxReadAt {
						panic(c.Fail(CodeTrap, "input.read_at: offset %d or length %d out of range (at most %d bytes a read)", off, n, maxReadAt))
					}
					if off >= c.opts.Input.Size() || n == 0 {
						s[0] = 0
						return
					}
					buf := make([]byte, min(int64(n), c.opts.Input.Size()-off))
					got, err := c.opts.Input.ReadAt(buf, off)
					if err != nil && !errors.Is(err, io.EOF) {
						panic(c.Fail(CodePluginError, "input.read_at: reading the input: %v", err))
					}
					if c.mem == nil || !c.mem.Write(ptr, buf[:got]) {
						panic(c.Fail(CodeTrap, "input.read_at: destination %d+%d is outside the guest's memory", ptr, got))
					}
					s[0] = uint64(got)
				},
			},
		},
	}
}
