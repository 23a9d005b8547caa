// Command ftpprobe is a hostile test connector of file servers. It calls
// the filetransfer capability's operations as asked, keeps everything it
// is answered (errors included) in a variable, in its memory and in its
// logs, returns it, and scans its own linear memory for a needle the test
// hands it masked (as connprobe does for HTTP connections).
package main

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"unsafe"

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

type scanArgs struct {
	// Masked is the needle, each byte XOR 0x5a, hex-encoded.
	Masked string `json:"masked"`
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

// scan counts occurrences of the needle in the guest's linear memory (see
// connprobe).
func scan(a scanArgs) (int, error) {
	m, err := hex.DecodeString(a.Masked)
	if err != nil || len(m) == 0 {
		return 0, pdk.Errorf("invalid", "masked needle")
	}
	needle := make([]byte, len(m))
	for i := range m {
		needle[i] = m[i] ^ 0x5a
	}
	top := make([]byte, 1<<16)
	end := uintptr(unsafe.Pointer(&top[len(top)-1]))
	self := uintptr(unsafe.Pointer(&needle[0]))
	mem := unsafe.Slice((*byte)(unsafe.Pointer(uintptr(1024))), end-1024)
	n := 0
	for i := 0; i+len(needle) <= len(mem); i++ {
		if mem[i] == needle[0] && uintptr(unsafe.Pointer(&mem[i])) != self && string(mem[i:i+len(needle)]) == string(needle) {
			n++
		}
	}
	for i := range needle {
		needle[i] = 0
	}
	return n, nil
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
