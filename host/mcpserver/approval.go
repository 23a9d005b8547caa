package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Policies says a workspace's approval policy of a tool: "auto", "ask" or
// "deny" (workspace.Service; docs/agent.md#approval-policy).
type Policies interface {
	ToolPolicyOf(ctx context.Context, p tenancy.Principal, workspaceID string, t tools.Tool) (string, error)
}

// approvalKey is the key of the approval question in a stateless round's
// inputRequests.
const approvalKey = "agenthost.approval"

// approvalRequest is the elicitation (MCP elicitation/create, form mode)
// that asks the client's user whether the call may run.
func approvalRequest(t tools.Tool, args json.RawMessage) *mcp.ElicitParams {
	what := t.External
	if what == "" {
		what = "a side effect"
	}
	return &mcp.ElicitParams{Mode: "form",
		Message: fmt.Sprintf("agenthost: %s has an effect outside agenthost (%s). Run it with these arguments?\n%s", t.Name, what, clipArgs(args)),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"approve": map[string]any{"type": "boolean", "title": "Run " + t.Name, "description": "true runs the call; false refuses it"},
			"reason":  map[string]any{"type": "string", "title": "Reason (when refusing)"},
		}, "required": []string{"approve"}}}
}

func clipArgs(args json.RawMessage) string {
	s := string(args)
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

// approve asks the client's user to approve a call whose policy is ask,
// through elicitation: on the session (older revisions), or as an
// inputRequest of the round (stateless revision; the call ends
// input_required and runs when the client calls again with the answer).
// It returns nil when the call may run, a refusal to return as the
// result, or errInput when the round waits for the client's answer. A
// client that cannot elicit gets a clear refusal. Every decision is
// audited.
func (s *Server) approve(ctx context.Context, pr *peer, p tenancy.Principal, ws string, t tools.Tool, args json.RawMessage) (*wasm.Result, error) {
	params := approvalRequest(t, args)
	if !declares(pr.caps, "elicitation", pr.round != nil) || (pr.round == nil && pr.session == nil) {
		r := failure("approval_required", fmt.Sprintf("%s needs a person's approval in this workspace, and this MCP client does not support elicitation "+
			"(MCP elicitation/create), so it cannot be asked; use a client that does, or ask the workspace's admin to set the tool's policy to auto", t.Name))
		return &r, nil
	}
	var raw json.RawMessage
	if pr.round != nil {
		v, err := pr.round.ask(approvalKey, params)
		if err != nil {
			return nil, errInput
		}
		raw, _ = v.(json.RawMessage)
	} else {
		res, err := pr.session.Elicit(ctx, params)
		if err != nil {
			r := failure("approval_required", fmt.Sprintf("%s needs a person's approval, and asking the client failed: %v", t.Name, err))
			return &r, nil
		}
		raw, _ = json.Marshal(res)
	}
	var ans mcp.ElicitResult
	_ = json.Unmarshal(raw, &ans)
	approved, _ := ans.Content["approve"].(bool)
	reason, _ := ans.Content["reason"].(string)
	approved = approved && ans.Action == "accept"
	action := audit.ApprovalDenied
	if approved {
		action = audit.ApprovalApproved
	}
	if err := audit.Record(ctx, s.d.Audit, audit.Entry{TenantID: p.TenantID, Action: action, TargetType: "tool", TargetID: t.Name, WorkspaceID: ws,
		Detail: audit.Detail(map[string]any{"via": "mcp", "tool": t.Name, "external": t.External, "arguments": audit.Summarize(args),
			"elicitation": ans.Action, "reason": audit.Clip(reason, 300)})}); err != nil {
		s.d.Logger.Error("mcp: recording an approval in the audit log", "tool", t.Name, "err", err)
	}
	if approved {
		return nil, nil
	}
	msg := "the client's user did not approve this call (" + ans.Action + ")"
	if reason != "" {
		msg += ": " + reason
	}
	r := failure("denied", msg)
	return &r, nil
}

// errInput: the round waits for the client's answer to the approval.
var errInput = errors.New("mcp: waiting for the client's approval")
