// Package toolcall carries who runs a tool, and for which workspace and
// workflow, from the caller (an agent round, a direct call through the API)
// to the host capabilities a plugin uses. A plugin never names a tenant or a
// user: the host capabilities that reach files, knowledge and models act for
// the Caller found in the call's context, inside that caller's access rights.
package toolcall

import (
	"context"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Caller is the principal a tool call acts for and where it runs.
type Caller struct {
	Principal tenancy.Principal
	// WorkspaceID is the workspace whose tool set offered the tool.
	WorkspaceID string
	// WorkflowID is the workflow of the agent round; empty for a direct call.
	WorkflowID string
}

type callerKey struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// From returns the caller ctx carries; ok is false when there is none, which
// host capabilities must treat as "no rights".
func From(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(callerKey{}).(Caller)
	return c, ok
}
