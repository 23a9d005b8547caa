// Package gen turns the OpenAPI document of agenthost's HTTP API
// (host/api/openapi.json) into the Go client of package sdk: a struct for
// every schema and a method for every operation. It reads only the parts of
// OpenAPI 3.1 the document uses, and refuses what it does not understand
// rather than guessing.
package gen

import (
	"encoding/json"
	"fmt"
	"strings"
)

// document is the part of an OpenAPI 3.1 document the generator reads.
type document struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas    map[string]*schema    `json:"schemas"`
		Parameters map[string]*parameter `json:"parameters"`
		Responses  map[string]*response  `json:"responses"`
	} `json:"components"`
}

type operation struct {
	OperationID string               `json:"operationId"`
	Summary     string               `json:"summary"`
	Parameters  []*parameter         `json:"parameters"`
	RequestBody *requestBody         `json:"requestBody"`
	Responses   map[string]*response `json:"responses"`
}

type parameter struct {
	Ref         string  `json:"$ref"`
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Required    bool    `json:"required"`
	Description string  `json:"description"`
	Schema      *schema `json:"schema"`
}

type requestBody struct {
	Required bool                  `json:"required"`
	Content  map[string]*mediaType `json:"content"`
}

type response struct {
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
	Content     map[string]*mediaType `json:"content"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

// schema is a JSON Schema as OpenAPI 3.1 writes it. Type is a string or a
// list of strings (["string", "null"]).
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 json.RawMessage    `json:"type"`
	Format               string             `json:"format"`
	Description          string             `json:"description"`
	Enum                 []any              `json:"enum"`
	Required             []string           `json:"required"`
	Properties           map[string]*schema `json:"properties"`
	Items                *schema            `json:"items"`
	AllOf                []*schema          `json:"allOf"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
}

// types returns the schema's types and whether null is one of them.
func (s *schema) types() ([]string, bool, error) {
	if len(s.Type) == 0 {
		return nil, false, nil
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}, false, nil
	}
	var many []string
	if err := json.Unmarshal(s.Type, &many); err != nil {
		return nil, false, fmt.Errorf("type %s is neither a string nor a list of strings", s.Type)
	}
	var out []string
	null := false
	for _, t := range many {
		if t == "null" {
			null = true
			continue
		}
		out = append(out, t)
	}
	return out, null, nil
}

// methods are the HTTP methods an operation can have, in the order the
// generated client lists them under one path.
var methods = []string{"get", "put", "post", "patch", "delete"}

// op is one operation with its path-level parameters merged in and every
// $ref resolved.
type op struct {
	Method, Path string
	operation
}

// parse reads the document and its operations. An operation without an
// operationId gets a name made of its method and path, so a route added
// without one still gets a client method (TestEveryOperationHasAMethod
// then shows the name, and openapi.json can give it a better one).
func parse(raw []byte) (*document, []op, error) {
	var d document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, nil, fmt.Errorf("openapi document: %w", err)
	}
	if !strings.HasPrefix(d.OpenAPI, "3.") {
		return nil, nil, fmt.Errorf("openapi document: version %q, want 3.x", d.OpenAPI)
	}
	var ops []op
	seen := map[string]string{}
	for path, item := range d.Paths {
		var shared []*parameter
		if p, ok := item["parameters"]; ok {
			if err := json.Unmarshal(p, &shared); err != nil {
				return nil, nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		for key := range item {
			if key != "parameters" && !contains(methods, key) {
				return nil, nil, fmt.Errorf("%s: %q is not a method the generator knows", path, key)
			}
		}
		for _, m := range methods {
			rawOp, ok := item[m]
			if !ok {
				continue
			}
			var o operation
			if err := json.Unmarshal(rawOp, &o); err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", strings.ToUpper(m), path, err)
			}
			if o.OperationID == "" {
				o.OperationID = derivedName(m, path)
			}
			where := strings.ToUpper(m) + " " + path
			if other, dup := seen[o.OperationID]; dup {
				return nil, nil, fmt.Errorf("%s and %s share operationId %q", other, where, o.OperationID)
			}
			seen[o.OperationID] = where
			params := append(append([]*parameter{}, shared...), o.Parameters...)
			o.Parameters = nil
			for _, p := range params {
				if p.Ref != "" {
					name := strings.TrimPrefix(p.Ref, "#/components/parameters/")
					r, ok := d.Components.Parameters[name]
					if !ok {
						return nil, nil, fmt.Errorf("%s: unknown parameter %s", where, p.Ref)
					}
					p = r
				}
				o.Parameters = append(o.Parameters, p)
			}
			for code, r := range o.Responses {
				if r.Ref != "" {
					name := strings.TrimPrefix(r.Ref, "#/components/responses/")
					shared, ok := d.Components.Responses[name]
					if !ok {
						return nil, nil, fmt.Errorf("%s: unknown response %s", where, r.Ref)
					}
					o.Responses[code] = shared
				}
			}
			ops = append(ops, op{Method: m, Path: path, operation: o})
		}
	}
	return &d, ops, nil
}

// derivedName names an operation that has no operationId: its method and
// the path's fixed segments, e.g. post /api/v1/workspaces/{ws}/mcp →
// postWorkspacesMcp (parameters become "By" + name to keep names apart).
func derivedName(method, path string) string {
	var b strings.Builder
	b.WriteString(method)
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/api/v1"), "/") {
		switch {
		case seg == "":
		case strings.HasPrefix(seg, "{"):
			b.WriteString("By" + exported(strings.Trim(seg, "{}")))
		default:
			b.WriteString(exported(seg))
		}
	}
	return b.String()
}

// OperationNames lists the Go method name of every operation of the
// document, for tests that check the client against it.
func OperationNames(spec []byte) (map[string]string, error) {
	_, ops, err := parse(spec)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range ops {
		out[strings.ToUpper(o.Method)+" "+o.Path] = exported(o.OperationID)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
