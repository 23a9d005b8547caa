// Command logflood is a hostile test plugin: it writes as much log output as
// it is asked to, through the Extism log functions and through stdio.
package main

import (
	"os"
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

type floodArgs struct {
	Count int    `json:"count" description:"messages to log"`
	Size  int    `json:"size" description:"bytes per message"`
	Level string `json:"level,omitempty" description:"debug, info, warn or error (default info)"`
}

type spewArgs struct {
	Bytes int  `json:"bytes" description:"bytes to write to stderr and to stdout"`
	Fail  bool `json:"fail,omitempty" description:"exit with an error afterwards"`
}

func init() {
	pdk.Tool("flood", "Logs count messages of size bytes each.", func(a floodArgs) (string, error) {
		level := map[string]pdk.LogLevel{"debug": pdk.LogDebug, "warn": pdk.LogWarn, "error": pdk.LogError}[a.Level]
		if level == 0 {
			level = pdk.LogInfo
		}
		msg := strings.Repeat("x", a.Size)
		for i := 0; i < a.Count; i++ {
			pdk.Log(level, "%s", msg)
		}
		return "logged", nil
	}, pdk.ReadOnly())
	pdk.Tool("spew", "Writes bytes to stderr and stdout, optionally exits with an error.", func(a spewArgs) (string, error) {
		chunk := []byte(strings.Repeat("y", 64<<10) + "\n")
		for n := 0; n < a.Bytes; n += len(chunk) {
			os.Stderr.Write(chunk)
			os.Stdout.Write(chunk)
		}
		// One write far larger than any buffer the host keeps.
		big := make([]byte, a.Bytes)
		os.Stderr.Write(big)
		if a.Fail {
			os.Stderr.WriteString("fatal: " + strings.Repeat("z", 20000) + "\n")
			os.Exit(2)
		}
		return "spewed", nil
	}, pdk.ReadOnly())
}

func main() {}
