// Package docref is the one parser of the document references agents pass
// to tools, typed and tolerant of the shapes models send (docs/files.md):
// "docItem:<id>", "docItem:<id>:<fileName>", "docList:<label>",
// "docList:<messageId>:<label>", and the shapes a model sends lists in — a
// list of strings, a list of objects with an id, an object wrapping a
// "documents" list, or a single string. Every resolver of references
// (workflows, the files and knowledge capabilities, tool arguments) goes
// through it, so a shape accepted in one place is accepted in all.
package docref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Kind says what a reference names.
type Kind int

// The kinds of reference.
const (
	// Bare is an id without a prefix: a document id where documents are
	// meant, a file id where files are.
	Bare Kind = iota
	// Item is "docItem:<id>" (optionally ":<fileName>"): one document of a
	// workflow.
	Item
	// List is "docList:<label>" or "docList:<messageId>:<label>": the
	// documents of a workflow carrying the label (of one message).
	List
)

// Ref is one parsed reference.
type Ref struct {
	Kind Kind
	// ID is the document id (Item) or the bare id (Bare).
	ID string
	// FileName is the optional name of an Item; informative only.
	FileName string
	// MessageID optionally limits a List to one message.
	MessageID string
	// Label is a List's label.
	Label string
}

// String is the canonical form.
func (r Ref) String() string {
	switch r.Kind {
	case Item:
		if r.FileName != "" {
			return "docItem:" + r.ID + ":" + r.FileName
		}
		return "docItem:" + r.ID
	case List:
		if r.MessageID != "" {
			return "docList:" + r.MessageID + ":" + r.Label
		}
		return "docList:" + r.Label
	}
	return r.ID
}

// ErrInvalid wraps every reason a reference cannot be parsed.
var ErrInvalid = errors.New("invalid document reference")

// MaxRefBytes bounds one reference.
const MaxRefBytes = 1024

// isID reports whether s has the form of the ids agenthost makes (UUIDs):
// how "docList:<messageId>:<label>" is told from a label that holds a colon
// ("writeFile:report.md").
func isID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// ParseString parses one reference string.
func ParseString(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Ref{}, fmt.Errorf("%w: empty", ErrInvalid)
	case len(s) > MaxRefBytes:
		return Ref{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxRefBytes)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return Ref{}, fmt.Errorf("%w: %q contains a control character", ErrInvalid, s)
	}
	if rest, ok := cutPrefixFold(s, "docItem:"); ok {
		rest = strings.TrimSpace(rest)
		id, name, found := strings.Cut(rest, ":")
		if !found || !isID(id) {
			id, name = rest, ""
		}
		if id == "" {
			return Ref{}, fmt.Errorf("%w: %q names no document (want docItem:<id>)", ErrInvalid, s)
		}
		return Ref{Kind: Item, ID: id, FileName: name}, nil
	}
	if rest, ok := cutPrefixFold(s, "docList:"); ok {
		rest = strings.TrimSpace(rest)
		msg, label, found := strings.Cut(rest, ":")
		if !found || !isID(msg) {
			msg, label = "", rest
		}
		if label == "" {
			return Ref{}, fmt.Errorf("%w: %q names no label (want docList:<label> or docList:<messageId>:<label>)", ErrInvalid, s)
		}
		return Ref{Kind: List, MessageID: msg, Label: label}, nil
	}
	if strings.ContainsAny(s, ": /\\") {
		return Ref{}, fmt.Errorf("%w: %q is neither an id nor docItem:<id> nor docList:<label>", ErrInvalid, s)
	}
	return Ref{Kind: Bare, ID: s}, nil
}

// cutPrefixFold is strings.CutPrefix ignoring the prefix's case: models
// write "DocItem:" and "docitem:" too.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// MaxRefs bounds the references of one list.
const MaxRefs = 200

// Parse is the tolerant parser of a documentList value as a model sends it
// (the four shapes of docs/files.md): ["docItem:a", "docItem:b"],
// [{"id": "a", "name": "x.pdf"}], {"documents": [{"id": "a"}]}, "docItem:a",
// and mixtures of strings and objects in one list. An object names its
// document by "id" or "documentId" (a reference or a bare id), or a list by
// "label" with an optional "messageId". null is the empty list.
func Parse(raw json.RawMessage) ([]Ref, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return []Ref{}, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrInvalid, err)
	}
	return parseValue(v, 0)
}

func parseValue(v any, depth int) ([]Ref, error) {
	if depth > 2 {
		return nil, fmt.Errorf("%w: nested too deep", ErrInvalid)
	}
	switch x := v.(type) {
	case string:
		r, err := ParseString(x)
		if err != nil {
			return nil, err
		}
		return []Ref{r}, nil
	case []any:
		if len(x) > MaxRefs {
			return nil, fmt.Errorf("%w: %d references, at most %d", ErrInvalid, len(x), MaxRefs)
		}
		out := make([]Ref, 0, len(x))
		for i, e := range x {
			var rs []Ref
			var err error
			switch e := e.(type) {
			case string:
				rs, err = parseValue(e, depth+1)
			case map[string]any:
				rs, err = parseObject(e, depth+1)
			default:
				err = fmt.Errorf("%w: a %s", ErrInvalid, jsonType(e))
			}
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, rs...)
		}
		return out, nil
	case map[string]any:
		return parseObject(x, depth)
	}
	return nil, fmt.Errorf("%w: a %s, want a reference, a list of them or {\"documents\": [...]}", ErrInvalid, jsonType(v))
}

// parseObject reads {"documents": [...]} (also "documentList",
// "references"), {"id": ...} or {"label": ..., "messageId": ...}.
func parseObject(o map[string]any, depth int) ([]Ref, error) {
	for _, k := range []string{"documents", "documentList", "references"} {
		if inner, ok := o[k]; ok {
			return parseValue(inner, depth+1)
		}
	}
	for _, k := range []string{"id", "documentId"} {
		if id, ok := o[k].(string); ok {
			r, err := ParseString(id)
			if err != nil {
				return nil, err
			}
			// A bare id stays bare: it usually means a document's, but a
			// model also copies file ids from listings; the resolver
			// knows which it takes.
			if name, ok := o["name"].(string); ok && r.Kind == Item && r.FileName == "" {
				r.FileName = name
			}
			return []Ref{r}, nil
		}
	}
	if label, ok := o["label"].(string); ok && strings.TrimSpace(label) != "" {
		msg, _ := o["messageId"].(string)
		return []Ref{{Kind: List, Label: strings.TrimSpace(label), MessageID: strings.TrimSpace(msg)}}, nil
	}
	return nil, fmt.Errorf("%w: an object without \"id\", \"label\" or \"documents\"", ErrInvalid)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Strings is refs in canonical form: what a tool whose schema takes a list
// of strings receives.
func Strings(refs []Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	return out
}

// IsListParam reports whether a tool parameter of this name takes a list
// of document references (documents, documentList, files): the values
// CoerceArgs normalises and docList references are expanded in.
func IsListParam(name string) bool {
	switch name {
	case "documents", "documentList", "files":
		return true
	}
	return false
}

// CoerceArgs normalises the document-list arguments of a tool call before
// its schema is checked: a parameter named documents, documentList or files
// whose schema is a list of strings gets, for whatever shape the model sent
// (a single string, objects with ids, a {"documents": [...]} wrapper),
// the list of canonical reference strings. Other arguments, and values that
// do not parse, are left as they are (the schema check then names them).
func CoerceArgs(schema json.RawMessage, args []byte) []byte {
	var sc struct {
		Properties map[string]struct {
			Type  any `json:"type"`
			Items struct {
				Type any `json:"type"`
			} `json:"items"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &sc) != nil {
		return args
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return args
	}
	changed := false
	for name, raw := range in {
		p, ok := sc.Properties[name]
		if !ok || !IsListParam(name) || p.Type != "array" || p.Items.Type != "string" {
			continue
		}
		var already []string
		if json.Unmarshal(raw, &already) == nil && already != nil {
			continue
		}
		refs, err := Parse(raw)
		if err != nil {
			continue
		}
		b, err := json.Marshal(Strings(refs))
		if err != nil {
			continue
		}
		in[name], changed = b, true
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(in)
	if err != nil {
		return args
	}
	return out
}
