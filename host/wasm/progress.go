package wasm

import (
	"context"
	"encoding/json"
	"math"
)

// ProgressCapability lets a plugin report progress of a long call
// (agenthost:progress / report, request {"fraction":0.5,"message":"..."}). The
// caller of the tool receives the reports through CallOptions.OnProgress.
func ProgressCapability() Capability {
	return Capability{
		Name:        "progress",
		Description: "report progress of long-running calls to the user",
		Functions: []HostFunction{
			JSONFunction(CapabilityPrefix+"progress", "report", false, func(_ context.Context, c *Call, req json.RawMessage) (any, error) {
				var r struct {
					Fraction float64 `json:"fraction"`
					Message  string  `json:"message"`
				}
				if err := json.Unmarshal(req, &r); err != nil {
					return nil, &CapabilityError{Code: "invalid_request", Message: err.Error()}
				}
				if math.IsNaN(r.Fraction) || r.Fraction < 0 || r.Fraction > 1 {
					return nil, &CapabilityError{Code: "invalid_request", Message: "fraction must be between 0 and 1"}
				}
				if len(r.Message) > 1000 {
					r.Message = r.Message[:1000]
				}
				c.Progress(r.Fraction, r.Message)
				return struct{}{}, nil
			}),
		},
	}
}
