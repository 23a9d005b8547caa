package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// DefaultMaxDownload bounds one external download handed to a plugin.
const DefaultMaxDownload int64 = 64 << 20

// DefaultMaxUpload bounds one external upload when MaxUpload is unset:
// the workspace's own default upload limit.
const DefaultMaxUpload = files.DefaultMaxUpload

// FileOpener opens a workspace file for the tool call's caller by its id
// or docItem reference (*files.Capability).
type FileOpener interface {
	Open(ctx context.Context, c toolcall.Caller, ref string) (filemeta.Item, io.ReadCloser, error)
}

// ToolsCapability serves the host capability "connectors" to the
// connection tools (plugins/connections): the caller's connections, and
// browse, search, download, upload and mail through the ConnectorResolver.
// It acts for the tool call's caller only. Resolver may be set after the
// plugin host is built, before the first call.
type ToolsCapability struct {
	Resolver *Resolver
	// MaxDownload bounds one download (default DefaultMaxDownload).
	MaxDownload int64
	// Files opens the workspace file an upload names (wire.UploadRequest
	// File); the host reads it in ranges as the connector sends them.
	Files FileOpener
	// MaxUpload bounds one upload (default DefaultMaxUpload): the
	// operator's upload setting (AGENTHOST_MAX_UPLOAD), under which each
	// connector applies its provider's own documented limit.
	MaxUpload int64
	// Events, when set, gets a dataSourceAccess event in
	// the caller's workflow for each browse, search, download and upload
	// that succeeded (workflows.Service).
	Events Events
}

// Events appends events to a workflow (workflows.Service).
type Events interface {
	Append(ctx context.Context, p tenancy.Principal, workflowID string, typ workflows.EventType, payload any) (workflows.Event, error)
}

// access records that the caller's workflow reached into a source. A
// failure to record is not the operation's: the data was read already.
func (h *ToolsCapability) access(ctx context.Context, call *wasm.Call, p tenancy.Principal, t wire.Target, op, path string) {
	c, ok := toolcall.From(ctx)
	if h.Events == nil || !ok || c.WorkflowID == "" {
		return
	}
	d := workflows.DataSourceAccessData{Service: t.Service, Operation: op, Path: path}
	if call != nil {
		d.Tool = call.Tool
	}
	if conn, err := h.Resolver.Service.Get(ctx, p, t.Connection); err == nil {
		d.Provider = conn.Provider
	}
	_, _ = h.Events.Append(ctx, p, c.WorkflowID, workflows.EventDataSourceAccess, d)
}

// ListedConnection is a connection as the connection tools show it, with
// the services the loaded connectors offer for its provider.
type ListedConnection struct {
	Connection
	Services []string `json:"services"`
}

// Wasm returns the capability "connectors".
func (h *ToolsCapability) Wasm() wasm.Capability {
	mod := wasm.CapabilityPrefix + "connectors"
	return wasm.Capability{
		Name:        "connectors",
		Description: "the caller's connections to external providers; browse, search, download, upload, send and list mail, and the connectors' own actions",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(mod, "list", false, h.list),
			wasm.JSONFunction(mod, "browse", false, h.browse),
			wasm.JSONFunction(mod, "search", false, h.search),
			wasm.JSONFunction(mod, "download", false, h.download),
			wasm.JSONFunction(mod, "upload", true, h.upload),
			wasm.JSONFunction(mod, "send_mail", true, h.sendMail),
			wasm.JSONFunction(mod, "list_mail", false, h.listMail),
			wasm.JSONFunction(mod, "act", true, h.act),
		},
	}
}

func (h *ToolsCapability) caller(ctx context.Context) (tenancy.Principal, error) {
	if h.Resolver == nil || h.Resolver.Service == nil {
		return tenancy.Principal{}, capErr("unavailable", errors.New("connections are not configured on this host (no secret key?)"))
	}
	c, ok := toolcall.From(ctx)
	if !ok || c.Principal.UserID == "" {
		return tenancy.Principal{}, capErr("forbidden", errors.New("connections are used only inside a user's tool call"))
	}
	return c.Principal, nil
}

// toolErr keeps a connector's own code, else names the error.
func toolErr(err error) error {
	var ce *ConnectorError
	if errors.As(err, &ce) {
		return &wasm.CapabilityError{Code: ce.Code, Message: err.Error()}
	}
	if errors.Is(err, ErrNoConnector) {
		return capErr("no_connector", err)
	}
	return capErr(errorCode(err), err)
}

func (h *ToolsCapability) list(ctx context.Context, _ *wasm.Call, _ json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := h.Resolver.Service.List(ctx, p)
	if err != nil {
		return nil, toolErr(err)
	}
	out := []ListedConnection{}
	for _, c := range cs {
		if c.Revoked {
			continue
		}
		svcs := h.Resolver.Services(c.Provider)
		if svcs == nil {
			svcs = []string{}
		}
		out = append(out, ListedConnection{Connection: c, Services: svcs})
	}
	return map[string]any{"connections": out}, nil
}

func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, capErr("invalid_request", err)
	}
	return v, nil
}

func (h *ToolsCapability) browse(ctx context.Context, call *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[wire.BrowseRequest](raw)
	if err != nil {
		return nil, err
	}
	out, err := h.Resolver.Browse(ctx, p, req)
	if err != nil {
		return nil, toolErr(err)
	}
	h.access(ctx, call, p, req.Target(), "browse", req.Path)
	return out, nil
}

func (h *ToolsCapability) search(ctx context.Context, call *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[wire.SearchRequest](raw)
	if err != nil {
		return nil, err
	}
	out, err := h.Resolver.Search(ctx, p, req)
	if err != nil {
		return nil, toolErr(err)
	}
	h.access(ctx, call, p, req.Target(), "search", req.Query)
	return out, nil
}

func (h *ToolsCapability) download(ctx context.Context, call *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[wire.DownloadRequest](raw)
	if err != nil {
		return nil, err
	}
	limit := h.MaxDownload
	if limit <= 0 {
		limit = DefaultMaxDownload
	}
	if req.MaxBytes <= 0 || req.MaxBytes > limit {
		req.MaxBytes = limit
	}
	out, err := h.Resolver.Download(ctx, p, req)
	if err != nil {
		return nil, toolErr(err)
	}
	if out.Name == "" {
		return nil, capErr("bad_result", fmt.Errorf("the connector named no file for %q", req.Path+req.ID))
	}
	path := req.Path
	if path == "" {
		path = req.ID
	}
	h.access(ctx, call, p, req.Target(), "download", path)
	return out, nil
}

func (h *ToolsCapability) upload(ctx context.Context, call *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[wire.UploadRequest](raw)
	if err != nil {
		return nil, err
	}
	limit := h.MaxUpload
	if limit <= 0 {
		limit = DefaultMaxUpload
	}
	if req.File != "" {
		if len(req.Data) > 0 {
			return nil, capErr("invalid_request", errors.New("an upload names a file or carries data, not both"))
		}
		src, closeFn, err := h.open(ctx, req.File)
		if err != nil {
			return nil, err
		}
		defer closeFn()
		if src.Size > limit {
			return nil, capErr("too_large", fmt.Errorf("%s is %d bytes, over the upload limit of %d", src.Name, src.Size, limit))
		}
		if req.Name == "" {
			req.Name = src.Name
		}
		if req.MIMEType == "" {
			req.MIMEType = src.MIMEType
		}
		ctx = WithUpload(ctx, src)
	} else if int64(len(req.Data)) > limit {
		return nil, capErr("too_large", fmt.Errorf("%s is %d bytes, over the upload limit of %d", req.Name, len(req.Data), limit))
	}
	size := int64(len(req.Data))
	if src, ok := UploadFrom(ctx); ok {
		size = src.Size
	}
	out, err := h.Resolver.Upload(ctx, p, req)
	if err != nil {
		return nil, toolErr(err)
	}
	// What was sent, whatever the connector says.
	out.Size = size
	h.access(ctx, call, p, req.Target(), "upload", req.Path)
	return out, nil
}

// open opens the workspace file ref for the caller as an upload's
// source; the close function ends the read.
func (h *ToolsCapability) open(ctx context.Context, ref string) (*UploadSource, func(), error) {
	c, _ := toolcall.From(ctx)
	if h.Files == nil {
		return nil, nil, capErr("unavailable", errors.New("uploads from the workspace are not configured on this host"))
	}
	it, rc, err := h.Files.Open(ctx, c, ref)
	if err != nil {
		return nil, nil, err
	}
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		rc.Close()
		return nil, nil, capErr("error", fmt.Errorf("file %s cannot be read by ranges", it.ID))
	}
	return NewUploadSource(it.Name, it.MIMEType, it.Size, ra), func() { rc.Close() }, nil
}

func (h *ToolsCapability) sendMail(ctx context.Context, _ *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[wire.SendMailRequest](raw)
	if err != nil {
		return nil, err
	}
	out, err := h.Resolver.SendMail(ctx, p, req)
	if err != nil {
		return nil, toolErr(err)
	}
	return out, nil
}

// listMail lists a folder of a mail service (Outlook's, Gmail's) with
// the messages' text; a read, recorded like a browse.
func (h *ToolsCapability) listMail(ctx context.Context, call *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[wire.ListMailRequest](raw)
	if err != nil {
		return nil, err
	}
	out, err := h.Resolver.ListMail(ctx, p, req)
	if err != nil {
		return nil, toolErr(err)
	}
	h.access(ctx, call, p, req.Target(), "listMail", req.Folder)
	return out, nil
}

// ActRequest is one of a connector's own actions (Resolver.Act) as the
// connection tools ask for it: the action's arguments, to which the
// connection and service are added.
type ActRequest struct {
	Connection string          `json:"connection"`
	Service    string          `json:"service"`
	Action     string          `json:"action"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
}

// act runs a connector's action for the caller, on the caller's
// connection; the connection tool calling it is external, so the
// approval policy stood before it.
func (h *ToolsCapability) act(ctx context.Context, _ *wasm.Call, raw json.RawMessage) (any, error) {
	p, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	req, err := decode[ActRequest](raw)
	if err != nil {
		return nil, err
	}
	args := map[string]any{}
	if len(req.Arguments) > 0 && string(req.Arguments) != "null" {
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, capErr("invalid_request", fmt.Errorf("arguments must be an object: %w", err))
		}
	}
	// The connection and service are the request's, whatever the arguments say.
	args["connection"], args["service"] = req.Connection, req.Service
	var out json.RawMessage
	if err := h.Resolver.Act(ctx, p, wire.Of(req.Connection, req.Service), req.Action, args, &out); err != nil {
		return nil, toolErr(err)
	}
	return out, nil
}
