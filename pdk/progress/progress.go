// Package progress reports a long call's progress to the user (capability
// "progress"; declare it in plugin.json).
package progress

import "github.com/agenthost/agenthost/pdk"

// Report says how far the call is (0..1) and what it is doing.
func Report(fraction float64, message string) error {
	return pdk.Invoke(report, struct {
		Fraction float64 `json:"fraction"`
		Message  string  `json:"message"`
	}{fraction, message}, nil)
}
