// Command crash is a hostile test plugin: one tool panics (the PDK recovers),
// one crashes the Go runtime for real (a fatal error no recover catches).
package main

import (
	"sync"

	"github.com/agenthost/agenthost/pdk"
)

type args struct{}

func init() {
	pdk.Tool("panic", "Panics inside the handler.", func(args) (string, error) {
		var m map[string]int
		m["boom"] = 1 // nil map write: a runtime panic
		return "unreachable", nil
	}, pdk.ReadOnly())
	pdk.Tool("fatal", "Crashes the guest runtime.", func(args) (string, error) {
		var mu sync.Mutex
		mu.Unlock() // fatal error: sync: unlock of unlocked mutex
		return "unreachable", nil
	}, pdk.ReadOnly())
}

func main() {}
