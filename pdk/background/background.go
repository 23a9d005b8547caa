// Package background starts background jobs of the agent and reads their
// state (capability "background"; declare it in plugin.json). Jobs start
// in the calling user's workspace and report to the calling workflow.
package background

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/background/wire"
)

// Start queues a job.
func Start(r wire.StartRequest) (wire.Job, error) {
	var j wire.Job
	err := pdk.Invoke(start, r, &j)
	return j, err
}

// Status reads a job the caller may see.
func Status(jobID string) (wire.Job, error) {
	var j wire.Job
	err := pdk.Invoke(status, wire.StatusRequest{JobID: jobID}, &j)
	return j, err
}
