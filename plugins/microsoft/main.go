// Command microsoft is the Microsoft 365 connector over Microsoft Graph
// v1.0, with plain typed structs over REST (msgraph-sdk-go takes 13 minutes
// and 3.6 GB to compile for wasip1): services "sharepoint" (sites'
// document libraries), "onedrive" (the user's drive), "outlook" (mail
// folders, messages, sending; calendar events) and "teams" (joined teams,
// channels, channel messages listed and posted). The user's OAuth
// connection is attached by the host; this plugin never sees the token.
package main

import (
	"github.com/agenthost/agenthost/pdk/connector"
)

func main() {}

func init() {
	connector.Serve(map[string]connector.ServiceAdapter{
		"sharepoint": sharepoint{},
		"onedrive":   onedrive{},
		"outlook":    outlook{},
		"teams":      teams{},
	})
}
