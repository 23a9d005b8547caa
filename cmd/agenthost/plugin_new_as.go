package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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

// asPluginNew makes the AssemblyScript plugin name in abs (dir as the user
// wrote it): no Go module, an npm project whose package.json points at the
// pdk/as of the checkout around it (relatively), of -agenthost, or of the
// checkout around the current directory.
func asPluginNew(name, kind, dir, abs, source string, stdout io.Writer) error {
	checkout, mod := enclosingModule(filepath.Dir(abs))
	inside := mod == agenthostModule && source == ""
	if !inside {
		var err error
		if checkout, err = asCheckout(source); err != nil {
			return err
		}
	}
	pdkAS := filepath.Join(checkout, "pdk", "as")
	if _, err := os.Stat(filepath.Join(pdkAS, "package.json")); err != nil {
		return fmt.Errorf("plugin new: the checkout %s has no AssemblyScript PDK (pdk/as); a scaffold that cannot build is not made", checkout)
	}
	if inside {
		if rel, err := filepath.Rel(abs, pdkAS); err == nil {
			pdkAS = rel
		}
	}
	files, err := asScaffoldFiles(name, kind, pdkAS)
	if err != nil {
		return err
	}
	if err := writeFiles(abs, files); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "made %s plugin %s (AssemblyScript) in %s\nnext:\n  (cd %s && npm install)\n  agenthost plugin build %s\n  agenthost plugin test %s\n", kind, name, dir, dir, dir, dir)
	return nil
}

// writeFiles writes files (by slash path) under dir.
func writeFiles(dir string, files map[string]string) error {
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// asCheckout is the agenthost checkout an AssemblyScript plugin outside one
// takes pdk/as from: -agenthost, else the checkout around the current
// directory.
func asCheckout(source string) (string, error) {
	if source == "" {
		if wd, err := os.Getwd(); err == nil {
			if r, m := enclosingModule(wd); m == agenthostModule {
				return r, nil
			}
		}
		return "", fmt.Errorf("plugin new: the AssemblyScript PDK comes from an agenthost checkout: run this inside one, or pass -agenthost PATH (nothing written)")
	}
	if _, m := enclosingModule(source); m != agenthostModule {
		return "", fmt.Errorf("plugin new: -agenthost %s is not an agenthost checkout (nothing written)", source)
	}
	return filepath.Abs(source)
}

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
