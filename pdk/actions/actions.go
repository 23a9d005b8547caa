// Package actions lets a legacy workflow action (a method.action pair of the
// workflow system agenthost replaces, docs/plugins.md) run as a plugin of
// kind "actions": each action is one Go function with a descriptor.
//
//	func init() {
//		actions.Register(actions.Descriptor{Method: "context", Action: "neutralizeData",
//			Description: "Replaces personal data by placeholders.", DynamicMode: true},
//			func(p Params) (actions.Result, error) {
//				return actions.Success("done", actions.Document{Name: "out.txt", MIMEType: "text/plain", Data: b}), nil
//			})
//	}
//
// The parameters struct's JSON Schema is generated as for pdk.Tool, and the
// host validates arguments against it before the action runs. A Result is
// what every legacy action returns (success, documents, error): the host
// turns a failed one into an error result and stores each document as a workspace
// file of the caller, bound to the running workflow, handing the model its
// docItem: reference. The action needs no files capability for that.
//
// Every action is registered (the host checks the manifest against them);
// only DynamicMode actions become agent tools, named "method.action".
package actions

import (
	"github.com/agenthost/agenthost/pdk"
)

// Descriptor is a legacy action's registration.
type Descriptor struct {
	// Method groups actions ("context"): lower camel case, no underscore.
	Method string
	// Action names the action within its method ("neutralizeData").
	Action      string
	Description string
	// DynamicMode: an agent may choose the action, so it becomes a tool.
	DynamicMode bool
	// ReadOnly: the action changes nothing and returns no documents; the
	// host may run it in parallel with other read-only tools.
	ReadOnly bool
}

// Document is a file an action produces: a name, a type and the bytes.
type Document struct {
	Name     string
	MIMEType string
	Data     []byte
}

// Result is an action's outcome: success or the error, and what it made.
type Result struct {
	Success bool
	// Error says why the action failed (Success false).
	Error string
	// Text is a short account of the result for the model.
	Text string
	// Data is an optional structured result (any JSON value).
	Data any
	// Documents are stored by the host as workspace files.
	Documents []Document
}

// Success is a successful result with a text and documents.
func Success(text string, docs ...Document) Result {
	return Result{Success: true, Text: text, Documents: docs}
}

// Failure is a failed result: the model sees the message as the tool's error.
func Failure(message string) Result { return Result{Error: message} }

// wireDocument and wireResult are the ActionResult as the host reads it
// (host/wasm/manifest/action_result.json); []byte encodes as base64.
type wireDocument struct {
	DocumentName string `json:"documentName"`
	MIMEType     string `json:"mimeType"`
	DocumentData []byte `json:"documentData"`
}

type wireResult struct {
	Success   bool           `json:"success"`
	Error     string         `json:"error,omitempty"`
	Text      string         `json:"text,omitempty"`
	Data      any            `json:"data,omitempty"`
	Documents []wireDocument `json:"documents,omitempty"`
}

// Register registers an action. P is its parameters struct (see pdk.Schema).
// An error returned by fn fails the call like a failed Result does.
// Registering method.action twice panics at start-up.
func Register[P any](d Descriptor, fn func(params P) (Result, error)) {
	opts := []pdk.Option{pdk.AsAction(d.Method, d.Action, d.DynamicMode)}
	if d.ReadOnly {
		opts = append(opts, pdk.ReadOnly())
	}
	pdk.Tool(d.Method+"."+d.Action, d.Description, func(p P) (wireResult, error) {
		r, err := fn(p)
		if err != nil {
			return wireResult{}, err
		}
		w := wireResult{Success: r.Success, Error: r.Error, Text: r.Text, Data: r.Data}
		if !r.Success && w.Error == "" {
			w.Error = "the action failed without saying why"
		}
		for _, doc := range r.Documents {
			mt := doc.MIMEType
			if mt == "" {
				mt = "application/octet-stream"
			}
			w.Documents = append(w.Documents, wireDocument{DocumentName: doc.Name, MIMEType: mt, DocumentData: doc.Data})
		}
		return w, nil
	}, opts...)
}
