package pdk

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ConfigGet returns a configuration value the host set for this plugin.
func ConfigGet(key string) (string, bool) {
	off := extismConfigGet(kernelWrite([]byte(key)))
	if off == 0 {
		return "", false
	}
	return string(kernelRead(off)), true
}

// VarGet returns a plugin-scoped variable (shared by the plugin's instances in
// agenthost, bounded in size).
func VarGet(name string) ([]byte, bool) {
	off := extismVarGet(kernelWrite([]byte(name)))
	if off == 0 {
		return nil, false
	}
	return kernelRead(off), true
}

// VarSet stores a plugin-scoped variable; a nil value deletes it.
func VarSet(name string, value []byte) {
	var v uint64
	if value != nil {
		v = kernelWrite(value)
	}
	extismVarSet(kernelWrite([]byte(name)), v)
}

// LogLevel orders log messages.
type LogLevel int

// Log levels, as Extism numbers them.
const (
	LogDebug LogLevel = iota + 1
	LogInfo
	LogWarn
	LogError
)

// Log sends a message to the host's structured log.
func Log(level LogLevel, format string, args ...any) {
	off := kernelWrite([]byte(fmt.Sprintf(format, args...)))
	switch level {
	case LogDebug:
		extismLogDebug(off)
	case LogWarn:
		extismLogWarn(off)
	case LogError:
		extismLogError(off)
	default:
		extismLogInfo(off)
	}
}

// HTTPRequest is a request sent through the host (capability "http"). The host
// decides which hosts and methods are allowed; a refused request ends the call
// with an error naming the host.
type HTTPRequest struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
}

// HTTPResponse is the host's answer.
type HTTPResponse struct {
	Status  int
	Headers map[string]string // lower-case names
	Body    []byte
}

// HTTP sends req through the host.
func HTTP(req HTTPRequest) HTTPResponse {
	doc, _ := json.Marshal(struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers,omitempty"`
	}{req.URL, strings.ToUpper(req.Method), req.Headers})
	var body uint64
	if len(req.Body) > 0 {
		body = kernelWrite(req.Body)
	}
	respOff := extismHTTPRequest(kernelWrite(doc), body)
	resp := HTTPResponse{Status: int(extismHTTPStatusCode())}
	resp.Body = kernelRead(respOff)
	if h := extismHTTPHeaders(); h != 0 {
		_ = json.Unmarshal(kernelRead(h), &resp.Headers)
	}
	return resp
}
