package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// ErrNoConnector: no loaded connector plugin serves the connection's
// provider and the asked service.
var ErrNoConnector = errors.New("no connector for this provider and service")

// Plugins lists the loaded plugins (*wasm.Host).
type Plugins interface {
	Plugins() []*wasm.Plugin
}

// Resolver is the connector resolver: it picks the connector plugin
// for a connection (by its provider) and a service, and calls the
// plugin's ServiceAdapter operation as the user, whose connection the
// plugin then uses through the connection capability.
type Resolver struct {
	Plugins Plugins
	Service *Service
	// Audit records the operations with external side effects (an upload,
	// a mail sent) in the tenant's audit log; nil records none.
	Audit audit.Recorder
}

// sideEffects are the connector operations that change something at the
// provider: each call is recorded (Resolver.Audit).
var sideEffects = map[string]bool{wire.ToolUpload: true, wire.ToolSendMail: true}

// ConnectorError is a connector's failure, with its code (not_found,
// connection_rejected, rate_limited, ...).
type ConnectorError struct {
	Plugin, Code, Message string
	// Request, when set, is the provider request the failure followed
	// (the call's last, which failed), as the host sent it.
	Request *ProviderRequest
}

func (e *ConnectorError) Error() string {
	s := fmt.Sprintf("connector %s: %s: %s", e.Plugin, e.Code, e.Message)
	if e.Request != nil {
		s += " (" + e.Request.String() + ")"
	}
	return s
}

// Resolve returns p's connection id and the connector plugin serving its
// provider's service. Among several, a built-in wins, then the first by name.
func (r *Resolver) Resolve(ctx context.Context, p tenancy.Principal, id, service string) (Connection, *wasm.Plugin, error) {
	c, err := r.Service.Get(ctx, p, id)
	if err != nil {
		return Connection{}, nil, err
	}
	if c.Revoked {
		return c, nil, fmt.Errorf("%w: connection %q (%s); connect again", ErrRevoked, c.Label, c.Provider)
	}
	var found []*wasm.Plugin
	for _, pl := range r.Plugins.Plugins() {
		m := pl.Manifest()
		if m.Kind == manifest.KindConnector && m.Connector.Provider == c.Provider && m.Connector.HasService(service) {
			found = append(found, pl)
		}
	}
	if len(found) == 0 {
		return c, nil, fmt.Errorf("%w: provider %s, service %q", ErrNoConnector, c.Provider, service)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Builtin() != found[j].Builtin() {
			return found[i].Builtin()
		}
		return found[i].Name() < found[j].Name()
	})
	return c, found[0], nil
}

// Services lists the services the loaded connectors offer for provider.
func (r *Resolver) Services(provider string) []string {
	seen := map[string]bool{}
	var out []string
	for _, pl := range r.Plugins.Plugins() {
		m := pl.Manifest()
		if m.Kind != manifest.KindConnector || m.Connector.Provider != provider {
			continue
		}
		for _, s := range m.Connector.Services {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// call runs one connector operation for p and decodes its result into out.
func (r *Resolver) call(ctx context.Context, p tenancy.Principal, t wire.Target, tool string, args, out any) error {
	_, pl, err := r.Resolve(ctx, p, t.Connection, t.Service)
	if err != nil {
		return err
	}
	if c, ok := toolcall.From(ctx); !ok || c.Principal != p {
		ctx = toolcall.With(ctx, toolcall.Caller{Principal: p})
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	ctx, tr := withTrail(ctx)
	res := pl.Call(ctx, tool, b, &wasm.CallOptions{Tenant: p.TenantID})
	if sideEffects[tool] || !standardTools[tool] {
		r.record(ctx, p, t, pl.Name(), tool, args, res)
	}
	if !res.OK {
		if res.Error == nil {
			return &ConnectorError{Plugin: pl.Name(), Code: "error", Message: "the connector failed", Request: tr.failed()}
		}
		return &ConnectorError{Plugin: pl.Name(), Code: res.Error.Code, Message: res.Error.Message, Request: tr.failed()}
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		return &ConnectorError{Plugin: pl.Name(), Code: "bad_result", Message: fmt.Sprintf("%s answered %s with something else: %v", pl.Name(), tool, err)}
	}
	return nil
}

// Browse lists a path of the service.
func (r *Resolver) Browse(ctx context.Context, p tenancy.Principal, req wire.BrowseRequest) (wire.Listing, error) {
	var out wire.Listing
	err := r.call(ctx, p, req.Target(), wire.ToolBrowse, req, &out)
	return out, err
}

// Download fetches one file.
func (r *Resolver) Download(ctx context.Context, p tenancy.Principal, req wire.DownloadRequest) (wire.File, error) {
	var out wire.File
	if err := r.call(ctx, p, req.Target(), wire.ToolDownload, req, &out); err != nil {
		return wire.File{}, err
	}
	if req.MaxBytes > 0 && int64(len(out.Data)) > req.MaxBytes {
		// The connector is not trusted to have checked.
		return wire.File{}, fmt.Errorf("%w: %s is over the limit of %d bytes", tenancy.ErrInvalid, out.Name, req.MaxBytes)
	}
	return out, nil
}

// Upload stores a file: the upload ctx runs (WithUpload), or else
// req.Data. The connector gets the file's Size, never its bytes: it names
// ranges of it in its requests and the host streams them (UploadSource).
func (r *Resolver) Upload(ctx context.Context, p tenancy.Principal, req wire.UploadRequest) (wire.Entry, error) {
	src, ok := UploadFrom(ctx)
	if !ok {
		src = BytesSource(req.Name, req.MIMEType, req.Data)
		ctx = WithUpload(ctx, src)
	}
	req.Data, req.File, req.Size = nil, "", src.Size
	var out wire.Entry
	err := r.call(ctx, p, req.Target(), wire.ToolUpload, req, &out)
	return out, err
}

// Search searches the service.
func (r *Resolver) Search(ctx context.Context, p tenancy.Principal, req wire.SearchRequest) (wire.Listing, error) {
	var out wire.Listing
	err := r.call(ctx, p, req.Target(), wire.ToolSearch, req, &out)
	return out, err
}

// SendMail sends a message through a mail service.
func (r *Resolver) SendMail(ctx context.Context, p tenancy.Principal, req wire.SendMailRequest) (wire.Mail, error) {
	var out wire.Mail
	err := r.call(ctx, p, req.Target(), wire.ToolSendMail, req, &out)
	return out, err
}

// ListMail lists messages of a mail service.
func (r *Resolver) ListMail(ctx context.Context, p tenancy.Principal, req wire.ListMailRequest) (wire.MailList, error) {
	var out wire.MailList
	err := r.call(ctx, p, req.Target(), wire.ToolListMail, req, &out)
	return out, err
}

// Act runs one of a connector's own actions (Jira's createIssue,
// addComment, transitionIssue, assignIssue): a tool its manifest declares
// with its side effect (external) and does not mark read-only, which is
// recorded as a side effect like an upload. Read-only, undeclared or
// unknown tools are refused: reads go through Browse, Download and Search,
// and a change the connector does not own up to is not run.
func (r *Resolver) Act(ctx context.Context, p tenancy.Principal, t wire.Target, tool string, args, out any) error {
	_, pl, err := r.Resolve(ctx, p, t.Connection, t.Service)
	if err != nil {
		return err
	}
	if d, ok := pl.Manifest().Tool(tool); !ok || d.ReadOnly || d.External == "" || standardTools[tool] {
		return &ConnectorError{Plugin: pl.Name(), Code: "unsupported", Message: fmt.Sprintf("%s has no action %q", pl.Name(), tool)}
	}
	return r.call(ctx, p, t, tool, args, out)
}

// standardTools are the operations every connector has, called by name.
var standardTools = map[string]bool{wire.ToolBrowse: true, wire.ToolDownload: true, wire.ToolUpload: true, wire.ToolSearch: true,
	wire.ToolSendMail: true, wire.ToolListMail: true}

// record records a connector operation with external side effects: the
// operation, the connection and service, a bounded summary of the
// request (contents by their size only, never a token) and how it ended.
func (r *Resolver) record(ctx context.Context, p tenancy.Principal, t wire.Target, plugin, tool string, args any, res wasm.Result) {
	if r.Audit == nil {
		return
	}
	c, _ := toolcall.From(ctx)
	d := map[string]any{"tool": tool, "connector": plugin, "connection": t.Connection, "service": t.Service,
		"workflowId": c.WorkflowID, "ok": res.OK, "arguments": sideEffectSummary(args)}
	if res.Error != nil {
		d["error"] = audit.Clip(res.Error.Code+": "+res.Error.Message, 300)
	}
	_ = r.Audit.Record(ctx, audit.Entry{TenantID: p.TenantID, Actor: audit.Actor{Kind: audit.ActorUser, ID: p.UserID},
		Action: audit.ToolCalled, TargetType: "connector", TargetID: plugin + "." + tool, WorkspaceID: c.WorkspaceID,
		Detail: audit.Detail(d)})
}

// sideEffectSummary says what an operation sent, bounded: a mail's
// recipients and subject (the body by its size), a file's place, name and
// size (never its bytes).
func sideEffectSummary(args any) map[string]any {
	clip := func(list []string) []string {
		out := make([]string, 0, min(len(list), 20))
		for _, s := range list[:min(len(list), 20)] {
			out = append(out, audit.Clip(s, 200))
		}
		return out
	}
	switch a := args.(type) {
	case wire.SendMailRequest:
		return map[string]any{"to": clip(a.Mail.To), "cc": clip(a.Mail.Cc), "recipients": len(a.Mail.To) + len(a.Mail.Cc),
			"subject": audit.Clip(a.Mail.Subject, 200), "bodyBytes": len(a.Mail.Body)}
	case wire.UploadRequest:
		return map[string]any{"path": audit.Clip(a.Path, 300), "name": audit.Clip(a.Name, 200), "mimeType": audit.Clip(a.MIMEType, 100), "bytes": a.Size}
	}
	b, _ := json.Marshal(args)
	return audit.Summarize(b)
}
