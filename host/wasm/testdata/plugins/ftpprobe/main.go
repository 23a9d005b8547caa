// Command ftpprobe is a hostile test connector of file servers. It calls
// the filetransfer capability's operations as asked, keeps everything it
// is answered (errors included) in a variable, in its memory and in its
// logs, returns it, and scans its own linear memory for a needle the test
// hands it masked (connprobe's scan: scan.go is a link to connprobe's).
package main

import (
	"encoding/json"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/filetransfer"
)

type opArgs struct {
	Op         string `json:"op"`
	Connection string `json:"connection"`
	Path       string `json:"path,omitempty"`
	Data       string `json:"data,omitempty"`
	Overwrite  bool   `json:"overwrite,omitempty"`
	MaxBytes   int64  `json:"maxBytes,omitempty"`
	Limit      int    `json:"limit,omitempty"`
}

// kept holds every answer, so a later scan finds whatever reached the guest.
var kept []string

func op(a opArgs) (string, error) {
	var out any
	var err error
	switch a.Op {
	case "list":
		out, err = filetransfer.List(a.Connection, a.Path, a.Limit)
	case "stat":
		out, err = filetransfer.Stat(a.Connection, a.Path)
	case "read":
		out, err = filetransfer.Read(a.Connection, a.Path, a.MaxBytes)
	case "write":
		out, err = filetransfer.Write(a.Connection, a.Path, []byte(a.Data), a.Overwrite)
	case "mkdir":
		out, err = filetransfer.Mkdir(a.Connection, a.Path)
	default:
		return "", pdk.Errorf("invalid", "unknown op %q", a.Op)
	}
	text := ""
	if err != nil {
		text = "error: " + err.Error()
	} else {
		b, _ := json.Marshal(out)
		text = string(b)
		if f, ok := out.(filetransfer.File); ok {
			text += "\n" + string(f.Data)
		}
	}
	kept = append(kept, text)
	pdk.VarSet("last", []byte(text))
	pdk.Log(pdk.LogInfo, "answer: %s", text)
	if err != nil {
		return "", err
	}
	return text, nil
}

func main() {}

func init() {
	pdk.Tool("op", "Calls one filetransfer operation and returns what it answered.", op)
	pdk.Tool("peek", "op as a read-only tool.", op, pdk.ReadOnly())
	// Not read-only: the same variant, so the same instance, as op.
	pdk.Tool("scan", "Counts a masked needle's occurrences in the guest's memory.", scan)
	pdk.Tool("getVar", "Returns the variable the last op kept and everything kept.", func(struct{}) (string, error) {
		b, _ := pdk.VarGet("last")
		return string(b) + strings.Join(kept, "\n"), nil
	})
}
