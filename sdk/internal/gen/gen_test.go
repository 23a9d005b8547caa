package gen

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// future is a document with what routes added later may bring: unions,
// repeated and non-string parameters, a header, multipart lists and
// flags, a raw body, nullable and allOf schemas, an inline object named
// like a schema, an operation without an operationId.
const future = `{"openapi":"3.1.0","components":{"schemas":{
  "Server":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"env":{"type":"object","additionalProperties":{"type":"string"}},
    "transport":{"oneOf":[{"type":"string"},{"type":"object"}]},"pinned":{"type":["integer","null"]},"since":{"type":"string","format":"date-time"},
    "tools":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"readOnly":{"type":"boolean"}}}}}},
  "AddServerRequest":{"type":"object","properties":{"x":{"type":"string"}}},
  "Versioned":{"allOf":[{"$ref":"#/components/schemas/Server"},{"type":"object","properties":{"version":{"type":"integer"}}}]}}},
 "paths":{
  "/api/v1/workspaces/{ws}/mcp":{"parameters":[{"name":"ws","in":"path","required":true,"schema":{"type":"string"}}],
    "get":{"operationId":"listServers","parameters":[{"name":"id","in":"query","schema":{"type":"array","items":{"type":"integer"}}},
        {"name":"X-Trace","in":"header","schema":{"type":"integer"}},{"name":"filter","in":"query","schema":{"type":"object"}},{"name":"bare","in":"query"}],
      "responses":{"200":{"content":{"application/json":{"schema":{"type":"array","items":{"$ref":"#/components/schemas/Server"}}}}}}},
    "post":{"operationId":"addServer","requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"url":{"type":"string"},"auth":{"type":["string","null"]}}}}}},
      "responses":{"201":{"content":{"application/json":{"schema":{"oneOf":[{"$ref":"#/components/schemas/Server"},{"type":"string"}]}}}}}}},
  "/api/v1/plugins":{"post":{"operationId":"installPlugin","requestBody":{"content":{"multipart/form-data":{"schema":{"type":"object","required":["plugin"],
      "properties":{"plugin":{"type":"string","format":"binary"},"signature":{"type":"string","format":"binary"},"grants":{"type":"array","items":{"type":"string"}},"pin":{"type":"boolean"},"size":{"type":"integer"}}}}}},
    "responses":{"201":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Versioned"}}}}}}},
  "/api/v1/plugins/{name}/versions/{version}":{"parameters":[{"name":"name","in":"path","required":true,"schema":{"type":"string"}},{"name":"version","in":"path","required":true,"schema":{"type":"integer"}}],
    "put":{"requestBody":{"content":{"application/octet-stream":{"schema":{"type":"string","format":"binary"}}}},"responses":{"204":{"description":"done"}}},
    "delete":{"operationId":"removeVersion","responses":{"200":{"description":"no schema"}}}},
  "/api/v1/files/{id}/versions":{"get":{"operationId":"listVersions","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
    "responses":{"200":{"content":{"application/x-ndjson":{"schema":{"type":"string"}}}}}}}}}`

// TestFutureRoutesTypeCheck: what the generator makes of such a document
// compiles with the package's hand-written files.
func TestFutureRoutesTypeCheck(t *testing.T) {
	files, err := Generate([]byte(future))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	for name, src := range files {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	// The hand-written files of package sdk, two folders up.
	hand, err := filepath.Glob("../../*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range hand {
		if strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_gen.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	// The hand-written files use the API's Message and Problem schemas and
	// its event stream, which this document lacks.
	stub, err := parser.ParseFile(fset, "stub.go", `package sdk
import ("context"; "net/http")
type Message struct{ ID, Role, Content string }
type Problem struct{ Type, Title, Detail string }
type StreamWorkflowEventsParams struct{ LastEventID int64 }
func (c *Client) StreamWorkflowEvents(ctx context.Context, id string, p *StreamWorkflowEventsParams) (*http.Response, error) {
	return c.send(ctx, request{})
}
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	parsed = append(parsed, stub)
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("github.com/agenthost/agenthost/sdk", fset, parsed, nil)
	if err != nil {
		t.Fatalf("generated code does not type-check: %v\n%s\n%s", err, files[TypesFile], files[ClientFile])
	}
	client := pkg.Scope().Lookup("Client").Type()
	for _, m := range []string{"ListServers", "AddServer", "InstallPlugin", "PutPluginsByNameVersionsByVersion", "RemoveVersion", "ListVersions"} {
		if obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(client), true, pkg, m); obj == nil {
			t.Errorf("no method %s", m)
		}
	}
	for _, want := range []string{
		"type AddServerRequestInline struct", // not the schema AddServerRequest
		"Transport json.RawMessage",
		"Pinned *int64",
		"Grants []string",
		"ID []string",
	} {
		if !strings.Contains(strings.Join(strings.Fields(string(files[TypesFile])), " "), want) {
			t.Errorf("types lack %q:\n%s", want, files[TypesFile])
		}
	}
}

// TestReservedNames: an operationId that would hide a hand-written method
// is refused with a clear error.
func TestReservedNames(t *testing.T) {
	_, err := Generate([]byte(`{"openapi":"3.1.0","paths":{"/x":{"get":{"operationId":"events","responses":{}}}}}`))
	if err == nil || !strings.Contains(err.Error(), "would hide the hand-written Client.Events") {
		t.Fatalf("err %v", err)
	}
}
