// Command google is the Google connector: services "drive" (folders
// browsed by path, files downloaded, Google-native documents exported,
// uploads, full-text search) and "gmail" (labels and messages, search,
// send, list), with plain typed structs over Drive v3 and Gmail v1 REST.
// The user's OAuth connection is attached by the host; this plugin never
// sees the token. google.golang.org/api is not used: see docs/connectors.md.
package main

import (
	"github.com/agenthost/agenthost/pdk/connector"
)

func main() {}

func init() {
	connector.Serve(map[string]connector.ServiceAdapter{"drive": drive{}, "gmail": gmail{}})
}
