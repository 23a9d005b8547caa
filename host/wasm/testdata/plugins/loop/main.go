// Command loop is a hostile test plugin: its tool never returns.
package main

import "github.com/agenthost/agenthost/pdk"

type args struct{}

var sink int

func init() {
	pdk.Tool("spin", "Loops forever.", func(args) (string, error) {
		for {
			sink++
		}
	}, pdk.ReadOnly())
}

func main() {}
