// Command jira is the Jira Cloud connector: services "issues" (projects'
// issues, their attachments, search by text) and "boards" (Agile boards and
// their issues), with plain typed structs over REST v3 and Agile 1.0. The
// user's connection (site URL, e-mail and API token) is attached by the
// host; this plugin never sees the token.
package main

import (
	"github.com/agenthost/agenthost/pdk/connector"
)

func main() {}

func init() {
	connector.Serve(map[string]connector.ServiceAdapter{"issues": issues{}, "boards": boards{}})
}
