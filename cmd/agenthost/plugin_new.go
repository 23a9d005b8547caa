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
	"runtime"
	"runtime/debug"
	"strings"
	"text/template"
	"unicode"

	"golang.org/x/mod/semver"
)

// agenthostModule is the server's module path; pdkModule is the PDK's, a
// module of its own that plugins outside the repository `go get`.
const (
	agenthostModule = "github.com/agenthost/agenthost"
	pdkModule       = agenthostModule + "/pdk"
)

// pluginNameRE is the manifest's name rule (host/wasm/manifest/schema.json).
var pluginNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{1,62}[a-z0-9]$`)

// pluginNewCmd scaffolds a plugin folder that builds and passes its own
// fixtures as it is: plugin.json, main.go on the PDK, testdata/ with the
// fixtures, and either a go.mod requiring the PDK module (outside a
// checkout) or a Go test that builds it and runs the fixtures (in one, or
// pointed at one with -agenthost).
func pluginNewCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kind := fs.String("kind", "tool", "tool, extractor, connector or actions")
	dir := fs.String("dir", "", "folder to make (default: ./NAME)")
	source := fs.String("agenthost", "", "agenthost source checkout the plugin's go.mod points at instead of a PDK version, with `plugin test`'s Go harness (for work on the PDK itself)")
	pdkVersion := fs.String("pdk", "", "the PDK module version the plugin's go.mod requires outside a checkout (default: this server's version)")
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
	// Inside an agenthost checkout the plugin builds in its module. Outside,
	// it gets a module of its own requiring the PDK module at the server's
	// version (or -pdk), which `go mod tidy` fetches like any module; only
	// with -agenthost, or from a server build without a version, does its
	// go.mod point at a checkout instead.
	if *lang == langAssemblyScript {
		return asPluginNew(name, *kind, *dir, abs, *source, stdout)
	}
	if *pdkVersion != "" && *source != "" {
		return fmt.Errorf("plugin new: -pdk requires the PDK module, -agenthost points at a checkout instead: give one (nothing written)")
	}
	checkout, mod := enclosingModule(filepath.Dir(abs))
	var extra map[string]string
	harness := true
	if mod != agenthostModule {
		version := *pdkVersion
		if version == "" && *source == "" {
			version = serverModuleVersion()
		}
		src := *source
		if src == "" && version == "" {
			if wd, err := os.Getwd(); err == nil {
				if r, m := enclosingModule(wd); m == agenthostModule {
					src = r
				}
			}
		}
		switch {
		case version != "" && *source == "":
			if !validModuleVersion(version) {
				return fmt.Errorf("plugin new: -pdk %q is not a module version (v1.2.3 or a pseudo-version; nothing written)", version)
			}
			extra = pdkModuleFiles(name, *module, version, goDirective())
			harness = false // host/plugintest is the server's: `plugin test` runs the fixtures
			checkout = ""   // the PDK of the server's version has what its scaffolds use
		case src != "":
			if extra, err = moduleFiles(name, *module, src); err != nil {
				return err
			}
			checkout, _ = filepath.Abs(src)
		default:
			where := "no Go module"
			if checkout != "" {
				where = "module " + mod
			}
			return fmt.Errorf("plugin new: %s lies in %s and this agenthost build has no version to require the PDK module (%s) at: pass -pdk VERSION, or -agenthost PATH of a checkout (nothing written)", *dir, where, pdkModule)
		}
	}
	files, err := scaffold(name, *kind, checkout)
	if err != nil {
		return err
	}
	if !harness {
		delete(files, "main_test.go")
	}
	for k, v := range extra {
		files[k] = v
	}
	for rel, body := range files {
		p := filepath.Join(abs, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	tidy := ""
	if !harness {
		tidy = fmt.Sprintf("  (cd %s && go mod tidy)   # fetches the PDK module\n", *dir)
	}
	fmt.Fprintf(stdout, "made %s plugin %s in %s\nnext:\n%s  agenthost plugin build %s\n  agenthost plugin test %s\n", *kind, name, *dir, tidy, *dir, *dir)
	return nil
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
		for _, f := range checkoutFiles(checkout, "pdk/connector/connector.go", "pdk/connection/connection.go") {
			if _, err := os.Stat(filepath.Join(checkout, filepath.FromSlash(f))); err != nil {
				return nil, fmt.Errorf("plugin new: -kind connector needs the connector PDK (%s), which the checkout %s does not have; a scaffold that cannot build is not made", f, checkout)
			}
		}
		tmpl = connectorScaffold
	case "actions":
		// The legacy-actions PDK is newer than some checkouts: a scaffold
		// that cannot build is not made.
		if _, err := os.Stat(filepath.Join(checkout, "pdk", "actions", "actions.go")); checkout != "" && err != nil {
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

// checkoutFiles are files of a checkout a scaffold needs; none when the
// plugin requires the PDK module at the server's version (checkout "").
func checkoutFiles(checkout string, files ...string) []string {
	if checkout == "" {
		return nil
	}
	return files
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
		replaces = "\n// The checkout's PDK and SDK modules.\n" + strings.Join(r, "\n") + "\n"
	}
	return map[string]string{
		"go.mod": fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s v0.0.0\n\n// The PDK and `agenthost plugin test`'s harness come from this checkout.\nreplace %s => %s\n%s\n// What the checkout uses, at its versions.\nrequire (\n\t%s // indirect\n)\n",
			module, goVersion, agenthostModule, agenthostModule, src, replaces, strings.Join(reqs, " // indirect\n\t")),
		"go.sum": string(sum),
	}, nil
}

// pdkModuleFiles is the go.mod of a plugin outside a checkout: its own
// module requiring the PDK module at version, and nothing else: the PDK
// depends on the standard library only (its JSON decoder is a copy inside
// it, pdk/internal/gojson), so `go mod tidy` adds no other module.
func pdkModuleFiles(name, module, version, goVersion string) map[string]string {
	if module == "" {
		module = "example.com/" + name
	}
	return map[string]string{
		"go.mod": fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s %s\n", module, goVersion, pdkModule, version),
	}
}

// serverModuleVersion is the version of the agenthost module this binary
// was built from, which the PDK module is released at too (tags vX.Y.Z,
// pdk/vX.Y.Z and sdk/vX.Y.Z on one commit); "" for a build that names no
// module version a proxy could serve: a checkout with uncommitted changes,
// or one without version control information.
func serverModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != agenthostModule || !validModuleVersion(bi.Main.Version) {
		return ""
	}
	return bi.Main.Version
}

// validModuleVersion reports whether v can be required in a go.mod: a
// semantic version with a leading v, without build metadata (a "+dirty"
// build names no commit).
func validModuleVersion(v string) bool {
	return semver.IsValid(v) && semver.Build(v) == ""
}

// goDirective is the go line of a new plugin's go.mod: the toolchain this
// server was built with, which is at least what the PDK's go.mod asks.
func goDirective() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	if i := strings.IndexFunc(v, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		v = v[:i] // go1.27rc1, devel builds
	}
	return v
}

// localReplaces returns goMod's replace directives (single-line or in a
// block) that point at a directory of the checkout, as directives naming it
// absolutely: the PDK and SDK modules, which the checkout's go.mod points
// at its own folders, and a dependency's replace would not bring along.
func localReplaces(goMod, src string) []string {
	var out []string
	inBlock := false
	for _, l := range strings.Split(goMod, "\n") {
		l = strings.TrimSpace(l)
		var rest string
		switch {
		case l == "replace (":
			inBlock = true
			continue
		case inBlock && l == ")":
			inBlock = false
			continue
		case inBlock:
			rest = l
		default:
			var ok bool
			if rest, ok = strings.CutPrefix(l, "replace "); !ok {
				continue
			}
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
