package wasm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Error codes of a failed call. Models see them, so they are stable and plain.
const (
	CodeUnknownPlugin    = "unknown_plugin"
	CodeUnknownTool      = "unknown_tool"
	CodeInvalidArguments = "invalid_arguments"
	CodeTimeout          = "timeout"
	CodeCanceled         = "canceled"
	CodeOutOfMemory      = "out_of_memory"
	CodeTrap             = "trap"
	CodePanic            = "panic"
	CodeOutputTooLarge   = "output_too_large"
	CodeInvalidOutput    = "invalid_output"
	CodeCapabilityDenied = "capability_denied"
	CodeHTTPDenied       = "http_denied"
	CodeHTTPFailed       = "http_failed"
	CodePluginError      = "plugin_error"
	CodeUnavailable      = "plugin_unavailable"
	// CodeNotReachable: the tool's server (an external MCP server) could
	// not be reached, so the call did not reach it either; the message
	// says why and since when.
	CodeNotReachable = "not_reachable"
	// CodeSpendingLimit: the call was refused before it started: the
	// tenant's credit or monthly budget would not cover it (the message
	// says which, and the sums). A workflow's own budget is another
	// matter (the model capability's "budget_exceeded").
	CodeSpendingLimit = "spending_limit"
)

// Error is why a call failed.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Result is the one shape every tool call ends in, success or not.
type Result struct {
	OK bool `json:"ok"`
	// Text is the text content (the body of a text result, or a summary of data).
	Text string `json:"text,omitempty"`
	// Data is the structured result, when the tool returned JSON.
	Data  json.RawMessage `json:"data,omitempty"`
	Error *Error          `json:"error,omitempty"`
	Stats Stats           `json:"stats"`
}

// Stats are the per-call figures the host records.
type Stats struct {
	Duration time.Duration `json:"durationNs"`
	// MemoryBytes is the guest's linear memory after the call: Wasm memory never
	// shrinks, so this is the instance's high-water mark.
	MemoryBytes uint64 `json:"memoryBytes"`
	InputBytes  int    `json:"inputBytes"`
	OutputBytes int    `json:"outputBytes"`
	// Reused says the call ran on a pooled instance rather than a new one.
	Reused bool `json:"reused"`
	// Wait is how long the call waited for an instance (all busy), or
	// started one; part of Duration.
	Wait time.Duration `json:"waitNs"`
}

func failed(code, format string, args ...any) Result {
	return Result{Error: &Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// frameHeader is the first line of a result frame (docs/plugin-abi.md).
type frameHeader struct {
	OK    bool   `json:"ok"`
	Body  string `json:"body"`
	Text  string `json:"text"`
	Error *Error `json:"error"`
}

// parseFrame turns a guest's output into a Result without re-encoding the body.
func parseFrame(out []byte) (Result, error) {
	nl := bytes.IndexByte(out, '\n')
	if nl < 0 {
		return Result{}, fmt.Errorf("result frame has no header line")
	}
	body := out[nl+1:]
	// The PDK writes these two headers for nearly every success; skip decoding them.
	switch string(out[:nl]) {
	case `{"ok":true,"body":"text"}`:
		return Result{OK: true, Text: string(body)}, nil
	case `{"ok":true,"body":"json"}`:
		if !json.Valid(body) {
			return Result{}, fmt.Errorf("result body is not valid JSON")
		}
		return Result{OK: true, Data: json.RawMessage(body)}, nil
	}
	var h frameHeader
	if err := json.Unmarshal(out[:nl], &h); err != nil {
		return Result{}, fmt.Errorf("result frame header: %w", err)
	}
	if !h.OK {
		if h.Error == nil {
			h.Error = &Error{Code: CodePluginError, Message: "plugin reported failure without an error"}
		}
		if h.Error.Code == "" {
			h.Error.Code = CodePluginError
		}
		return Result{Error: h.Error}, nil
	}
	r := Result{OK: true, Text: h.Text}
	switch h.Body {
	case "text":
		r.Text = string(body)
	case "json":
		if !json.Valid(body) {
			return Result{}, fmt.Errorf("result body is not valid JSON")
		}
		r.Data = json.RawMessage(body)
	case "none", "":
	default:
		return Result{}, fmt.Errorf("result frame: unknown body type %q", h.Body)
	}
	return r, nil
}
