package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/template"
)

// Languages `plugin new -lang` scaffolds.
const (
	langGo             = "go"
	langAssemblyScript = "assemblyscript"
)

// The npm packages an AssemblyScript plugin builds with, at the versions
// pdk/as is tested with (pdk/as/package-lock.json).
const (
	ascVersion     = "0.28.20"
	extismASPDKVer = "1.0.0"
)

// asScaffoldFiles returns the files of a new AssemblyScript plugin: an npm
// project on the checkout's pdk/as (named by pdkAS, relative to the plugin's
// folder or absolute), built by `agenthost plugin build` with asc and tested
// by `agenthost plugin test` with the same fixtures as a Go plugin's.
func asScaffoldFiles(name, kind, pdkAS string) (map[string]string, error) {
	if kind != "tool" {
		return nil, fmt.Errorf("plugin new: -lang assemblyscript makes tool plugins only (pdk/as has no extractor, connector or actions bindings); a scaffold that cannot build is not made")
	}
	pkg, err := json.MarshalIndent(map[string]any{
		"name":        name,
		"version":     "0.1.0",
		"private":     true,
		"description": name + ": an agenthost tool plugin in AssemblyScript (agenthost plugin build .)",
		"type":        "module",
		"dependencies": map[string]string{
			"@agenthost/as-pdk": "file:" + filepath.ToSlash(pdkAS),
			"@extism/as-pdk":    extismASPDKVer,
		},
		"devDependencies": map[string]string{"assemblyscript": ascVersion},
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	data := scaffoldData{Name: name, Tool: lowerCamel(name)}
	out := map[string]string{"package.json": string(pkg) + "\n"}
	for path, text := range asToolScaffold {
		var b bytes.Buffer
		if err := template.Must(template.New(path).Delims("[[", "]]").Parse(text)).Execute(&b, data); err != nil {
			return nil, err
		}
		out[path] = b.String()
	}
	return out, nil
}

var asToolScaffold = map[string]string{
	"plugin.json": `{
  "name": "[[.Name]]",
  "version": "0.1.0",
  "kind": "tool",
  "description": "[[.Name]]: describe what its tools do for an agent."
}
`,
	// The options every plugin on pdk/as needs: the PDK's abort handler
	// (AssemblyScript's default imports env.abort, which no Extism host
	// has); top-level code runs in the module's start section, so it must
	// only register tools.
	"asconfig.json": `{
  "entries": ["assembly/index.ts"],
  "options": {
    "use": ["abort=~lib/@agenthost/as-pdk/assembly/index/agenthostAbort"],
    "runtime": "incremental",
    "optimizeLevel": 3,
    "shrinkLevel": 0
  }
}
`,
	".gitignore": "node_modules/\n*.wasm\n",
	"assembly/index.ts": `// [[.Name]] is an agenthost tool plugin in AssemblyScript. Build it with
// ` + "`agenthost plugin build .`" + `, try it with ` + "`agenthost plugin test .`" + `
// (after ` + "`npm install`" + `).
import * as pdk from "@agenthost/as-pdk";
export { describe, call } from "@agenthost/as-pdk";

// The host validates every call against this schema before the plugin
// runs: here "name" is a non-empty string.
const args = ` + "`" + `{"type":"object","properties":{"name":{"type":"string","description":"who to greet","minLength":1}},"required":["name"],"additionalProperties":false}` + "`" + `;

function greet(a: pdk.Value): pdk.Result {
  return pdk.Result.text("Hello, " + a.getString("name").trim() + "!");
}

// A read-only tool may run in parallel and gets no write functions.
pdk.tool("[[.Tool]]", "Greets someone by name.", args, greet).readOnly();
`,
	"testdata/greets.json": `{
  "tool": "[[.Tool]]",
  "args": {"name": "Ada"},
  "want": {"text": "Hello, Ada!"}
}
`,
	"testdata/refuses-an-empty-name.json": `{
  "tool": "[[.Tool]]",
  "args": {"name": ""},
  "wantError": "invalid_arguments"
}
`,
}
