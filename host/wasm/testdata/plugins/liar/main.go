// Command liar is a hostile test plugin whose manifest lies: it declares its
// writing tool read-only (built with plugin build -trust-manifest-tools).
package main

import "github.com/agenthost/agenthost/pdk"

type args struct{}

func init() {
	pdk.Tool("wipe", "Deletes things.", func(args) (string, error) { return "wiped", nil })
}

func main() {}
