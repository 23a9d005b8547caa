package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/background/bgjob"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/background/wire"
)

// CapabilityName is the background capability's name in manifests; its
// functions are imported from module "agenthost:background".
const CapabilityName = "background"

// Capability lets a plugin start background jobs and read their state,
// always as the tool call's caller: a job starts in the caller's workspace
// and reports to the caller's workflow. The plugin host is built before the
// service, so a server holds it by pointer and sets Service before serving;
// until then its functions answer "unavailable".
type Capability struct {
	Service *Service
}

// Wasm returns the capability: start (write) and status (read), JSON
// functions of module "agenthost:background".
func (c *Capability) Wasm() wasm.Capability {
	return wasm.Capability{
		Name:        CapabilityName,
		Description: "start background jobs of the agent in the calling user's workspace (reported to the calling workflow when they end) and read their state",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "start", true, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				return c.call(ctx, "start", req)
			}),
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "status", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				return c.call(ctx, "status", req)
			}),
		},
	}
}

func (c *Capability) call(ctx context.Context, fn string, req json.RawMessage) (any, error) {
	caller, ok := toolcall.From(ctx)
	if !ok || caller.Principal.TenantID == "" || caller.WorkspaceID == "" {
		return nil, &wasm.CapabilityError{Code: "no_caller", Message: "background." + fn + ": this call acts for nobody in no workspace"}
	}
	if c.Service == nil {
		return nil, &wasm.CapabilityError{Code: "unavailable", Message: "background." + fn + ": background jobs do not run in this process"}
	}
	var out wire.Job
	var err error
	switch fn {
	case "start":
		var r wire.StartRequest
		if err := strictJSON(req, &r); err != nil {
			return nil, &wasm.CapabilityError{Code: "invalid_arguments", Message: "background.start: " + err.Error()}
		}
		var j bgjob.Job
		j, err = c.Service.Start(ctx, caller.Principal, StartRequest{WorkspaceID: caller.WorkspaceID, OriginWorkflowID: caller.WorkflowID,
			Description: r.Description, Subtasks: r.Subtasks, MaxCostCHF: r.MaxCostCHF})
		out = wireJob(j)
	case "status":
		var r wire.StatusRequest
		if err := strictJSON(req, &r); err != nil {
			return nil, &wasm.CapabilityError{Code: "invalid_arguments", Message: "background.status: " + err.Error()}
		}
		var j bgjob.Job
		j, err = c.Service.Get(ctx, caller.Principal, r.JobID)
		out = wireJob(j)
	}
	if err != nil {
		code := "error"
		switch {
		case errors.Is(err, tenancy.ErrInvalid):
			code = "invalid_arguments"
		case errors.Is(err, tenancy.ErrNotFound), errors.Is(err, tenancy.ErrForbidden):
			code = "not_found"
		}
		return nil, &wasm.CapabilityError{Code: code, Message: "background." + fn + ": " + err.Error()}
	}
	return out, nil
}

func wireJob(j bgjob.Job) wire.Job {
	return wire.Job{ID: j.ID, Status: string(j.Status), Description: j.Description, Progress: j.Progress,
		ResultSummary: j.ResultSummary, Error: j.Error, WorkflowID: j.WorkflowID}
}

func strictJSON(req json.RawMessage, v any) error {
	if err := wasm.DecodeRequest(req, v); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	return nil
}
