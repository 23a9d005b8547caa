// Command toolbox is a test plugin for benchmarks: twenty read-only tools
// (tool01 … tool20), each returning its input, so an agent round offers a
// tool set of realistic size.
package main

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk"
)

type args struct {
	Query string `json:"query" description:"what to look up" minLength:"1"`
	Limit int    `json:"limit,omitempty" description:"how many results" minimum:"1" maximum:"100"`
}

func init() {
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("tool%02d", i)
		pdk.Tool(name, fmt.Sprintf("Looks up %q in source number %d.", "query", i), func(a args) (string, error) {
			return name + ": " + a.Query, nil
		}, pdk.ReadOnly())
	}
}

func main() {}
