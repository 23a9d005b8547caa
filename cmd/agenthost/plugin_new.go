package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"unicode"
)

// agenthostModule is the module path plugins import the PDK from.
const agenthostModule = "github.com/agenthost/agenthost"

// pluginNameRE is the manifest's name rule (host/wasm/manifest/schema.json).
var pluginNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{1,62}[a-z0-9]$`)

// pluginNewCmd scaffolds a plugin folder that builds and passes its own
// fixtures as it is: plugin.json, main.go on the PDK, a test that builds it
// and runs the fixtures, and testdata/ with the fixtures.
func pluginNewCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kind := fs.String("kind", "tool", "tool, extractor, connector or actions")
	dir := fs.String("dir", "", "folder to make (default: ./NAME)")
	source := fs.String("agenthost", "", "agenthost source checkout the plugin's go.mod points at, when the folder lies outside one (default: the checkout around the current directory)")
	module := fs.String("module", "", "the plugin's Go module path outside a checkout (default: example.com/NAME)")
	lang := fs.String("lang", langGo, "the plugin's language: go or assemblyscript (an npm project on pdk/as; tool kind only)")
	name, err := parseWithFile(fs, args)
	if err != nil {
		return fmt.Errorf("usage: agenthost plugin new NAME [-kind tool|extractor|connector|actions] [-lang go|assemblyscript] [-dir DIR]")
	}
	if *lang != langGo && *lang != langAssemblyScript {
		return fmt.Errorf("plugin new: unknown -lang %q (go, assemblyscript)", *lang)
	}
	if !pluginNameRE.MatchString(name) {
		return fmt.Errorf("plugin new: %q is not a plugin name (lower case letters, digits and dashes, 3 to 64, starting with a letter)", name)
	}
	if *dir == "" {
		*dir = name
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return fmt.Errorf("plugin new: %s exists and is not empty (nothing written)", *dir)
	}
	// Inside an agenthost checkout the plugin builds in its module; outside,
	// it gets a module of its own that points at a checkout for the PDK.
	checkout, mod := enclosingModule(filepath.Dir(abs))
	var extra map[string]string
	var files map[string]string
	if *lang == langAssemblyScript {
		// No Go module: an npm project whose package.json points at the
		// checkout's pdk/as (relatively inside the checkout).
		if mod != agenthostModule {
			if checkout, err = asCheckout(*source); err != nil {
				return err
			}
		}
		pdkAS := filepath.Join(checkout, "pdk", "as")
		if _, err := os.Stat(filepath.Join(pdkAS, "package.json")); err != nil {
			return fmt.Errorf("plugin new: the checkout %s has no AssemblyScript PDK (pdk/as); a scaffold that cannot build is not made", checkout)
		}
		if mod == agenthostModule {
			if rel, err := filepath.Rel(abs, pdkAS); err == nil {
				pdkAS = rel
			}
		}
		if files, err = asScaffoldFiles(name, *kind, pdkAS); err != nil {
			return err
		}
		if err := writeFiles(abs, files); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "made %s plugin %s (AssemblyScript) in %s\nnext:\n  (cd %s && npm install)\n  agenthost plugin build %s\n  agenthost plugin test %s\n", *kind, name, *dir, *dir, *dir, *dir)
		return nil
	}
	if mod != agenthostModule {
		src := *source
		if src == "" {
			if wd, err := os.Getwd(); err == nil {
				if r, m := enclosingModule(wd); m == agenthostModule {
					src = r
				}
			}
		}
		if src == "" {
			where := "no Go module"
			if checkout != "" {
				where = "module " + mod
			}
			return fmt.Errorf("plugin new: %s lies in %s; the PDK comes from an agenthost checkout: run this inside one, or pass -agenthost PATH (nothing written)", *dir, where)
		}
		if extra, err = moduleFiles(name, *module, src); err != nil {
			return err
		}
		checkout, _ = filepath.Abs(src)
	}
	if files, err = scaffold(name, *kind, checkout); err != nil {
		return err
	}
	for k, v := range extra {
		files[k] = v
	}
	if err := writeFiles(abs, files); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "made %s plugin %s in %s\nnext:\n  agenthost plugin build %s\n  agenthost plugin test %s\n", *kind, name, *dir, *dir, *dir)
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

// scaffold returns the files of a new plugin by path; a kind without a
// buildable scaffold in the checkout the plugin builds against is refused
// with why.
func scaffold(name, kind, checkout string) (map[string]string, error) {
	data := scaffoldData{Name: name, Tool: lowerCamel(name), Host: "api." + name + ".example"}
	var tmpl map[string]string
	switch kind {
	case "tool":
		tmpl = toolScaffold
	case "extractor":
		tmpl = extractorScaffold
	case "connector":
		// The connector PDK is newer than some checkouts, as pdk/actions.
		for _, f := range []string{"pdk/connector/connector.go", "pdk/connection/connection.go"} {
			if _, err := os.Stat(filepath.Join(checkout, filepath.FromSlash(f))); err != nil {
				return nil, fmt.Errorf("plugin new: -kind connector needs the connector PDK (%s), which the checkout %s does not have; a scaffold that cannot build is not made", f, checkout)
			}
		}
		tmpl = connectorScaffold
	case "actions":
		// The legacy-actions PDK is newer than some checkouts: a scaffold
		// that cannot build is not made.
		if _, err := os.Stat(filepath.Join(checkout, "pdk", "actions", "actions.go")); err != nil {
			return nil, fmt.Errorf("plugin new: -kind actions needs the PDK for legacy method.action descriptors (pdk/actions), which the checkout %s does not have; a scaffold that cannot build is not made", checkout)
		}
		tmpl = actionsScaffold
	default:
		return nil, fmt.Errorf("plugin new: unknown -kind %q (tool, extractor, connector, actions)", kind)
	}
	out := map[string]string{}
	for path, text := range tmpl {
		var b bytes.Buffer
		if err := template.Must(template.New(path).Delims("[[", "]]").Parse(text)).Execute(&b, data); err != nil {
			return nil, err
		}
		out[path] = b.String()
	}
	return out, nil
}

type scaffoldData struct {
	Name string // the plugin's name
	Tool string // its tool's name
	// Host is a connector's provider API host (a reserved .example name
	// the author replaces).
	Host string
}

// lowerCamel turns a plugin name into a tool name: "word-count" → "wordCount".
func lowerCamel(name string) string {
	var b strings.Builder
	up := false
	for _, r := range name {
		if r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// enclosingModule finds the go.mod at or above dir: its folder and module path.
func enclosingModule(dir string) (root, module string) {
	for d := dir; ; d = filepath.Dir(d) {
		if f, err := os.Open(filepath.Join(d, "go.mod")); err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return d, strings.Trim(strings.TrimSpace(m), `"`)
				}
			}
			return d, ""
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// moduleFiles are go.mod and go.sum of a plugin outside a checkout: its own
// module, with the PDK (and the test harness) from the checkout at src, and
// the checkout's checksums so that the build needs no network.
func moduleFiles(name, module, src string) (map[string]string, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	if _, mod := enclosingModule(src); mod != agenthostModule {
		return nil, fmt.Errorf("plugin new: -agenthost %s is not an agenthost checkout (nothing written)", src)
	}
	goMod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return nil, err
	}
	goVersion := "1.26"
	for _, l := range strings.Split(string(goMod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goVersion = strings.TrimSpace(v)
		}
	}
	// A module lists every module its build uses: the checkout's own
	// requirements come along (the PDK's JSON library, the test harness's
	// runtime), at the checkout's versions.
	var reqs []string
	inBlock := false
	for _, l := range strings.Split(string(goMod), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "require (":
			inBlock = true
		case inBlock && l == ")":
			inBlock = false
		case inBlock && l != "" && !strings.HasPrefix(l, "//"):
			reqs = append(reqs, strings.TrimSpace(strings.TrimSuffix(l, "// indirect")))
		case strings.HasPrefix(l, "require ") && !strings.HasSuffix(l, "("):
			reqs = append(reqs, strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "require "), "// indirect")))
		}
	}
	sum, err := os.ReadFile(filepath.Join(src, "go.sum"))
	if err != nil {
		return nil, err
	}
	if module == "" {
		module = "example.com/" + name
	}
	replaces := ""
	if r := localReplaces(string(goMod), src); len(r) > 0 {
		// The checkout's patched copies (third_party/), which a dependency's
		// replace directives would not bring along.
		replaces = "\n// The checkout's patched copies of its dependencies.\n" + strings.Join(r, "\n") + "\n"
	}
	return map[string]string{
		"go.mod": fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s v0.0.0\n\n// The PDK and `agenthost plugin test`'s harness come from this checkout.\nreplace %s => %s\n%s\n// What the checkout uses, at its versions.\nrequire (\n\t%s // indirect\n)\n",
			module, goVersion, agenthostModule, agenthostModule, src, replaces, strings.Join(reqs, " // indirect\n\t")),
		"go.sum": string(sum),
	}, nil
}

// localReplaces returns goMod's single-line replace directives that point
// at a directory of the checkout, as directives naming it absolutely.
func localReplaces(goMod, src string) []string {
	var out []string
	for _, l := range strings.Split(goMod, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "replace ")
		if !ok {
			continue
		}
		from, to, ok := strings.Cut(rest, "=>")
		to = strings.TrimSpace(to)
		if !ok || !strings.HasPrefix(to, "./") && !strings.HasPrefix(to, "../") {
			continue
		}
		out = append(out, "replace "+strings.TrimSpace(from)+" => "+filepath.Join(src, filepath.FromSlash(to)))
	}
	return out
}

// The scaffolds use [[ ]] as template delimiters, so that Go code and JSON
// need no escaping.

var toolScaffold = map[string]string{
	"plugin.json": `{
  "name": "[[.Name]]",
  "version": "0.1.0",
  "kind": "tool",
  "description": "[[.Name]]: describe what its tools do for an agent."
}
`,
	"main.go": `// Command [[.Name]] is an agenthost tool plugin. Build it with
// ` + "`agenthost plugin build .`" + `, try it with ` + "`agenthost plugin test .`" + `.
package main

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

// Args are the tool's arguments; its JSON Schema is made from these fields
// and their tags, and the host validates every call against it.
type Args struct {
	Name string ` + "`" + `json:"name" description:"who to greet" minLength:"1"` + "`" + `
}

func init() {
	// A read-only tool may run in parallel and gets no write functions.
	pdk.Tool("[[.Tool]]", "Greets someone by name.", func(a Args) (string, error) {
		return fmt.Sprintf("Hello, %s!", strings.TrimSpace(a.Name)), nil
	}, pdk.ReadOnly())
}

func main() {}
`,
	"main_test.go": `package main

import (
	"testing"

	"github.com/agenthost/agenthost/host/plugintest"
)

// TestFixtures builds this plugin for WebAssembly and runs every fixture of
// testdata/ against it with simulated capabilities, as
// ` + "`agenthost plugin test .`" + ` does.
func TestFixtures(t *testing.T) {
	plugintest.Test(t, ".")
}
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

var extractorScaffold = map[string]string{
	"plugin.json": `{
  "name": "[[.Name]]",
  "version": "0.1.0",
  "kind": "extractor",
  "description": "[[.Name]]: plain text, one content object per paragraph.",
  "capabilities": ["input"],
  "extractor": {"mimeTypes": ["text/plain"], "extensions": [".txt"]}
}
`,
	"main.go": `// Command [[.Name]] is an agenthost extractor plugin: the host hands it a
// document through the input capability, it returns content objects.
package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
)

// Args are what the host says about the document.
type Args struct {
	Name     string ` + "`" + `json:"name" description:"the document's file name"` + "`" + `
	MIMEType string ` + "`" + `json:"mimeType" description:"its media type"` + "`" + `
}

// Result is an extractor's answer: the file's index and its objects.
type Result struct {
	Index   content.Index    ` + "`" + `json:"index"` + "`" + `
	Objects []content.Object ` + "`" + `json:"objects"` + "`" + `
}

func init() {
	pdk.Tool("extract", "Extracts the paragraphs of a text document.", func(a Args) (Result, error) {
		r, err := input.Open()
		if err != nil {
			return Result{}, err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return Result{}, err
		}
		var out Result
		for _, p := range strings.Split(string(data), "\n\n") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			n := len(out.Objects) + 1
			out.Objects = append(out.Objects, content.Object{ID: fmt.Sprintf("para-%d", n), ContentType: content.Text, Data: p,
				Ref: content.Ref{Paragraph: n, Location: fmt.Sprintf("paragraph:%d", n)}, Sequence: n - 1})
		}
		out.Index = content.Index{FileName: a.Name, MIMEType: a.MIMEType, Structure: map[string]any{"paragraphs": len(out.Objects)}}
		return out, nil
	}, pdk.ReadOnly())
}

func main() {}
`,
	"main_test.go": `package main

import (
	"testing"

	"github.com/agenthost/agenthost/host/plugintest"
)

// TestFixtures builds this plugin for WebAssembly and extracts every
// fixture's document of testdata/, as ` + "`agenthost plugin test .`" + ` does.
func TestFixtures(t *testing.T) {
	plugintest.Test(t, ".")
}
`,
	"testdata/sample.txt": `First paragraph of the sample.

Second paragraph, with the word lighthouse.
`,
	"testdata/sample.json": `{
  "input": "sample.txt",
  "mimeType": "text/plain",
  "wantText": ["First paragraph", "lighthouse"]
}
`,
}

var actionsScaffold = map[string]string{
	"plugin.json": `{
  "name": "[[.Name]]",
  "version": "0.1.0",
  "kind": "actions",
  "description": "[[.Name]]: legacy method.action descriptors run as agent tools."
}
`,
	"main.go": `// Command [[.Name]] is an agenthost plugin of kind actions: each legacy
// action is a Go function with a descriptor; dynamicMode actions become
// agent tools named method.action, and the documents a result carries are
// stored by the host as workspace files.
package main

import (
	"strings"

	"github.com/agenthost/agenthost/pdk/actions"
)

// Params are the action's parameters; its JSON Schema is made from these
// fields and their tags, and the host validates every call against it.
type Params struct {
	Text string ` + "`" + `json:"text" description:"the note's text" minLength:"1"` + "`" + `
}

func init() {
	actions.Register(actions.Descriptor{Method: "[[.Tool]]", Action: "makeNote",
		Description: "Makes a note document of a text.", DynamicMode: true},
		func(p Params) (actions.Result, error) {
			note := strings.TrimSpace(p.Text) + "\n"
			return actions.Success("made note.txt", actions.Document{Name: "note.txt", MIMEType: "text/plain", Data: []byte(note)}), nil
		})
}

func main() {}
`,
	"main_test.go": toolScaffold["main_test.go"],
	"testdata/makes-a-note.json": `{
  "tool": "[[.Tool]].makeNote",
  "args": {"text": "Call Ada back."},
  "want": {"contains": ["\"success\":true", "\"documentName\":\"note.txt\""]}
}
`,
	"testdata/refuses-an-empty-text.json": `{
  "tool": "[[.Tool]].makeNote",
  "args": {"text": ""},
  "wantError": "invalid_arguments"
}
`,
}
