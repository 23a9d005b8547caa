package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/host/docref"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
)

// DocumentLists expands docList references to the docItem references of
// their documents in a workflow of the principal (workflows.Service).
type DocumentLists interface {
	ExpandDocumentLists(ctx context.Context, p tenancy.Principal, workflowID string, refs []string) ([]string, error)
}

// WithDocumentLists makes the sets' plugin tools receive docList references
// in their document-list arguments as the documents of the list, in the
// caller's workflow. Without it a docList reaches the tool as
// written (the files capability refuses it).
func (r *Registry) WithDocumentLists(d DocumentLists) *Registry {
	r.docLists = d
	return r
}

// expandDocumentLists replaces the docList references in the document-list
// arguments of a call (docref.IsListParam, a list of strings in the
// schema) by their documents. args come back unchanged when none holds a
// docList; an expansion that fails, or that gives more documents than the
// schema's maxItems, is an invalid_arguments error the model can act on.
func expandDocumentLists(ctx context.Context, d DocumentLists, schema json.RawMessage, args []byte) ([]byte, *wasm.Error) {
	var in map[string]json.RawMessage
	if d == nil || json.Unmarshal(args, &in) != nil {
		return args, nil
	}
	var sc struct {
		Properties map[string]struct {
			Type     any  `json:"type"`
			MaxItems *int `json:"maxItems"`
			Items    struct {
				Type any `json:"type"`
			} `json:"items"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil {
		return args, nil
	}
	changed := false
	for name, raw := range in {
		p, ok := sc.Properties[name]
		if !ok || !docref.IsListParam(name) || p.Type != "array" || p.Items.Type != "string" {
			continue
		}
		var refs []string
		if json.Unmarshal(raw, &refs) != nil || !hasList(refs) {
			continue
		}
		c, _ := toolcall.From(ctx)
		got, err := d.ExpandDocumentLists(ctx, c.Principal, c.WorkflowID, refs)
		if err != nil {
			return nil, &wasm.Error{Code: wasm.CodeInvalidArguments, Message: fmt.Sprintf("%s: %v", name, err)}
		}
		if p.MaxItems != nil && len(got) > *p.MaxItems {
			return nil, &wasm.Error{Code: wasm.CodeInvalidArguments, Message: fmt.Sprintf(
				"%s: the references name %d documents and this tool takes at most %d: name fewer (docList:<messageId>:<label> for one message's, or docItem:<id>)",
				name, len(got), *p.MaxItems)}
		}
		b, err := json.Marshal(got)
		if err != nil {
			return nil, &wasm.Error{Code: wasm.CodeInvalidArguments, Message: fmt.Sprintf("%s: %v", name, err)}
		}
		in[name], changed = b, true
	}
	if !changed {
		return args, nil
	}
	out, err := json.Marshal(in)
	if err != nil {
		return nil, &wasm.Error{Code: wasm.CodeInvalidArguments, Message: err.Error()}
	}
	return out, nil
}

// hasList reports whether a docList reference is among refs.
func hasList(refs []string) bool {
	for _, s := range refs {
		if r, err := docref.ParseString(s); err == nil && r.Kind == docref.List {
			return true
		}
	}
	return false
}
