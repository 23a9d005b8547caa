// Package schema compiles and applies JSON Schemas (draft 2020-12 by default) and
// reports violations with the JSON Pointer of the offending field, so a caller (a
// model, a plugin author, an operator) learns exactly what to fix.
//
// It wraps github.com/santhosh-tekuri/jsonschema/v6, a maintained, spec-complete
// validator; this package only adds compilation from raw bytes and flat errors.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	gojson "github.com/goccy/go-json"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// english prints validation messages; message.Printer is safe for concurrent use.
var english = message.NewPrinter(language.English)

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
}

// Violation is one place where an instance breaks its schema.
type Violation struct {
	// Field is the JSON Pointer of the offending value ("" for the root).
	Field string `json:"field"`
	// Message says what is wrong there.
	Message string `json:"message"`
}

// ValidationError lists every violation found in one instance.
type ValidationError struct {
	Violations []Violation
}

// Error lists the violations as "field: message" pairs.
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		f := v.Field
		if f == "" {
			f = "(root)"
		}
		parts = append(parts, f+": "+v.Message)
	}
	return strings.Join(parts, "; ")
}

// ErrInvalidSchema wraps every failure to compile a schema.
var ErrInvalidSchema = errors.New("invalid JSON Schema")

// Compile compiles a schema document. url names it in messages.
func Compile(url string, doc []byte) (*Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not JSON: %v", ErrInvalidSchema, url, err)
	}
	c := jsonschema.NewCompiler()
	// Schemas come from plugins and remote MCP servers: a $ref to another
	// document must not make the host read a file or fetch a URL (the
	// library's default loader reads file:// URLs).
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidSchema, url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidSchema, url, flatten(err))
	}
	return &Schema{s: s}, nil
}

// ErrExternalRef is why a schema referring to another document is refused.
var ErrExternalRef = errors.New("a schema may not refer to other documents")

// noLoader refuses every external document.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s", ErrExternalRef, url)
}

// MustCompile is Compile for schemas that ship with the code; it panics on error.
func MustCompile(url string, doc []byte) *Schema {
	s, err := Compile(url, doc)
	if err != nil {
		panic(err)
	}
	return s
}

// ValidateJSON checks raw JSON against the schema. Malformed JSON is reported as a
// violation at the root. A *ValidationError is returned for violations.
//
// Tool arguments pass through here on every call, so the document is decoded
// with goccy/go-json (about 4× faster than encoding/json on large strings).
// Numbers decode as float64: integers beyond 2^53 are compared approximately,
// which only matters for bounds that large; the guest still gets the exact bytes.
func (s *Schema) ValidateJSON(data []byte) error {
	var v any
	if err := gojson.Unmarshal(data, &v); err != nil {
		return &ValidationError{Violations: []Violation{{Message: "not valid JSON: " + err.Error()}}}
	}
	return s.Validate(v)
}

// Validate checks a value decoded by jsonschema.UnmarshalJSON (numbers as
// json.Number) or plain Go maps and slices.
func (s *Schema) Validate(v any) error {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Violations: []Violation{{Message: err.Error()}}}
	}
	return &ValidationError{Violations: leaves(ve)}
}

// leaves flattens the validator's error tree to its most specific causes.
func leaves(ve *jsonschema.ValidationError) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Field: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(english)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		t = strings.ReplaceAll(t, "~", "~0")
		t = strings.ReplaceAll(t, "/", "~1")
		b.WriteByte('/')
		b.WriteString(t)
	}
	return b.String()
}

func flatten(err error) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			return (&ValidationError{Violations: leaves(ve)}).Error()
		}
	}
	return err.Error()
}
