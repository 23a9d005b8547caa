package sdk_test

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/sdk"
	"github.com/agenthost/agenthost/sdk/internal/gen"
)

// specPath is the API's OpenAPI document, the client's source.
const specPath = "../host/api/openapi.json"

// TestClientIsGenerated: the committed client is exactly what the OpenAPI
// document yields, so an operation added to the API without `go generate
// ./sdk/...` fails here.
func TestClientIsGenerated(t *testing.T) {
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%s: %v (run go generate ./sdk/...)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("sdk/%s differs from what %s yields: run go generate ./sdk/...", name, specPath)
		}
	}
}

// TestEveryOperationHasAMethod: every operation of openapi.json is a method
// of *sdk.Client taking a context first.
func TestEveryOperationHasAMethod(t *testing.T) {
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	names, err := gen.OperationNames(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 50 {
		t.Fatalf("only %d operations in %s", len(names), specPath)
	}
	client := reflect.TypeOf(&sdk.Client{})
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	for route, name := range names {
		m, ok := client.MethodByName(name)
		if !ok {
			t.Errorf("%s: no method Client.%s (run go generate ./sdk/...)", route, name)
			continue
		}
		if m.Type.NumIn() < 2 || m.Type.In(1) != ctxType {
			t.Errorf("Client.%s does not take a context first", name)
		}
		if last := m.Type.Out(m.Type.NumOut() - 1); last.String() != "error" {
			t.Errorf("Client.%s does not end in an error", name)
		}
	}
}

// TestGeneratorRefusesWhatItDoesNotKnow: documents the generator cannot
// turn into a correct client are errors, not guesses.
func TestGeneratorRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"not JSON", `{`, "openapi document"},
		{"swagger 2", `{"swagger":"2.0","paths":{}}`, "version"},
		{"unknown method", `{"openapi":"3.1.0","paths":{"/x":{"trace":{}}}}`, "not a method"},
		{"undeclared path parameter", `{"openapi":"3.1.0","paths":{"/x/{id}":{"get":{"operationId":"getX","responses":{}}}}}`, "not declared"},
		{"duplicate operationId", `{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"x","responses":{}}},"/b":{"get":{"operationId":"x","responses":{}}}}}`, "share operationId"},
		{"unknown schema", `{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Nope"}}}}}}}}}`, "unknown schema"},
		{"cookie parameter", `{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"a","parameters":[{"name":"c","in":"cookie"}],"responses":{}}}}}`, "cookie"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gen.Generate([]byte(tc.spec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestOperationWithoutIDGetsAMethod: a route added to openapi.json without
// an operationId still gets a method, named from its method and path.
func TestOperationWithoutIDGetsAMethod(t *testing.T) {
	spec := `{"openapi":"3.1.0","paths":{"/api/v1/workspaces/{ws}/mcp":{"post":{"parameters":[{"name":"ws","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"204":{"description":"done"}}}}}}`
	files, err := gen.Generate([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if src := string(files[gen.ClientFile]); !strings.Contains(src, "func (c *Client) PostWorkspacesByWsMCP(ctx context.Context, ws string) error") {
		t.Fatalf("generated:\n%s", src)
	}
}

// TestSDKImportsNothingOfTheServer: the client library is a client: no
// file of it (tests aside) imports a package of host/ or cmd/.
func TestSDKImportsNothingOfTheServer(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, "github.com/agenthost/agenthost/") && !strings.HasPrefix(p, "github.com/agenthost/agenthost/sdk") {
				t.Errorf("sdk/%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
