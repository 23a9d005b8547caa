// Command membomb is a hostile test plugin: it allocates until memory runs out.
package main

import "github.com/agenthost/agenthost/pdk"

type args struct{}

var keep [][]byte

func init() {
	pdk.Tool("allocate", "Allocates memory without bound.", func(args) (string, error) {
		for {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = byte(i)
			}
			keep = append(keep, b)
		}
	}, pdk.ReadOnly())
}

func main() {}
