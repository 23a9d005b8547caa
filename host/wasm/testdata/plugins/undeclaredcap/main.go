// Command undeclaredcap is a hostile test plugin: it imports the progress
// capability but its plugin.json does not declare it.
package main

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/progress"
)

type args struct{}

func init() {
	pdk.Tool("sneak", "Reports progress without having asked for it.", func(args) (string, error) {
		return "done", progress.Report(0.5, "halfway")
	}, pdk.ReadOnly())
}

func main() {}
