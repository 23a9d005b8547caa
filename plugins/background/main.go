// Plugin background offers the agent its background workflow tools:
// startBackground hands long work (a description and subtasks) to a
// background job that runs its own agent on the job queue, within a budget,
// and reports to this workflow when it ends; checkBackgroundStatus reads a
// job's state. Both act as the calling user, in the calling workspace.
package main

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/background"
	"github.com/agenthost/agenthost/pdk/background/wire"
)

func main() {}

func init() {
	pdk.Tool("startBackground", "Start a background job for long work that need not finish in this conversation: "+
		"it runs its own agent with the description and subtasks, within maxCostCHF if given, and its result is "+
		"posted to this conversation when it ends. Returns the job id to check on it later.", start)
	pdk.Tool("checkBackgroundStatus", "Check a background job started before: its status (queued, running, completed, "+
		"failed, cancelled), progress (0 to 1) and, once it has ended, its result summary or error.", check, pdk.ReadOnly())
}

// StartArgs are startBackground's arguments.
type StartArgs struct {
	Description string   `json:"description" description:"what the job is to do, self-contained: nobody answers its questions" minLength:"1" maxLength:"4096"`
	Subtasks    []string `json:"subtasks,omitempty" description:"the steps, in order" maxItems:"20"`
	MaxCostCHF  string   `json:"maxCostCHF,omitempty" description:"the most the job may spend, in CHF as a decimal (e.g. 0.50)" pattern:"^[0-9]+(\\.[0-9]{1,9})?$"`
}

// CheckArgs are checkBackgroundStatus's arguments.
type CheckArgs struct {
	JobID string `json:"jobId" description:"the id startBackground returned" minLength:"1" maxLength:"64"`
}

func start(a StartArgs) (wire.Job, error) {
	return background.Start(wire.StartRequest{Description: a.Description, Subtasks: a.Subtasks, MaxCostCHF: a.MaxCostCHF})
}

func check(a CheckArgs) (wire.Job, error) {
	return background.Status(a.JobID)
}
