package sqlquery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
)

// CapabilityName is the capability's name in manifests; its function is
// imported from module "agenthost:sqlquery".
const CapabilityName = "sqlquery"

// Capability lets a plugin query the databases the operator granted to the
// tool call's workspace. Without a configured service, calls answer
// not_configured.
type Capability struct {
	Service *Service
}

// Wasm returns the capability: query, a read.
func (c *Capability) Wasm() wasm.Capability {
	return wasm.Capability{
		Name:        CapabilityName,
		Description: "read-only, parameterised SQL queries against the databases the operator granted to the calling workspace",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "query", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				return c.query(ctx, req)
			}),
		},
	}
}

func (c *Capability) query(ctx context.Context, req json.RawMessage) (any, error) {
	caller, ok := toolcall.From(ctx)
	if !ok || caller.Principal.TenantID == "" {
		return nil, &wasm.CapabilityError{Code: "no_caller", Message: "sqlquery.query: this call acts for nobody"}
	}
	if c.Service == nil || len(c.Service.dbs) == 0 {
		return nil, &wasm.CapabilityError{Code: "not_configured", Message: "sqlquery.query: no database is configured (sqlQuery.databases in the configuration file, see docs/configuration.md)"}
	}
	var r wire.QueryRequest
	d := json.NewDecoder(bytes.NewReader(req))
	d.DisallowUnknownFields()
	d.UseNumber() // integers in params stay exact
	if err := d.Decode(&r); err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_arguments", Message: "sqlquery.query: request: " + err.Error()}
	}
	out, err := c.Service.Query(ctx, caller, r)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, &wasm.CapabilityError{Code: e.Code, Message: "sqlquery.query: " + e.Message}
		}
		return nil, &wasm.CapabilityError{Code: "error", Message: "sqlquery.query: " + err.Error()}
	}
	return out, nil
}
