// Command netclient is a test plugin that makes HTTP requests through the
// host: a read-only fetch and a writing post, to URLs given as arguments.
package main

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/progress"
)

type args struct {
	URL    string `json:"url" description:"where to send the request"`
	Method string `json:"method,omitempty" enum:"GET,HEAD,POST,PUT,DELETE" description:"HTTP method (GET by default)"`
}

func request(a args) (string, error) {
	_ = progress.Report(0.1, "requesting "+a.URL)
	resp := pdk.HTTP(pdk.HTTPRequest{Method: a.Method, URL: a.URL, Body: []byte("payload")})
	return fmt.Sprintf("%d %s", resp.Status, resp.Body), nil
}

func init() {
	pdk.Tool("fetch", "Sends a request as a read-only tool.", request, pdk.ReadOnly())
	pdk.Tool("send", "Sends a request as a writing tool.", request)
}

func main() {}
