// Package pdk is the Go guest PDK of agenthost: plugin authors register typed
// tools, and the PDK speaks the Extism guest ABI for them (docs/plugin-abi.md),
// so the same plugin runs in agenthost and in any other Extism host.
//
// Build a plugin with `agenthost plugin build DIR`, which runs
// `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared` and embeds the
// manifest. Register tools from an init function:
//
//	func init() {
//		pdk.Tool("greet", "Greets someone.", func(a Args) (string, error) {
//			return "Hello, " + a.Name, nil
//		}, pdk.ReadOnly())
//	}
//
// A handler's argument type is a struct whose JSON Schema the PDK generates
// from its fields and tags (see Schema); the host validates arguments against it
// before the plugin runs. A string result is text; anything else is JSON.
//lint:file-ignore U1000 reached from //go:wasmexport functions, which the host calls and staticcheck cannot see

package pdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	gojson "github.com/agenthost/agenthost/pdk/internal/gojson"
)

// toolDef is one registered tool.
type toolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	ReadOnly     bool            `json:"readOnly"`
	External     string          `json:"external,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// ContentResult: the JSON result is MCP content blocks (see ContentResult).
	ContentResult bool `json:"contentResult,omitempty"`
	// Action is set for a legacy action (pdk/actions): the host reads it
	// from describe and compares it with the manifest's actions.
	Action *actionInfo `json:"action,omitempty"`
	invoke func(args []byte) (frame [][]byte)
}

type actionInfo struct {
	Method      string `json:"method"`
	Action      string `json:"action"`
	DynamicMode bool   `json:"dynamicMode"`
}

// runtime is the plugin's state: its tools and the host's I/O mode. A Wasm
// instance is single-threaded, and the PDK's exports are its only entry points.
type runtime struct {
	tools       map[string]*toolDef
	fastIOKnown bool
	fastIO1     bool
}

var rt = &runtime{tools: map[string]*toolDef{}}

// Option adjusts a tool's registration.
type Option func(*toolDef)

// ReadOnly marks a tool that changes nothing outside the call: the host may run
// it in parallel and links it only to read capabilities.
func ReadOnly() Option { return func(t *toolDef) { t.ReadOnly = true } }

// External declares the tool's side effect outside agenthost ("mail",
// "upload", "post", "create", "update", "delete", "payment", "other"): a
// workspace's approval policy may make such a call wait for a person
// (docs/agent.md#approval-policy). The host refuses a plugin whose
// read-only tool declares one.
func External(kind string) Option { return func(t *toolDef) { t.External = kind } }

// AsAction registers the tool as the legacy action method.action of an
// actions plugin (pdk/actions uses it; register the tool under the name
// "method.action"). dynamicMode says whether an agent may choose it.
func AsAction(method, action string, dynamicMode bool) Option {
	return func(t *toolDef) { t.Action = &actionInfo{Method: method, Action: action, DynamicMode: dynamicMode} }
}

// OutputSchema declares the JSON Schema of the tool's structured result; the
// host checks results against it.
func OutputSchema(schema json.RawMessage) Option {
	return func(t *toolDef) { t.OutputSchema = schema }
}

// ContentResult declares that the tool's JSON result is
// {"content": [...]} in MCP's content-block format (text, image, audio,
// resource): MCP clients receive the blocks, an agent the JSON.
func ContentResult() Option { return func(t *toolDef) { t.ContentResult = true } }

// InputSchema replaces the JSON Schema generated from the arguments struct
// with one written by hand (keywords the struct tags cannot say, such as
// allOf or if/then/else); the host validates arguments against it, and the
// struct still decodes them.
func InputSchema(schema json.RawMessage) Option {
	return func(t *toolDef) { t.InputSchema = schema }
}

// Tool registers a tool. A is the arguments struct (its JSON Schema is
// generated from it); R is the result: string for text, anything else JSON.
// Registering a name twice or an argument type that is not a struct panics at
// start-up, where the author sees it.
func Tool[A, R any](name, description string, handler func(args A) (R, error), opts ...Option) {
	if _, dup := rt.tools[name]; dup {
		panic(fmt.Sprintf("pdk: tool %q registered twice", name))
	}
	schema, err := Schema(reflect.TypeFor[A]())
	if err != nil {
		panic(fmt.Sprintf("pdk: tool %q: %v", name, err))
	}
	t := &toolDef{Name: name, Description: description, InputSchema: schema}
	for _, o := range opts {
		o(t)
	}
	t.invoke = func(raw []byte) [][]byte {
		var args A
		if len(raw) > 0 {
			if err := gojson.Unmarshal(raw, &args); err != nil {
				return errorFrame(Errorf("invalid_arguments", "%v", err))
			}
		}
		res, err := handler(args)
		if err != nil {
			return errorFrame(err)
		}
		return resultFrame(res)
	}
	rt.tools[name] = t
}

// Error is a tool failure with a code a model can act on.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorFrame encodes a failure; errors that are not *Error get code tool_error.
func errorFrame(err error) [][]byte {
	e := &Error{Code: "tool_error", Message: err.Error()}
	var typed *Error
	if errors.As(err, &typed) {
		e = typed
	}
	hdr, _ := json.Marshal(struct {
		OK    bool   `json:"ok"`
		Error *Error `json:"error"`
	}{false, e})
	return [][]byte{hdr, newline}
}

var newline = []byte{'\n'}

var (
	textHeader = []byte(`{"ok":true,"body":"text"}`)
	jsonHeader = []byte(`{"ok":true,"body":"json"}`)
)

func resultFrame(res any) [][]byte {
	switch v := res.(type) {
	case string:
		return [][]byte{textHeader, newline, []byte(v)}
	case json.RawMessage:
		return [][]byte{jsonHeader, newline, v}
	}
	body, err := json.Marshal(res)
	if err != nil {
		return errorFrame(Errorf("tool_error", "encoding result: %v", err))
	}
	return [][]byte{jsonHeader, newline, body}
}

// describe lists the registered tools, sorted by name.
func (r *runtime) describe() []byte {
	list := make([]*toolDef, 0, len(r.tools))
	for _, t := range r.tools {
		list = append(list, t)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	b, _ := json.Marshal(list)
	return b
}

// dispatch runs one call: input is TOOL "\n" ARGS. A panicking handler becomes
// an error result with code "panic", and the instance stays usable.
func (r *runtime) dispatch(input []byte) (frame [][]byte) {
	name, args := input, []byte(nil)
	for i, c := range input {
		if c == '\n' {
			name, args = input[:i], input[i+1:]
			break
		}
	}
	t, ok := r.tools[string(name)]
	if !ok {
		return errorFrame(Errorf("unknown_tool", "this plugin has no tool %q", name))
	}
	defer func() {
		if p := recover(); p != nil {
			frame = errorFrame(Errorf("panic", "tool %s panicked: %v", t.Name, p))
		}
	}()
	return t.invoke(args)
}
