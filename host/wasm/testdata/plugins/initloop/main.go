// Command initloop is a hostile test plugin whose package initialisation
// spins forever: a host must bound instantiation like a call.
package main

import "github.com/agenthost/agenthost/pdk"

type args struct{}

var sink int

func init() {
	pdk.Tool("never", "Never reached.", func(args) (string, error) { return "", nil }, pdk.ReadOnly())
	for i := 0; ; i++ {
		sink += i
	}
}

func main() {}
