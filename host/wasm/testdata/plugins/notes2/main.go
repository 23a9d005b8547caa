// Command notes2 is a test plugin: notes with a tool added (upgrade tests).
// The notes plugins are one plugin's versions as far as their code goes;
// the tests give them one name.
package main

import "github.com/agenthost/agenthost/pdk"

type args struct {
	Key string `json:"key" description:"the note's key"`
}

func init() {
	pdk.Tool("read", "Reads a note.", func(a args) (string, error) { return "note " + a.Key, nil }, pdk.ReadOnly())
	pdk.Tool("deleteAll", "Deletes every note.", func(struct{}) (string, error) { return "deleted", nil })
}

func main() {}
