package api_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes: the served OpenAPI document names exactly the
// routes the server has, method by method.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	app := server(t).app
	resp, err := app.Test(httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("openapi.json: %v %v", resp, err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v", err)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	param := regexp.MustCompile(`:([A-Za-z]+)`)
	var served []string
	for _, r := range app.GetRoutes(true) {
		if r.Method == "HEAD" || r.Method == "USE" {
			continue
		}
		served = append(served, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(documented)
	slices.Sort(served)
	served = slices.Compact(served)
	for _, s := range served {
		if !slices.Contains(documented, s) {
			t.Errorf("route %s is not in openapi.json", s)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.json documents %s, which the server does not serve", d)
		}
	}
}
