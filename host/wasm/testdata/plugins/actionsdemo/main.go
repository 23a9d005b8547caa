// Command actionsdemo is a test plugin of kind actions: four legacy actions
// of the method "demo", three of them dynamicMode (agent tools).
package main

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk/actions"
)

type reportParams struct {
	Title string `json:"title" minLength:"1" maxLength:"80" description:"the report's title"`
	Rows  int    `json:"rows" minimum:"1" maximum:"100" description:"how many rows the CSV gets"`
}

type failParams struct {
	Reason string `json:"reason,omitempty"`
}

type peekParams struct {
	Key string `json:"key" enum:"alpha,beta"`
}

type archiveParams struct{}

func init() {
	actions.Register(actions.Descriptor{Method: "demo", Action: "report", DynamicMode: true,
		Description: "Writes a report (text) and its data (CSV) as two documents."},
		func(p reportParams) (actions.Result, error) {
			var csv strings.Builder
			csv.WriteString("row,value\n")
			for i := 1; i <= p.Rows; i++ {
				fmt.Fprintf(&csv, "%d,%d\n", i, i*i)
			}
			return actions.Success(fmt.Sprintf("report %q with %d rows", p.Title, p.Rows),
				actions.Document{Name: "report.txt", MIMEType: "text/plain", Data: []byte("Report: " + p.Title + "\n")},
				actions.Document{Name: "data.csv", MIMEType: "text/csv", Data: []byte(csv.String())}), nil
		})
	actions.Register(actions.Descriptor{Method: "demo", Action: "fail", DynamicMode: true,
		Description: "Always fails, the legacy way (success false)."},
		func(p failParams) (actions.Result, error) {
			if p.Reason == "" {
				p.Reason = "the ledger is locked"
			}
			return actions.Failure(p.Reason), nil
		})
	actions.Register(actions.Descriptor{Method: "demo", Action: "peek", DynamicMode: true, ReadOnly: true,
		Description: "Looks a value up; changes nothing."},
		func(p peekParams) (actions.Result, error) {
			r := actions.Success("the value of " + p.Key)
			r.Data = map[string]any{"key": p.Key, "value": len(p.Key)}
			return r, nil
		})
	actions.Register(actions.Descriptor{Method: "demo", Action: "archive",
		Description: "Archives the workflow (run by workflows, not chosen by an agent)."},
		func(archiveParams) (actions.Result, error) { return actions.Success("archived"), nil })
}

func main() {}
