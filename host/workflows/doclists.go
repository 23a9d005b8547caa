package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/docref"
	"github.com/agenthost/agenthost/host/tenancy"
)

// maxLabelPages bounds the message pages read to list a workflow's labels
// (only when a docList label is not found as written).
const maxLabelPages = 20

// maxLabelsNamed bounds the labels an error names.
const maxLabelsNamed = 20

// ExpandDocumentLists replaces every docList reference among refs by the
// docItem references of its documents in the workflow (a list
// names the documents carrying its label, in message order;
// "docList:<messageId>:<label>" only those of one message), and drops
// repeats: a document named twice, by docItem or through lists, or a bare
// file id that a listed document is, comes once. Other references are kept
// as written, for the tool to resolve. Without any docList, refs come back
// unchanged.
//
// A label is matched as written; failing that, ignoring case, then by the
// name after a tool's prefix ("report.md" for "writeFile:report.md"). A
// label that matches nothing is ErrNotFound naming the workflow's labels; one
// that matches several labels is ErrInvalid naming them. A docList outside a
// workflow (workflowID "") is ErrInvalid. Only p's own workflow is read: the
// store refuses another's.
func (s *Service) ExpandDocumentLists(ctx context.Context, p tenancy.Principal, workflowID string, refs []string) ([]string, error) {
	parsed := make([]docref.Ref, len(refs))
	ok := make([]bool, len(refs))
	var labels []string
	for i, raw := range refs {
		r, err := docref.ParseString(raw)
		if err != nil {
			// Not ours to judge: the tool reports what it cannot resolve.
			continue
		}
		parsed[i], ok[i] = r, true
		if r.Kind == docref.List {
			labels = append(labels, r.Label)
		}
	}
	if len(labels) == 0 {
		return refs, nil
	}
	if workflowID == "" {
		return nil, fmt.Errorf("%w: docList references name documents of a conversation, and this call runs in none: pass file ids", tenancy.ErrInvalid)
	}
	docs, err := s.store.Documents(ctx, p, workflowID, nil, labels)
	if err != nil {
		return nil, err
	}
	var all []Document // every document of the workflow, read when a label is not found as written
	out := make([]string, 0, len(refs))
	seen := map[string]bool{}
	for i, raw := range refs {
		r := parsed[i]
		if !ok[i] || r.Kind != docref.List {
			key := raw
			if ok[i] {
				key = r.ID
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, raw)
			}
			continue
		}
		found := pick(docs, r.MessageID, r.Label)
		if len(found) == 0 {
			if all == nil {
				if all, err = s.allDocuments(ctx, p, workflowID); err != nil {
					return nil, err
				}
			}
			label, err := matchLabel(all, r)
			if err != nil {
				return nil, err
			}
			found = pick(all, r.MessageID, label)
		}
		for _, d := range found {
			if seen[d.ID] || seen[d.FileID] {
				continue
			}
			seen[d.ID], seen[d.FileID] = true, true
			out = append(out, d.Ref())
		}
	}
	if len(out) > docref.MaxRefs {
		return nil, fmt.Errorf("%w: the document lists name %d documents, at most %d: name fewer (docList:<messageId>:<label> or docItem:<id>)", tenancy.ErrInvalid, len(out), docref.MaxRefs)
	}
	return out, nil
}

// pick is the documents of docs with the label (of the message, when one is
// named), in their order.
func pick(docs []Document, messageID, label string) []Document {
	var out []Document
	for _, d := range docs {
		if d.Label == label && (messageID == "" || d.MessageID == messageID) {
			out = append(out, d)
		}
	}
	return out
}

// allDocuments reads the workflow's documents through its messages, page by
// page, at most maxLabelPages pages.
func (s *Service) allDocuments(ctx context.Context, p tenancy.Principal, workflowID string) ([]Document, error) {
	all := []Document{}
	after := After{}
	for range maxLabelPages {
		page, err := s.store.Messages(ctx, p, workflowID, after, maxListLimit)
		if err != nil {
			return nil, err
		}
		for _, m := range page {
			all = append(all, m.Documents...)
		}
		if len(page) < maxListLimit {
			break
		}
		after = After{Seq: page[len(page)-1].Seq}
	}
	return all, nil
}

// matchLabel finds the one label r means among the documents' labels (of its
// message, when it names one) when none is r's label as written: the label
// ignoring case, else the label whose name after a tool's prefix is r's.
func matchLabel(docs []Document, r docref.Ref) (string, error) {
	var scope []Document
	for _, d := range docs {
		if d.Label != "" && (r.MessageID == "" || d.MessageID == r.MessageID) {
			scope = append(scope, d)
		}
	}
	labels := distinctLabels(scope)
	for _, same := range []func(string) bool{
		func(l string) bool { return strings.EqualFold(l, r.Label) },
		func(l string) bool { _, name, ok := strings.Cut(l, ":"); return ok && strings.EqualFold(name, r.Label) },
	} {
		var hits []string
		for _, l := range labels {
			if same(l) {
				hits = append(hits, l)
			}
		}
		switch len(hits) {
		case 0:
			continue
		case 1:
			return hits[0], nil
		}
		return "", fmt.Errorf("%w: %s is ambiguous: it may mean %s; name one of them", tenancy.ErrInvalid, r, describe(scope, hits, r.MessageID))
	}
	where := "this conversation"
	if r.MessageID != "" {
		where = "message " + r.MessageID + " of this conversation"
	}
	if len(labels) == 0 {
		return "", fmt.Errorf("%w: %s: %s has no labelled documents; use docItem:<id> references", tenancy.ErrNotFound, r, where)
	}
	return "", fmt.Errorf("%w: %s: %s has no documents labelled %q; its labels are %s", tenancy.ErrNotFound, r, where, r.Label, describe(scope, labels, r.MessageID))
}

// distinctLabels lists the documents' labels once each, in their order.
func distinctLabels(docs []Document) []string {
	var out []string
	for _, d := range docs {
		if !slices.Contains(out, d.Label) {
			out = append(out, d.Label)
		}
	}
	return out
}

// describe names labels as the references that select them, with how many
// documents each holds: what a model can pass next.
func describe(docs []Document, labels []string, messageID string) string {
	parts := make([]string, 0, min(len(labels), maxLabelsNamed)+1)
	for i, l := range labels {
		if i == maxLabelsNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(labels)-maxLabelsNamed))
			break
		}
		n := len(pick(docs, messageID, l))
		ref := docref.Ref{Kind: docref.List, Label: l, MessageID: messageID}
		parts = append(parts, fmt.Sprintf("%s (%d document%s)", ref, n, plural(n)))
	}
	return strings.Join(parts, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
