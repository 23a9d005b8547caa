package pdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Schema generates the JSON Schema (draft 2020-12) of a Go type as the PDK sees
// tool arguments. For struct fields it reads these tags:
//
//	json:"name,omitempty"    the property name; a field without omitempty is required
//	description:"..."        what the model should put there
//	required:"true|false"    overrides the omitempty rule
//	enum:"a,b,c"             allowed values
//	minimum:"1" maximum:"9"  numeric bounds
//	minLength:"1" maxLength:"200" minItems:"1" maxItems:"10"
//	pattern:"^[a-z]+$"       a regular expression for strings
//	default:"10"             the default (parsed as JSON, else a string)
//	format:"uri"             a JSON Schema format
//
// Nested structs, slices, arrays, maps with string keys, pointers and
// json.RawMessage are supported; the result has additionalProperties false on
// every object so a model cannot slip in unknown fields.
//
// It is our own small reflector rather than a general library: a plugin is a
// Wasm module, and these 200 lines keep it small and free of dependencies.
func Schema(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments must be a struct, not %s", t)
	}
	s, err := schemaOf(t, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage {
		return map[string]any{}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s := map[string]any{"type": "integer"}
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			s["minimum"] = 0
		}
		return s, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
		}
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keys must be strings: %s", t)
		}
		vals, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Struct:
		return structSchema(t, seen)
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

func structSchema(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	if seen[t] {
		return nil, fmt.Errorf("recursive type %s", t)
	}
	seen[t] = true
	defer delete(seen, t)
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, omitempty := f.Name, false
		if tag, ok := f.Tag.Lookup("json"); ok {
			parts := strings.Split(tag, ",")
			if parts[0] == "-" {
				continue
			}
			if parts[0] != "" {
				name = parts[0]
			}
			for _, p := range parts[1:] {
				omitempty = omitempty || p == "omitempty" || p == "omitzero"
			}
		}
		s, err := schemaOf(f.Type, seen)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if err := applyTags(s, f); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		props[name] = s
		req := !omitempty && f.Type.Kind() != reflect.Pointer
		if v, ok := f.Tag.Lookup("required"); ok {
			req = v == "true"
		}
		if req {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s, nil
}

func applyTags(s map[string]any, f reflect.StructField) error {
	if v, ok := f.Tag.Lookup("description"); ok {
		s["description"] = v
	}
	if v, ok := f.Tag.Lookup("format"); ok {
		s["format"] = v
	}
	if v, ok := f.Tag.Lookup("pattern"); ok {
		s["pattern"] = v
	}
	if v, ok := f.Tag.Lookup("enum"); ok {
		var vals []any
		for _, e := range strings.Split(v, ",") {
			vals = append(vals, literal(strings.TrimSpace(e), s["type"]))
		}
		s["enum"] = vals
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if v, ok := f.Tag.Lookup(k); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("tag %s: %w", k, err)
			}
			s[k] = n
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if v, ok := f.Tag.Lookup(k); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("tag %s: want a non-negative integer, got %q", k, v)
			}
			s[k] = n
		}
	}
	if v, ok := f.Tag.Lookup("default"); ok {
		s["default"] = literal(v, s["type"])
	}
	return nil
}

// literal reads a tag value as the schema type expects it.
func literal(v string, typ any) any {
	if typ == "string" {
		return v
	}
	var x any
	if json.Unmarshal([]byte(v), &x) == nil {
		return x
	}
	return v
}
