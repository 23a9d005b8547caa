// Command echo is a test plugin: it returns its input text unchanged.
package main

import "github.com/agenthost/agenthost/pdk"

type args struct {
	Text string `json:"text" description:"text to return"`
}

func init() {
	pdk.Tool("echo", "Returns the text it is given.", func(a args) (string, error) { return a.Text, nil }, pdk.ReadOnly())
	pdk.Tool("echoJSON", "Returns its arguments as JSON.", func(a args) (args, error) { return a, nil }, pdk.ReadOnly())
}

func main() {}
