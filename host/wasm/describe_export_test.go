package wasm

import (
	"context"
	"time"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// DescribeWith is DescribeModule (its tools) with the guest's run limit given and a hook called
// between the compilation and the guest's first instruction.
func DescribeWith(ctx context.Context, module []byte, reg *Registry, runLimit time.Duration, compiled func()) ([]manifest.Tool, error) {
	out, err := describe(ctx, module, reg, runLimit, compiled)
	if err != nil {
		return nil, err
	}
	d, err := parseDescription(out)
	return d.Tools, err
}
