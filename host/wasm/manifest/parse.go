package manifest

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/schema"
)

//go:embed schema.json
var schemaJSON []byte

// ErrInvalid wraps every reason a manifest is refused.
var ErrInvalid = errors.New("invalid plugin manifest")

// FieldError names the manifest field that is wrong.
type FieldError struct {
	Field   string // JSON Pointer into the manifest, e.g. /tools/1/name
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Parse decodes and validates a manifest: first against the format's JSON Schema,
// then the rules a schema cannot say (unique tool names, tool schemas that compile,
// kind-specific sections). Every error wraps ErrInvalid and names the field.
func Parse(data []byte) (*Manifest, error) {
	if err := formatSchema().ValidateJSON(data); err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) && len(ve.Violations) > 0 {
			v := ve.Violations[0]
			field := v.Field
			if field == "" {
				field = "(root)"
			}
			msg := v.Message
			if len(ve.Violations) > 1 {
				msg += " (and: " + (&schema.ValidationError{Violations: ve.Violations[1:]}).Error() + ")"
			}
			return nil, fmt.Errorf("%w: %w", ErrInvalid, &FieldError{Field: field, Message: msg})
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return &m, nil
}

// Validate runs the same checks as Parse on a manifest built in Go.
func (m *Manifest) Validate() error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	_, err = Parse(data)
	return err
}

func (m *Manifest) check() error {
	if err := m.checkActions(); err != nil {
		return err
	}
	seen := map[string]int{}
	for i, t := range m.Tools {
		if j, dup := seen[t.Name]; dup {
			return &FieldError{Field: fmt.Sprintf("/tools/%d/name", i), Message: fmt.Sprintf("duplicate tool name %q (also /tools/%d)", t.Name, j)}
		}
		seen[t.Name] = i
		if t.External != "" && !slices.Contains(Externals(), t.External) {
			return &FieldError{Field: fmt.Sprintf("/tools/%d/external", i), Message: fmt.Sprintf("unknown side effect %q (one of %s)", t.External, strings.Join(Externals(), ", "))}
		}
		if t.External != "" && t.ReadOnly {
			// A read-only tool runs on an instance without write
			// capabilities: a side effect it declares is a contradiction.
			return &FieldError{Field: fmt.Sprintf("/tools/%d/external", i), Message: "a read-only tool cannot have an external side effect"}
		}
		if _, err := schema.Compile("tool:"+t.Name+"/input", t.InputSchema); err != nil {
			return &FieldError{Field: fmt.Sprintf("/tools/%d/inputSchema", i), Message: err.Error()}
		}
		if len(t.OutputSchema) > 0 {
			if _, err := schema.Compile("tool:"+t.Name+"/output", t.OutputSchema); err != nil {
				return &FieldError{Field: fmt.Sprintf("/tools/%d/outputSchema", i), Message: err.Error()}
			}
		}
	}
	switch m.Kind {
	case KindTool:
		if len(m.Tools) == 0 {
			return &FieldError{Field: "/tools", Message: fmt.Sprintf("a %s plugin must declare at least one tool", m.Kind)}
		}
	case KindExtractor:
		if m.Extractor == nil {
			return &FieldError{Field: "/extractor", Message: "an extractor plugin must declare the MIME types it handles"}
		}
	case KindConnector:
		if m.Connector == nil {
			return &FieldError{Field: "/connector", Message: "a connector plugin must declare its provider and services"}
		}
		for i, h := range m.Connector.Hosts {
			if _, err := egress.ParseHostEntry(h); err != nil {
				return &FieldError{Field: fmt.Sprintf("/connector/hosts/%d", i), Message: err.Error()}
			}
		}
		if len(m.Connector.Hosts) > 0 && !m.HasCapability("connection") {
			return &FieldError{Field: "/connector/hosts", Message: `connector hosts need the "connection" capability`}
		}
	}
	if m.Connector != nil && m.Kind != KindConnector {
		return &FieldError{Field: "/connector", Message: fmt.Sprintf("only a connector plugin declares a connector section (this is a %s plugin)", m.Kind)}
	}
	if err := m.checkMCP(); err != nil {
		return err
	}
	if len(m.Limits.AllowedHosts) > 0 && !m.HasCapability("http") {
		return &FieldError{Field: "/limits/allowedHosts", Message: `allowed hosts need the "http" capability`}
	}
	for i, h := range m.Limits.AllowedHosts {
		if _, err := egress.ParseHostEntry(h); err != nil {
			return &FieldError{Field: fmt.Sprintf("/limits/allowedHosts/%d", i), Message: err.Error()}
		}
	}
	return nil
}

var compiledFormat = schema.MustCompile("agenthost:manifest-v1", schemaJSON)

func formatSchema() *schema.Schema { return compiledFormat }

// checkActions checks the actions of an actions plugin (and that no other
// kind has any) and derives its tools. An actions plugin declares no tools
// of its own: what its agent tools are follows from its actions alone.
func (m *Manifest) checkActions() error {
	if m.Kind != KindActions {
		if len(m.Actions) > 0 {
			return &FieldError{Field: "/actions", Message: fmt.Sprintf("only an actions plugin declares actions (this is a %s plugin)", m.Kind)}
		}
		for i, t := range m.Tools {
			if t.action || WireName(t.Name) != t.Name {
				return &FieldError{Field: fmt.Sprintf("/tools/%d/name", i), Message: "not a tool name"}
			}
		}
		return nil
	}
	if len(m.Tools) > 0 {
		return &FieldError{Field: "/tools", Message: "an actions plugin declares actions, not tools: its tools are its dynamicMode actions"}
	}
	if len(m.Actions) == 0 {
		return &FieldError{Field: "/actions", Message: "an actions plugin must declare at least one action"}
	}
	seen := map[string]int{}
	for i, a := range m.Actions {
		name := a.ToolName()
		if len(name) > maxToolName {
			return &FieldError{Field: fmt.Sprintf("/actions/%d", i), Message: fmt.Sprintf("%s is longer than %d characters", name, maxToolName)}
		}
		if j, dup := seen[name]; dup {
			return &FieldError{Field: fmt.Sprintf("/actions/%d", i), Message: fmt.Sprintf("duplicate action %s (also /actions/%d)", name, j)}
		}
		seen[name] = i
		if _, err := schema.Compile("action:"+name+"/parameters", a.Parameters); err != nil {
			return &FieldError{Field: fmt.Sprintf("/actions/%d/parameters", i), Message: err.Error()}
		}
	}
	// The derived tools are checked below like any plugin's.
	m.Tools = m.actionTools()
	return nil
}
