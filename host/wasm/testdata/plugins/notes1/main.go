// Command notes1 is a test plugin: the first version of notes, one read-only tool (upgrade tests widen it).
// The notes plugins are one plugin's versions as far as their code goes;
// the tests give them one name.
package main

import "github.com/agenthost/agenthost/pdk"

type args struct {
	Key string `json:"key" description:"the note's key"`
}

func init() {
	pdk.Tool("read", "Reads a note.", func(a args) (string, error) { return "note " + a.Key, nil }, pdk.ReadOnly())
}

func main() {}
