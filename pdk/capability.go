package pdk

import (
	"bytes"
	"encoding/json"
	"fmt"

	gojson "github.com/agenthost/agenthost/pdk/internal/gojson"
)

// Invoke calls an agenthost capability function that follows the JSON
// convention of docs/plugin-abi.md: the request is encoded into kernel memory,
// fn is the imported function, and the response's data is decoded into resp
// (which may be nil). A capability error comes back as *Error.
//
// Capability bindings live in subpackages (pdk/progress, …), each importing its
// own functions, so a plugin imports — and must declare — only what it uses.
func Invoke(fn func(uint64) uint64, req, resp any) error {
	// Requests and answers may be megabytes (a file in base64). They cross
	// in one host call each (blockWrite, blockRead), not 8 bytes a call.
	// Requests are encoded by encoding/json (go-json knows no omitzero);
	// answers are decoded by go-json, several times faster in Wasm, where
	// encoding/json's scan of a large string dominates.
	doc, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding capability request: %w", err)
	}
	out := blockRead(fn(blockWrite(doc)))
	// The host answers success as okPrefix DATA "}": DATA is decoded
	// straight away, without a first pass over the whole envelope. Anything
	// else (an error, another host's spelling) takes the full parse.
	if resp != nil && bytes.HasPrefix(out, okPrefix) && out[len(out)-1] == '}' {
		if err := gojson.Unmarshal(out[len(okPrefix):len(out)-1], resp); err == nil {
			return nil
		}
	}
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *Error          `json:"error"`
	}
	if err := gojson.Unmarshal(out, &env); err != nil {
		return fmt.Errorf("decoding capability response: %w", err)
	}
	if !env.OK {
		if env.Error == nil {
			env.Error = &Error{Code: "error", Message: "capability failed"}
		}
		return env.Error
	}
	if resp != nil && len(env.Data) > 0 {
		return gojson.Unmarshal(env.Data, resp)
	}
	return nil
}

var okPrefix = []byte(`{"ok":true,"data":`)
