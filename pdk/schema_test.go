package pdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Label string `json:"label" description:"a label"`
}

type argsForSchema struct {
	URL      string            `json:"url" format:"uri" pattern:"^https?://" description:"page URL"`
	Mode     string            `json:"mode,omitempty" enum:"text,markdown" default:"text"`
	Limit    int               `json:"limit,omitempty" minimum:"1" maximum:"100"`
	Ratio    float64           `json:"ratio" exclusiveMinimum:"0"`
	Tags     []string          `json:"tags,omitempty" maxItems:"5"`
	Meta     map[string]int    `json:"meta,omitempty"`
	Inner    inner             `json:"inner"`
	Optional *inner            `json:"optional"`
	Forced   string            `json:"forced,omitempty" required:"true" minLength:"2"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Skipped  string            `json:"-"`
	Counts   map[string][]uint `json:"counts,omitempty"`
}

func TestSchema(t *testing.T) {
	raw, err := Schema(reflect.TypeFor[argsForSchema]())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"url", "ratio", "inner", "forced"},
		"properties": map[string]any{
			"url":      map[string]any{"type": "string", "format": "uri", "pattern": "^https?://", "description": "page URL"},
			"mode":     map[string]any{"type": "string", "enum": []any{"text", "markdown"}, "default": "text"},
			"limit":    map[string]any{"type": "integer", "minimum": 1.0, "maximum": 100.0},
			"ratio":    map[string]any{"type": "number", "exclusiveMinimum": 0.0},
			"tags":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 5.0},
			"meta":     map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "integer"}},
			"inner":    map[string]any{"type": "object", "additionalProperties": false, "required": []any{"label"}, "properties": map[string]any{"label": map[string]any{"type": "string", "description": "a label"}}},
			"optional": map[string]any{"type": "object", "additionalProperties": false, "required": []any{"label"}, "properties": map[string]any{"label": map[string]any{"type": "string", "description": "a label"}}},
			"forced":   map[string]any{"type": "string", "minLength": 2.0},
			"raw":      map[string]any{},
			"counts":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 0.0}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("schema:\n%s", g)
	}
}

func TestSchemaRefusesBadTypes(t *testing.T) {
	type rec struct {
		Next *rec `json:"next"`
	}
	type badTag struct {
		N int `json:"n" minimum:"one"`
	}
	for name, typ := range map[string]reflect.Type{
		"not a struct":  reflect.TypeFor[string](),
		"recursive":     reflect.TypeFor[rec](),
		"int map keys":  reflect.TypeFor[struct{ M map[int]string }](),
		"channel":       reflect.TypeFor[struct{ C chan int }](),
		"bad bound tag": reflect.TypeFor[badTag](),
	} {
		if _, err := Schema(typ); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDispatch(t *testing.T) {
	r := &runtime{tools: map[string]*toolDef{}}
	saved := rt
	rt = r
	defer func() { rt = saved }()
	Tool("double", "doubles", func(a struct {
		N int `json:"n"`
	}) (int, error) {
		if a.N < 0 {
			return 0, Errorf("negative", "n is %d", a.N)
		}
		return 2 * a.N, nil
	})
	Tool("boom", "panics", func(struct{}) (string, error) { panic("kaboom") })
	cases := []struct{ in, want string }{
		{"double\n{\"n\":21}", "{\"ok\":true,\"body\":\"json\"}\n42"},
		{"double\n{\"n\":-1}", "{\"ok\":false,\"error\":{\"code\":\"negative\",\"message\":\"n is -1\"}}\n"},
		{"double\n{\"n\":\"x\"}", "invalid_arguments"},
		{"boom\n{}", "{\"ok\":false,\"error\":{\"code\":\"panic\",\"message\":\"tool boom panicked: kaboom\"}}\n"},
		{"nosuch\n{}", "unknown_tool"},
	}
	for _, c := range cases {
		var got []byte
		for _, p := range r.dispatch([]byte(c.in)) {
			got = append(got, p...)
		}
		if !strings.Contains(string(got), c.want) {
			t.Errorf("dispatch(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
