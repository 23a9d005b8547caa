// Package actions is the action-tool adapter: legacy workflow actions,
// shipped as plugins of kind "actions", run as agent tools, so they serve
// agents without being rewritten (docs/plugins.md).
//
// The plugin runtime does most of it: a plugin's manifest declares its
// method.action descriptors, the host checks them against what the code
// registers, makes each dynamicMode action a tool named "method.action"
// (context_neutralizeData on the wire to a model), validates arguments
// against the action's parameter schema and its result against the
// ActionResult schema. The Adapter does the rest, on the way back: a failed
// ActionResult becomes an error result, and its documents are stored as
// files of the caller's workspace through the file bridge, so the
// model gets a docItem: reference for each, which other tools take.
package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/wasm"
)

// Codes of the error results the adapter makes; a model sees them.
const (
	// CodeActionFailed: the action ran and reported failure (success false).
	CodeActionFailed = "action_failed"
	// CodeDocumentsNotStored: the action succeeded, and its documents could
	// not be stored (no caller, no file store, a refused upload).
	CodeDocumentsNotStored = "documents_not_stored"
)

// Runner runs tools: the plugin host, or a wrapper of it (billing).
type Runner interface {
	Tools() []wasm.ToolInfo
	Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result
}

// DocumentStore stores one document as a file of the tool call's caller,
// bound to the caller's workflow (files.Capability.Store).
type DocumentStore interface {
	Store(ctx context.Context, tool, name, mimeType string, data []byte, label string) (files.WriteResult, error)
}

// Limits bound the documents of one ActionResult; zero fields take the
// defaults.
type Limits struct {
	// MaxDocumentBytes bounds one document [16 MiB].
	MaxDocumentBytes int
	// MaxTotalBytes bounds all documents of one result [64 MiB].
	MaxTotalBytes int
}

// Default limits.
const (
	DefaultMaxDocumentBytes = 16 << 20
	DefaultMaxTotalBytes    = 64 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxDocumentBytes <= 0 {
		l.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return l
}

// Adapter is a Runner that maps the results of legacy actions; other tools'
// calls pass through untouched.
type Adapter struct {
	runner   Runner
	versions Versions
	docs     DocumentStore
	limits   Limits
}

// NewAdapter wraps runner; docs stores the actions' documents (nil: an
// action that returns documents fails with documents_not_stored).
func NewAdapter(runner Runner, docs DocumentStore, limits Limits) *Adapter {
	return &Adapter{runner: runner, docs: docs, limits: limits.withDefaults()}
}

// Tools lists the runner's tools; an actions plugin's are its dynamicMode
// actions.
func (a *Adapter) Tools() []wasm.ToolInfo { return a.runner.Tools() }

// Call runs a tool; an action's result is mapped (see the package doc).
func (a *Adapter) Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result {
	res := a.runner.Call(ctx, tool, args, opts)
	info, ok := a.lookup(tool)
	if !ok || !info.IsAction() || !res.OK {
		return res
	}
	return a.mapResult(ctx, info, res)
}

// Versions lists the tools of every loaded plugin version as
// "tool@version" (wasm.Host), for tool sets that pin a version.
type Versions interface {
	VersionedTools() []wasm.ToolInfo
}

// WithVersions lets the adapter map the results of pinned actions
// ("method.action@1.2.0"), judged by the pinned version's manifest.
func (a *Adapter) WithVersions(v Versions) *Adapter {
	a.versions = v
	return a
}

func (a *Adapter) lookup(name string) (wasm.ToolInfo, bool) {
	ts := a.runner.Tools()
	if strings.Contains(name, "@") {
		if a.versions == nil {
			return wasm.ToolInfo{}, false
		}
		ts = a.versions.VersionedTools()
	}
	i := sort.Search(len(ts), func(i int) bool { return ts[i].Name >= name })
	if i < len(ts) && ts[i].Name == name {
		return ts[i], true
	}
	// The runner may list its tools in another order.
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return wasm.ToolInfo{}, false
}

// Result is an action's result as a guest returns it
// (manifest.ActionResultSchema, which the host checked).
type Result struct {
	Success   bool            `json:"success"`
	Error     string          `json:"error,omitempty"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Documents []Document      `json:"documents,omitempty"`
}

// Document is one document of an ActionResult; Data is decoded from base64.
type Document struct {
	Name     string `json:"documentName"`
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"documentData"`
}

// Stored is a document as the model gets it back: where it now is.
type Stored struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	FileID   string `json:"fileId"`
	// DocItem is "docItem:<id>" when the call runs in a workflow.
	DocItem string `json:"docItem,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// Mapped is the structured result of a successful action.
type Mapped struct {
	Success   bool            `json:"success"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Documents []Stored        `json:"documents,omitempty"`
}

func fail(res wasm.Result, code, format string, args ...any) wasm.Result {
	return wasm.Result{Error: &wasm.Error{Code: code, Message: fmt.Sprintf(format, args...)}, Stats: res.Stats}
}

func (a *Adapter) mapResult(ctx context.Context, info wasm.ToolInfo, res wasm.Result) wasm.Result {
	var r Result
	if err := json.Unmarshal(res.Data, &r); err != nil {
		return fail(res, wasm.CodeInvalidOutput, "action %s returned no ActionResult: %v", info.Name, err)
	}
	if !r.Success {
		msg := strings.TrimSpace(r.Error)
		if msg == "" {
			msg = "the action failed without saying why"
		}
		return fail(res, CodeActionFailed, "%s", msg)
	}
	// Every document is checked before any is stored: a result is stored
	// whole or not at all.
	if info.ReadOnly && len(r.Documents) > 0 {
		return fail(res, wasm.CodeInvalidOutput, "action %s is read-only and returned %d document(s); storing them would be a write, so none was stored", info.Name, len(r.Documents))
	}
	total := 0
	for _, d := range r.Documents {
		if err := files.ValidateName("document", d.Name); err != nil {
			return fail(res, wasm.CodeInvalidOutput, "action %s: %v; no document was stored", info.Name, err)
		}
		if len(d.Data) > a.limits.MaxDocumentBytes {
			return fail(res, wasm.CodeOutputTooLarge, "action %s: document %q is %d bytes, over the limit of %d; no document was stored", info.Name, d.Name, len(d.Data), a.limits.MaxDocumentBytes)
		}
		total += len(d.Data)
	}
	if total > a.limits.MaxTotalBytes {
		return fail(res, wasm.CodeOutputTooLarge, "action %s: its documents are %d bytes together, over the limit of %d; no document was stored", info.Name, total, a.limits.MaxTotalBytes)
	}
	m := Mapped{Success: true, Text: r.Text, Data: r.Data}
	for _, d := range r.Documents {
		if a.docs == nil {
			return fail(res, CodeDocumentsNotStored, "action %s returned documents, and this host has no file store for them", info.Name)
		}
		w, err := a.docs.Store(ctx, info.Name, d.Name, d.MIMEType, d.Data, info.Name+":"+d.Name)
		if err != nil {
			return fail(res, CodeDocumentsNotStored, "action %s succeeded, and its document %q could not be stored: %v", info.Name, d.Name, err)
		}
		m.Documents = append(m.Documents, Stored{Name: w.Name, MIMEType: w.MIMEType, Size: w.Size, FileID: w.FileID, DocItem: w.DocItem, Warning: w.Warning})
	}
	data, err := json.Marshal(m)
	if err != nil {
		return fail(res, wasm.CodeInvalidOutput, "action %s: %v", info.Name, err)
	}
	return wasm.Result{OK: true, Text: m.forModel(), Data: data, Stats: res.Stats}
}

// forModel is what the model reads: the action's text and data, then each
// document with both references, like every tool that makes a file (the
// docItem: goes into another tool's documentList).
func (m Mapped) forModel() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(m.Text))
	if len(m.Data) > 0 && string(m.Data) != "null" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.Write(m.Data)
	}
	for _, d := range m.Documents {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Created '%s' (%d bytes)\n", d.Name, d.Size)
		if d.DocItem != "" {
			b.WriteString("documentList ref: " + d.DocItem + "\n")
		}
		b.WriteString("file id: " + d.FileID)
		if d.Warning != "" {
			b.WriteString("\nwarning: " + d.Warning)
		}
	}
	if b.Len() == 0 {
		return "(the action succeeded and returned nothing)"
	}
	return b.String()
}
