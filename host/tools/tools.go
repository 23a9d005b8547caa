// Package tools is what an agent sees of the plugin runtime: the tools of a
// workspace's tool set, each with its description, JSON Schema and readOnly
// flag, and one way to call them. Tool sets are named lists ("core" plus
// extras per kind of workspace, docs/agent.md#tools); the registry resolves
// them against the tools the loaded plugins declare.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/docref"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
)

// Tool is one tool as a model sees it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
	// External is the side effect the tool has outside agenthost (a
	// plugin's manifest.Tool.External; "mcp" for an MCP server's tool not
	// known to be read-only); empty for none.
	External   string          `json:"external,omitempty"`
	Parameters json.RawMessage `json:"parameters"`
	Plugin     string          `json:"plugin"`
	// Unavailable says why the tool cannot be called now (its MCP server
	// is not reachable); empty when it can. Such a tool stays listed, so
	// that it does not vanish from a set without a word.
	Unavailable string `json:"unavailable,omitempty"`
	// UnavailableSince is when the tool became unavailable (its server's
	// first failure in a row); nil when it is available.
	UnavailableSince *time.Time `json:"unavailableSince,omitempty"`
}

// Runner runs plugin tools: the wasm host. Arguments are validated against
// the tool's schema by the runner before the guest runs.
type Runner interface {
	Tools() []wasm.ToolInfo
	Call(ctx context.Context, tool string, args []byte, opts *wasm.CallOptions) wasm.Result
}

// CoreSet is the set every workspace starts from.
const CoreSet = "core"

// AllTools in a set's list stands for every loaded tool.
const AllTools = "*"

// DefaultSets are the tool sets when the operator configures none: "core"
// lists the core tools (those that are loaded), and "all" offers
// every loaded tool.
func DefaultSets() map[string][]string {
	return map[string][]string{
		CoreSet: {"readFile", "writeFile", "listFiles", "searchFiles", "extractContent", "summarizeContent", "generateDocument", "webSearch", "fetchPage",
			// The rest of the file tools (plugins/filetools).
			"getFileInfo", "moveFile", "tagFile", "replaceInFile", "applyFileEdit",
			// The document tools (plugins/documents).
			"browseContainer", "readContentObjects", "readSection", "searchKnowledge", "extractContainerItem",
			// Background workflows (plugins/background).
			"startBackground", "checkBackgroundStatus"},
		// The documentAnalysis set (plugins/analysis) and the
		// file-making tools beyond core's generateDocument (plugins/docgen).
		"documentAnalysis": {"summarizeContent", "analyzeContent"},
		"authoring":        {"generateDocument", "editDocument", "createChart", "generateImage"},
		"all":              {AllTools},
		// The SQL chatbot: core (with webSearch) and sqlQuery,
		// which answers only for databases the operator configured and
		// granted, so it is offered where a workspace is meant to use one.
		"chatbot": {"@" + CoreSet, "sqlQuery"},
	}
}

// ErrBadSet wraps every reason a tool set cannot be resolved (unknown, or
// including itself): a configuration error, not a server fault.
var ErrBadSet = errors.New("tool set cannot be resolved")

// Registry resolves tool sets. A set lists tool names and other sets
// ("@core"); "tool@1.2.0" pins a tool to a version of its plugin.
type Registry struct {
	runner   Runner
	sets     map[string][]string
	versions Versions
	sources  SourceFinder  // nil: plugins only
	docLists DocumentLists // nil: docList references reach tools as written
	audit    audit.Recorder
}

// WithAudit records every call of a tool with external side effects in
// the caller's tenant's audit log: a tool of an external source (an MCP
// server) that the set does not know as read-only. Plugin tools act on
// the host's own data (files, knowledge) or reach providers through
// connectors, whose side effects host/connections records.
func (r *Registry) WithAudit(rec audit.Recorder) *Registry {
	r.audit = rec
	return r
}

// Versions lists the tools of every loaded plugin version as
// "tool@version" (wasm.Host), for sets that pin one; the runner runs such
// a name on that version.
type Versions interface {
	VersionedTools() []wasm.ToolInfo
}

// WithVersions lets sets pin tools to plugin versions ("tool@1.2.0").
// Without it a pinned name is missing.
func (r *Registry) WithVersions(v Versions) *Registry {
	r.versions = v
	return r
}

// NewRegistry returns a registry over the runner's tools; sets nil means
// DefaultSets.
func NewRegistry(runner Runner, sets map[string][]string) *Registry {
	if sets == nil {
		sets = DefaultSets()
	}
	return &Registry{runner: runner, sets: sets}
}

// Sets lists the names of the configured sets.
func (r *Registry) Sets() []string {
	names := make([]string, 0, len(r.sets))
	for n := range r.sets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Set resolves a tool set by name ("" is "core"), plus extra tool names.
// Names that no loaded plugin provides are reported in missing (a set may
// name tools whose plugins an installation does not carry) and left out.
func (r *Registry) Set(name string, extra ...string) (_ *Set, missing []string, _ error) {
	if name == "" {
		name = CoreSet
	}
	loaded := map[string]wasm.ToolInfo{}
	var all []string
	for _, t := range r.runner.Tools() {
		loaded[t.Name] = t
		all = append(all, t.Name)
	}
	names, err := r.expand(name, map[string]bool{})
	if err != nil {
		return nil, nil, err
	}
	names = append(names, extra...)
	s := &Set{runner: r.runner, byName: map[string]Tool{}, target: map[string]string{}, docLists: r.docLists, audit: r.audit}
	// A pin comes first: the set offers the pinned version under the
	// tool's own name, whatever else (an "all") would add.
	var pins []string
	for _, n := range names {
		if strings.Contains(n, "@") && !strings.HasPrefix(n, "@") {
			pins = append(pins, n)
		}
	}
	if len(pins) > 0 {
		versioned := map[string]wasm.ToolInfo{}
		if r.versions != nil {
			for _, t := range r.versions.VersionedTools() {
				versioned[t.Name] = t
			}
		}
		for _, n := range pins {
			t, ok := versioned[n]
			if !ok {
				missing = append(missing, n)
				continue
			}
			s.addAs(t, n)
		}
	}
	for _, n := range names {
		if strings.Contains(n, "@") {
			continue
		}
		if n == AllTools {
			for _, a := range all {
				s.add(loaded[a])
			}
			continue
		}
		t, ok := loaded[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		s.add(t)
	}
	return s, missing, nil
}

func (r *Registry) expand(name string, seen map[string]bool) ([]string, error) {
	if seen[name] {
		return nil, fmt.Errorf("%w: tool set %q includes itself", ErrBadSet, name)
	}
	seen[name] = true
	list, ok := r.sets[name]
	if !ok {
		return nil, fmt.Errorf("%w: unknown tool set %q (known: %s)", ErrBadSet, name, strings.Join(r.Sets(), ", "))
	}
	var out []string
	for _, n := range list {
		if sub, ok := strings.CutPrefix(n, "@"); ok {
			more, err := r.expand(sub, seen)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			continue
		}
		out = append(out, n)
	}
	delete(seen, name)
	return out, nil
}

// Set is a resolved tool set: what one agent run may call.
type Set struct {
	runner Runner
	byName map[string]Tool
	order  []string
	// target is the runner's name of a pinned tool ("tool@1.2.0").
	target   map[string]string
	sources  map[string]Source // the tools that are not the runner's
	problems []error
	docLists DocumentLists
	audit    audit.Recorder
}

func (s *Set) add(t wasm.ToolInfo) { s.addAs(t, "") }

// addAs adds t; a pinned tool's name is "tool@version": the set offers it
// as "tool" and runs it as pinned.
func (s *Set) addAs(t wasm.ToolInfo, pinned string) {
	name, _, _ := strings.Cut(t.Name, "@")
	if _, dup := s.byName[name]; dup {
		return
	}
	s.byName[name] = Tool{Name: name, Description: t.Description, ReadOnly: t.ReadOnly, External: t.External, Parameters: t.InputSchema, Plugin: t.Plugin}
	s.order = append(s.order, name)
	if pinned != "" {
		s.target[name] = pinned
	}
}

// Tools lists the set's tools in a stable order (as the set names them).
func (s *Set) Tools() []Tool {
	out := make([]Tool, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.byName[n])
	}
	return out
}

// Lookup returns a tool of the set by name.
func (s *Set) Lookup(name string) (Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Call runs a tool of the set. A name outside the set (a hallucinated tool)
// is an unknown_tool result naming the tools that exist, never a call.
func (s *Set) Call(ctx context.Context, name string, args []byte, opts *wasm.CallOptions) wasm.Result {
	t, ok := s.byName[name]
	if !ok {
		return wasm.Result{Error: &wasm.Error{Code: wasm.CodeUnknownTool,
			Message: fmt.Sprintf("there is no tool named %q; the tools are: %s", name, strings.Join(s.order, ", "))}}
	}
	// Document lists arrive in whatever shape the model chose.
	args = docref.CoerceArgs(t.Parameters, args)
	if _, external := s.sources[name]; !external {
		// A docList names documents of the caller's workflow, which only
		// the host can list; an external source could not
		// resolve them anyway.
		var bad *wasm.Error
		if args, bad = expandDocumentLists(ctx, s.docLists, t.Parameters, args); bad != nil {
			return wasm.Result{Error: bad}
		}
	}
	if c, ok := toolcall.From(ctx); ok {
		// A plugin instance serves one tenant; its calls are kept apart.
		ctx = wasm.WithTenant(ctx, c.Principal.TenantID)
	}
	if src, ok := s.sources[name]; ok {
		res := src.Call(ctx, name, args)
		if !t.ReadOnly {
			s.recordCall(ctx, t, src.Name(), args, res)
		}
		return res
	}
	if pinned, ok := s.target[name]; ok {
		name = pinned
	}
	return s.runner.Call(ctx, name, args, opts)
}

// recordCall records a call with external side effects: the tool, where
// it ran, a bounded summary of its arguments (secret-looking keys
// redacted) and how it ended.
func (s *Set) recordCall(ctx context.Context, t Tool, source string, args []byte, res wasm.Result) {
	c, ok := toolcall.From(ctx)
	if !ok || s.audit == nil {
		return
	}
	d := map[string]any{"tool": t.Name, "source": source, "workflowId": c.WorkflowID, "ok": res.OK,
		"arguments": audit.Summarize(args)}
	if res.Error != nil {
		d["error"] = audit.Clip(res.Error.Code+": "+res.Error.Message, 300)
	}
	_ = s.audit.Record(ctx, audit.Entry{TenantID: c.Principal.TenantID,
		Actor: audit.Actor{Kind: audit.ActorUser, ID: c.Principal.UserID}, Action: audit.ToolCalled,
		TargetType: "tool", TargetID: t.Name, WorkspaceID: c.WorkspaceID, Detail: audit.Detail(d)})
}
