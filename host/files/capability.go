package files

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/agenthost/agenthost/host/docref"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
)

// DocumentResolver turns "docItem:<id>" references into a workflow's
// documents (workflows.Service).
type DocumentResolver interface {
	ResolveDocuments(ctx context.Context, p tenancy.Principal, workflowID string, refs []string) ([]workflows.Document, error)
}

// Bridge is the file bridge (docs/files.md) on the workflow side: a message that
// carries the new file as a document, and the fileCreated event
// (workflows.Service).
type Bridge interface {
	DocumentResolver
	AddMessage(ctx context.Context, p tenancy.Principal, m workflows.Message) (workflows.Message, error)
	Append(ctx context.Context, p tenancy.Principal, workflowID string, typ workflows.EventType, payload any) (workflows.Event, error)
}

// DefaultMaxRead bounds what files.read hands a plugin in one call.
const DefaultMaxRead int64 = 16 << 20

// Capability serves the host capability `files` to plugins: read (a file of
// the caller's workspace, by id or docItem reference) and write (a new file
// stored through the Service, so it is deduplicated and indexed, then bound
// to the caller's workflow by the bridge). Every call acts for the
// caller of the tool call (toolcall.From) inside its access rights.
//
// The fields may be set after the plugin host is built (the host and the
// services its capabilities reach are built in a cycle), but before the
// first call.
type Capability struct {
	Files *Service
	// Workflows binds written files to the caller's workflow and resolves
	// docItem references; nil makes write return only the file id.
	Workflows Bridge
	// MaxRead bounds one read (default DefaultMaxRead).
	MaxRead int64
	// Logger receives bridge failures (default: discard).
	Logger *slog.Logger
}

// Wasm returns the capability "files" (agenthost:files read, write, list,
// info, set_content, move, tag, propose).
func (h *Capability) Wasm() wasm.Capability {
	mod := wasm.CapabilityPrefix + "files"
	return wasm.Capability{
		Name:        "files",
		Description: "list, read and describe the workspace's files; store new ones (bound to the running workflow), write new versions, move, tag, propose edits",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(mod, "read", false, h.read),
			wasm.JSONFunction(mod, "write", true, h.writeInFolder),
			wasm.JSONFunction(mod, "list", false, h.list),
			wasm.JSONFunction(mod, "info", false, h.info),
			wasm.JSONFunction(mod, "set_content", true, h.setContent),
			wasm.JSONFunction(mod, "move", true, h.move),
			wasm.JSONFunction(mod, "tag", true, h.tag),
			wasm.JSONFunction(mod, "propose", true, h.propose),
		},
	}
}

// ReadResult is files.read's answer.
type ReadResult struct {
	FileID   string `json:"fileId"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Version  int    `json:"version"`
	// Offset is where Data starts in the file.
	Offset int64 `json:"offset,omitempty"`
	// Data is the content (base64), at most maxBytes of it.
	Data      string `json:"data"`
	Truncated bool   `json:"truncated,omitempty"`
}

// WriteResult is files.write's answer. DocItem and MessageID are empty when
// the call runs outside a workflow (or binding it failed: Warning says why).
type WriteResult struct {
	FileID    string `json:"fileId"`
	DocItem   string `json:"docItem,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	Name      string `json:"name"`
	MIMEType  string `json:"mimeType"`
	Size      int64  `json:"size"`
	// Existing is true when the same bytes under the same name were already
	// stored (deduplication) and that file is returned.
	Existing bool   `json:"existing,omitempty"`
	Warning  string `json:"warning,omitempty"`
}

func (h *Capability) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

func (h *Capability) caller(ctx context.Context) (toolcall.Caller, error) {
	c, ok := toolcall.From(ctx)
	if !ok || c.Principal.TenantID == "" || c.WorkspaceID == "" {
		return c, &wasm.CapabilityError{Code: "no_caller", Message: "this call runs for nobody (no user and workspace), so it may not reach files"}
	}
	if h.Files == nil {
		return c, &wasm.CapabilityError{Code: "unavailable", Message: "the files capability is not connected to a file store"}
	}
	return c, nil
}

// ResolveFile turns a plugin's "file" argument into a file id (docref
// parses it): a bare id is a file id; "docItem:<id>" is looked up among the
// documents of the caller's workflow (the reference an agent got from a
// tool); "docList:..." names several documents and is refused here.
func ResolveFile(ctx context.Context, docs DocumentResolver, c toolcall.Caller, ref string) (string, error) {
	if strings.TrimSpace(ref) == "" {
		return "", &wasm.CapabilityError{Code: "invalid_request", Message: "file is empty (want a file id or docItem:<id>)"}
	}
	r, err := docref.ParseString(ref)
	if err != nil {
		return "", &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("file: %v (want a file id or docItem:<id>)", err)}
	}
	switch r.Kind {
	case docref.Bare:
		return r.ID, nil
	case docref.List:
		return "", &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("%s names several documents; pass one docItem:<id> or file id", ref)}
	}
	if c.WorkflowID == "" || docs == nil {
		return "", &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("%s names a workflow document, and this call runs outside a workflow: use the file id", ref)}
	}
	found, err := docs.ResolveDocuments(ctx, c.Principal, c.WorkflowID, []string{r.String()})
	if err != nil {
		return "", capError(err)
	}
	if len(found) != 1 {
		return "", &wasm.CapabilityError{Code: "not_found", Message: ref + " is not a document of this workflow"}
	}
	return found[0].FileID, nil
}

// Open resolves ref for the caller and opens the file, refusing files of
// another workspace than the caller's: a tool works in the workspace that
// offered it. The caller closes the reader.
func (h *Capability) Open(ctx context.Context, c toolcall.Caller, ref string) (filemeta.Item, io.ReadCloser, error) {
	id, err := ResolveFile(ctx, h.Workflows, c, ref)
	if err != nil {
		return filemeta.Item{}, nil, err
	}
	item, r, err := h.Files.Open(ctx, c.Principal, id)
	if err != nil {
		return filemeta.Item{}, nil, capError(err)
	}
	if item.WorkspaceID != c.WorkspaceID {
		r.Close()
		return filemeta.Item{}, nil, &wasm.CapabilityError{Code: "not_found", Message: fmt.Sprintf("file %q is not in this workspace", id)}
	}
	return item, r, nil
}

func (h *Capability) read(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File     string `json:"file"`
		MaxBytes int64  `json:"maxBytes"`
		Offset   int64  `json:"offset"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "read: " + err.Error()}
	}
	if r.Offset < 0 {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "offset must not be negative"}
	}
	limit := h.MaxRead
	if limit <= 0 {
		limit = DefaultMaxRead
	}
	if r.MaxBytes < 0 {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "maxBytes must not be negative"}
	}
	if r.MaxBytes > 0 {
		limit = min(limit, r.MaxBytes)
	}
	item, rc, err := h.Open(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if r.Offset > item.Size {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("offset %d is past the end of the file (%d bytes)", r.Offset, item.Size)}
	}
	var src io.Reader
	if ra, ok := rc.(io.ReaderAt); ok {
		src = io.NewSectionReader(ra, r.Offset, limit)
	} else if _, err := io.CopyN(io.Discard, rc, r.Offset); err != nil {
		return nil, fmt.Errorf("files.read %s: %w", item.ID, err)
	} else {
		src = io.LimitReader(rc, limit)
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, fmt.Errorf("files.read %s: %w", item.ID, err)
	}
	return ReadResult{FileID: item.ID, Name: item.Name, MIMEType: item.MIMEType, Size: item.Size, Version: item.Version, Offset: r.Offset,
		Data: base64.StdEncoding.EncodeToString(data), Truncated: r.Offset+int64(len(data)) < item.Size}, nil
}

func (h *Capability) write(ctx context.Context, call *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
		Label    string `json:"label"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "write: " + err.Error()}
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "data is not base64: " + err.Error()}
	}
	return h.store(ctx, c, call.Tool, r.Name, r.MIMEType, data, r.Label)
}

// Store is files.write for the host's own use: it stores data as a new file
// of the tool call's caller's workspace and binds it to the caller's
// workflow (the bridge), as if the tool named tool had written it.
// The legacy action adapter (host/actions) stores an ActionResult's
// documents through it.
func (h *Capability) Store(ctx context.Context, tool, name, mimeType string, data []byte, label string) (WriteResult, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return h.store(ctx, c, tool, name, mimeType, data, label)
}

func (h *Capability) store(ctx context.Context, c toolcall.Caller, tool, name, mimeType string, data []byte, label string) (WriteResult, error) {
	item, existing, err := h.Files.Upload(ctx, c.Principal, Upload{WorkspaceID: c.WorkspaceID, Name: name,
		MIMEType: mimeType, Content: bytes.NewReader(data), Description: "made by tool " + tool})
	if err != nil {
		return WriteResult{}, capError(err)
	}
	res := WriteResult{FileID: item.ID, Name: item.Name, MIMEType: item.MIMEType, Size: item.Size, Existing: existing}
	if c.WorkflowID == "" || h.Workflows == nil {
		return res, nil
	}
	label = strings.TrimSpace(label)
	if label == "" {
		label = tool + ":" + item.Name
	}
	doc, msgID, err := Attach(ctx, h.Workflows, c, item, label, tool)
	if err != nil {
		// The file is stored and readable by its id, which the result
		// names; a failed bind is reported, not the write's failure.
		h.logger().Warn("files: binding a tool's file to its workflow", "file", item.ID, "workflow", c.WorkflowID, "err", err)
		res.Warning = "stored, but not attached to the workflow: " + err.Error()
		return res, nil
	}
	res.DocItem, res.MessageID = doc.Ref(), msgID
	return res, nil
}

// Attach is the bridge, the one place a tool's file joins a workflow: it
// binds a stored file to the caller's workflow as a document of a new assistant step
// message, then announces it with a fileCreated event. It returns the
// document (whose Ref is the docItem reference) and the message id.
func Attach(ctx context.Context, b Bridge, c toolcall.Caller, item filemeta.Item, label, tool string) (workflows.Document, string, error) {
	msg, err := b.AddMessage(ctx, c.Principal, workflows.Message{WorkflowID: c.WorkflowID, Status: workflows.MessageStep,
		Role: workflows.RoleAssistant, AgentName: tool, Content: fmt.Sprintf("%s created %q (%d bytes)", tool, item.Name, item.Size),
		Documents: []workflows.Document{{FileID: item.ID, Name: item.Name, MIMEType: item.MIMEType, Size: item.Size, Label: label}}})
	if err != nil {
		return workflows.Document{}, "", err
	}
	if len(msg.Documents) != 1 {
		return workflows.Document{}, "", fmt.Errorf("files: the bridge message carries %d documents, want 1", len(msg.Documents))
	}
	doc := msg.Documents[0]
	if _, err := b.Append(ctx, c.Principal, c.WorkflowID, workflows.EventFileCreated, workflows.FileCreatedData{
		FileID: item.ID, DocumentID: doc.ID, MessageID: msg.ID, Name: item.Name, MIMEType: item.MIMEType, Size: item.Size, Tool: tool}); err != nil {
		return doc, msg.ID, fmt.Errorf("files: fileCreated event: %w", err)
	}
	return doc, msg.ID, nil
}

// capError gives the domain errors the capability codes plugins see.
func capError(err error) error {
	var ce *wasm.CapabilityError
	if errors.As(err, &ce) {
		return err
	}
	code := "error"
	switch {
	case errors.Is(err, tenancy.ErrNotFound):
		code = "not_found"
	case errors.Is(err, tenancy.ErrForbidden):
		code = "forbidden"
	case errors.Is(err, tenancy.ErrInvalid):
		code = "invalid_request"
	case errors.Is(err, tenancy.ErrConflict):
		code = "conflict"
	}
	return &wasm.CapabilityError{Code: code, Message: err.Error()}
}
