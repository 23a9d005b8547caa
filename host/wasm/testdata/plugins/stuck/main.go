// Command stuck is a test plugin whose tool runs until it is stopped: it
// logs that it started, then spins (the shutdown tests need a call in flight).
package main

import "github.com/agenthost/agenthost/pdk"

type args struct{}

var sink int

func init() {
	pdk.Tool("spin", "Logs, then loops until stopped.", func(args) (string, error) {
		pdk.Log(pdk.LogInfo, "spinning")
		for {
			sink++
		}
	}, pdk.ReadOnly())
}

func main() {}
