// Command hugeoutput is a hostile test plugin: it returns 64 MiB.
package main

import (
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

type args struct{}

func init() {
	pdk.Tool("flood", "Returns 64 MiB of text.", func(args) (string, error) {
		return strings.Repeat("x", 64<<20), nil
	}, pdk.ReadOnly())
}

func main() {}
