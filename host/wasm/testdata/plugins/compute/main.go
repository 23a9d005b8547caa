// Command compute is a test plugin with a CPU-heavy deterministic tool.
package main

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/agenthost/agenthost/pdk"
)

type args struct {
	Rounds int `json:"rounds" minimum:"0" maximum:"100000000" description:"sha256 chain length"`
}

func init() {
	pdk.Tool("sha256Chain", "Hashes a seed repeatedly and returns the final digest.", func(a args) (string, error) {
		h := sha256.Sum256([]byte("agenthost"))
		for i := 0; i < a.Rounds; i++ {
			h = sha256.Sum256(h[:])
		}
		return hex.EncodeToString(h[:]), nil
	}, pdk.ReadOnly())
}

func main() {}
