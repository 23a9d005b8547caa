package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const args = `{
  "type": "object",
  "properties": {
    "url": {"type": "string", "format": "uri"},
    "maxChars": {"type": "integer", "minimum": 1, "maximum": 100000},
    "mode": {"enum": ["text", "markdown"]}
  },
  "required": ["url"],
  "additionalProperties": false
}`

func TestValidateJSON(t *testing.T) {
	s, err := Compile("test:args", []byte(args))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		doc    string
		fields []string // empty: valid
	}{
		{"valid", `{"url":"https://example.org/","maxChars":10}`, nil},
		{"missing required", `{"maxChars":10}`, []string{"(root)"}},
		{"wrong type", `{"url":"https://example.org/","maxChars":"ten"}`, []string{"/maxChars"}},
		{"out of range", `{"url":"https://example.org/","maxChars":0}`, []string{"/maxChars"}},
		{"not in enum", `{"url":"https://example.org/","mode":"pdf"}`, []string{"/mode"}},
		{"bad format", `{"url":"not a uri"}`, []string{"/url"}},
		{"extra property", `{"url":"https://example.org/","x":1}`, []string{"(root)"}},
		{"two violations", `{"url":5,"maxChars":-1}`, []string{"/url", "/maxChars"}},
		{"not JSON", `{"url":`, []string{"not valid JSON"}},
		{"not an object", `[1,2]`, []string{"(root)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.ValidateJSON([]byte(tc.doc))
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatalf("valid document refused: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v is not a *ValidationError", err)
			}
			for _, f := range tc.fields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not name %q", err, f)
				}
			}
		})
	}
}

func TestCompileRefusesInvalidSchemas(t *testing.T) {
	for _, doc := range []string{`{"type":"strin"}`, `{"minimum":"zero"}`, `not json`, `{"$ref":"#/nowhere"}`} {
		if _, err := Compile("test:bad", []byte(doc)); !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("Compile(%s) = %v, want ErrInvalidSchema", doc, err)
		}
	}
}

// A schema is hostile input (a plugin's manifest, a remote MCP server's
// tool): a reference to another document is refused, never read.
func TestCompileReadsNoOtherDocument(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + secret, "http://127.0.0.1:1/schema.json", "https://json-schema.example/s.json"} {
		doc := `{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`
		_, err := Compile("test:ref", []byte(doc))
		if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "may not refer to other documents") {
			t.Errorf("Compile with $ref %q = %v, want a refusal of the reference", ref, err)
		}
	}
	// A reference inside the document stays fine.
	if _, err := Compile("test:local", []byte(`{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`)); err != nil {
		t.Errorf("local $ref: %v", err)
	}
}
