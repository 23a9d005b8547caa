package pdk

import (
	"encoding/json"
	"fmt"
)

// Invoke calls an agenthost capability function that follows the JSON
// convention of docs/plugin-abi.md: the request is encoded into kernel memory,
// fn is the imported function, and the response's data is decoded into resp
// (which may be nil). A capability error comes back as *Error.
//
// Capability bindings live in subpackages (pdk/progress, …), each importing its
// own functions, so a plugin imports — and must declare — only what it uses.
func Invoke(fn func(uint64) uint64, req, resp any) error {
	doc, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding capability request: %w", err)
	}
	// Requests and answers may be megabytes (a file's base64): they cross
	// in one host call each (blockWrite, blockRead), not 8 bytes a call.
	out := blockRead(fn(blockWrite(doc)))
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *Error          `json:"error"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		return fmt.Errorf("decoding capability response: %w", err)
	}
	if !env.OK {
		if env.Error == nil {
			env.Error = &Error{Code: "error", Message: "capability failed"}
		}
		return env.Error
	}
	if resp != nil && len(env.Data) > 0 {
		return json.Unmarshal(env.Data, resp)
	}
	return nil
}
