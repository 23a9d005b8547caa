// Command notebook is a test plugin for agent runs: lookup is read-only and
// takes a while (so tests can see read-only tools run in parallel), and
// writeNote changes plugin state (so tests can see writes run in order).
package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/agenthost/agenthost/pdk"
)

type lookupArgs struct {
	Topic   string `json:"topic" description:"what to look up" minLength:"1"`
	SleepMs int    `json:"sleepMs,omitempty" description:"how long the lookup takes" minimum:"0" maximum:"300000"`
}

type lookupResult struct {
	Topic string `json:"topic"`
	Fact  string `json:"fact"`
	// StartUs and EndUs let tests check that calls overlapped.
	StartUs int64 `json:"startUs"`
	EndUs   int64 `json:"endUs"`
}

type noteArgs struct {
	Text string `json:"text" description:"the note" minLength:"1"`
}

func init() {
	pdk.Tool("lookup", "Looks up a fact about a topic.", func(a lookupArgs) (lookupResult, error) {
		start := time.Now()
		time.Sleep(time.Duration(a.SleepMs) * time.Millisecond)
		return lookupResult{Topic: a.Topic, Fact: "the fact about " + a.Topic, StartUs: start.UnixMicro(), EndUs: time.Now().UnixMicro()}, nil
	}, pdk.ReadOnly())
	pdk.Tool("writeNote", "Saves a note and says how many notes there are.", func(a noteArgs) (string, error) {
		n := 0
		if b, ok := pdk.VarGet("count"); ok {
			n, _ = strconv.Atoi(string(b))
		}
		n++
		pdk.VarSet("count", []byte(strconv.Itoa(n)))
		return fmt.Sprintf("saved note %d: %s", n, a.Text), nil
	})
}

func main() {}
