package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
)

// policies is the workspace's approval policy by tool name (auto for the
// others), as workspace.Service answers it.
type policies map[string]string

func (p policies) ToolPolicyOf(_ context.Context, _ tenancy.Principal, _ string, t tools.Tool) (string, error) {
	if v, ok := p[t.Name]; ok {
		return v, nil
	}
	return "auto", nil
}

// auditLog keeps the entries recorded.
type auditLog struct {
	mu sync.Mutex
	es []audit.Entry
}

func (a *auditLog) Record(_ context.Context, e audit.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.es = append(a.es, e)
	return nil
}

func (a *auditLog) actions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, e := range a.es {
		out = append(out, e.Action)
	}
	return out
}

// TestApprovalByElicitation (issue 27 item 4): over MCP, a tool whose
// workspace policy is ask runs only when the client's user approves it by
// elicitation (MCP elicitation/create: on the session, or as the stateless
// revision's inputRequests); a decline refuses it with the user's reason;
// a client that cannot elicit gets approval_required; deny refuses at
// once. Each decision is audited.
func TestApprovalByElicitation(t *testing.T) {
	log := &auditLog{}
	f := newFixture(t, func(d *mcpserver.Deps) {
		d.Policies = policies{"writeNote": "ask", "echo": "deny"}
		d.Audit = log
	})
	ctx := context.Background()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			answer := map[string]any{"approve": true}
			var asked string
			cs, err := f.connect(t, f.ws, f.token, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = r.Params.Message
					if answer == nil {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: answer}, nil
				},
			}, v)
			if err != nil {
				t.Fatal(err)
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "approved note"}})
			if err != nil || r.IsError || !strings.Contains(textOf(t, r), "saved note") || !strings.Contains(asked, "writeNote") || !strings.Contains(asked, "approved note") {
				t.Fatalf("approved: %v %+v (asked %q)", err, r, asked)
			}
			answer = map[string]any{"approve": false, "reason": "not today"}
			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "refused note"}})
			if err != nil || !r.IsError || !strings.Contains(textOf(t, r), "did not approve this call (accept): not today") {
				t.Fatalf("refused: %v %+v", err, r)
			}
			answer = nil
			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "declined note"}})
			if err != nil || !r.IsError || !strings.Contains(textOf(t, r), "did not approve this call (decline)") {
				t.Fatalf("declined: %v %+v", err, r)
			}
			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			if err != nil || !r.IsError || !strings.Contains(textOf(t, r), "policy does not allow echo") {
				t.Fatalf("deny: %v %+v", err, r)
			}
		})
	}
	// A client of the stateless revision that declares no elicitation is
	// not asked: the call is refused, saying why.
	cs, err := f.connect(t, f.ws, f.token, &mcp.ClientOptions{}, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "writeNote", Arguments: map[string]any{"text": "x"}})
	if err != nil || !r.IsError || !strings.Contains(textOf(t, r), "does not support elicitation") {
		t.Fatalf("no elicitation: %v %+v", err, r)
	}
	want := []string{audit.ApprovalApproved, audit.ApprovalDenied, audit.ApprovalDenied}
	got := log.actions()
	if len(got) != 2*len(want) {
		t.Fatalf("audited %v, want %v per revision", got, want)
	}
	for i, a := range got {
		if a != want[i%len(want)] {
			t.Fatalf("audited %v, want %v per revision", got, want)
		}
	}
}
