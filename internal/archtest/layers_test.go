// Package archtest holds the tests of the module's layering
// (docs/architecture.md#layers): which packages may import which.
package archtest

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The layers, lowest first, as docs/architecture.md#layers writes them down.
// A package imports only packages of its own layer or below.
const (
	base     = iota // plain types and utilities, test servers of others' protocols
	records         // the records the store keeps, in small packages of their own
	store           // the one SQL store
	runtime         // the plugin runtime and the job queue
	services        // the domain services, above the store
	front           // what clients reach: the HTTP API, the MCP listener, the UI
	assembly        // the server's assembly and the one binary
	guests          // plugins: Wasm guests, which import only pdk/ and one another
)

var layerNames = []string{"base", "records", "store", "runtime", "services", "front", "assembly", "guests"}

// layerOf places each package of the module (paths relative to it). The
// longest matching prefix wins; a package that matches none fails
// TestEveryPackageHasALayer, so a new package is placed on purpose.
var layerOf = map[string]int{
	"migrations":                       base,
	"internal/":                        base,
	"pdk/":                             base, // the plugin SDK (its own module)
	"sdk/":                             base, // the Go client SDK (its own module)
	"host/audit":                       base,
	"host/blob":                        base,
	"host/dbwait":                      base,
	"host/docref":                      base,
	"host/egress":                      base,
	"host/figure":                      base,
	"host/knowledge/analysis":          base,
	"host/money":                       base,
	"host/procguard":                   base,
	"host/schema":                      base,
	"host/sdkwire":                     base,
	"host/secrets":                     base,
	"host/settings":                    base,
	"host/tenancy":                     base,
	"host/testenv":                     base,
	"host/toolcall":                    base,
	"host/wasm/interrupt":              base,
	"host/wasm/manifest":               base,
	"host/wasm/signature":              base,
	"host/wasm/wasmbin":                base,
	"host/wasm/crosshost":              base,
	"host/connections/fakes/":          base,
	"host/filetransfer/sftptest":       base,
	"host/llm/llmtest":                 base,
	"host/passkey/passkeytest":         base,
	"host/signin/oidctest":             base,
	"host/background/bgjob":            records,
	"host/billing/ledger":              records,
	"host/files/filemeta":              records,
	"host/connections/connrecord":      records,
	"host/datasources/dsrecord":        records,
	"host/knowledge/kindex":            records,
	"host/llm/modeluse":                records,
	"host/mcpclient/mcpconfig":         records,
	"host/scim":                        records, // owns its types and its service; imports only base
	"host/workflows":                   records, // owns its types and its service; imports only base
	"host/store":                       store,
	"host/wasm":                        runtime,
	"host/jobs":                        runtime,
	"host/store/storetest":             services, // the conformance suite drives the services' contracts
	"host/actions":                     services,
	"host/agent":                       services,
	"host/agenttrace":                  services,
	"host/background":                  services,
	"host/billing":                     services,
	"host/builtin":                     services,
	"host/connections":                 services,
	"host/datasources":                 services,
	"host/files":                       services,
	"host/filetransfer":                services,
	"host/indexing":                    services,
	"host/installed":                   services,
	"host/knowledge":                   services,
	"host/knowledge/chunk":             services,
	"host/knowledge/extract":           services,
	"host/knowledge/ingest":            services,
	"host/knowledge/internal/keyed":    services,
	"host/knowledge/memory":            services,
	"host/knowledge/ocr":               services,
	"host/knowledge/ondemand":          services,
	"host/knowledge/progress":          services,
	"host/knowledge/search":            services,
	"host/knowledge/unlock":            services,
	"host/llm":                         services,
	"host/mcpclient":                   services,
	"host/mcpserver":                   services, // the builtin client capability reaches it
	"host/passkey":                     services,
	"host/plugintest":                  services,
	"host/signin":                      services,
	"host/sqlquery":                    services,
	"host/sweep":                       services,
	"host/telemetry":                   services,
	"host/tools":                       services,
	"host/websearch":                   services,
	"host/rounds":                      services,
	"host/notifications":               records,  // a leaf (tenancy and the standard library): its records beside the service that wakes streams
	"host/worldtest":                   assembly, // a test world built with the server's own wiring
	"host/api":                         front,
	"host/webui":                       front,
	"host/oauthserver":                 front,
	"host/server":                      assembly,
	"cmd/":                             assembly,
	"plugins/":                         guests,
	"host/wasm/build":                  runtime,
	"host/wasm/wasmtest":               services, // its test host loads a scripted model
	"host/connections/connectionstest": assembly, // builds its test world with worldtest
}

// place finds a package's layer by its longest matching prefix.
func place(pkg string) (int, bool) {
	best, layer := -1, 0
	for p, l := range layerOf {
		if (pkg == p || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/")) && len(p) > best {
			best, layer = len(p), l
		}
	}
	return layer, best >= 0
}

// graph is the module's packages and their imports within the module
// (non-test files, the default build context), paths relative to it.
type graph struct {
	module  string
	imports map[string][]string
}

func load(t *testing.T) graph {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var module string
	for _, l := range strings.Split(string(mod), "\n") {
		if m, ok := strings.CutPrefix(l, "module "); ok {
			module = strings.TrimSpace(m)
		}
	}
	if module == "" {
		t.Fatal("go.mod names no module")
	}
	g := graph{module: module, imports: map[string][]string{}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case rel != "." && fileExists(filepath.Join(path, "go.mod")):
			return filepath.SkipDir // another module (pdk, sdk)
		}
		p, err := build.Default.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		var in []string
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				in = append(in, r)
			}
		}
		g.imports[rel] = in
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.imports) < 50 {
		t.Fatalf("found only %d packages under %s", len(g.imports), root)
	}
	return g
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// deps is every package pkg imports, directly or not, within the module.
func (g graph) deps(pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, d := range g.imports[p] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func TestEveryPackageHasALayer(t *testing.T) {
	g := load(t)
	for pkg := range g.imports {
		if _, ok := place(pkg); !ok {
			t.Errorf("%s has no layer: place it in layerOf and in docs/architecture.md#layers", pkg)
		}
	}
}

func TestNoImportRunsUpALayer(t *testing.T) {
	g := load(t)
	for pkg, imps := range g.imports {
		from, ok := place(pkg)
		if !ok {
			continue // TestEveryPackageHasALayer names it
		}
		for _, imp := range imps {
			to, ok := place(imp)
			if !ok {
				continue
			}
			if from == guests && !strings.HasPrefix(imp, "pdk/") && !strings.HasPrefix(imp, "plugins/") {
				t.Errorf("plugin %s imports %s: a guest imports only pdk/ and other guests' packages", pkg, imp)
				continue
			}
			if to > from {
				t.Errorf("%s (%s) imports %s (%s): an import runs up a layer", pkg, layerNames[from], imp, layerNames[to])
			}
		}
	}
}

func TestNoImportCycle(t *testing.T) {
	g := load(t)
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) bool
	visit = func(p string) bool {
		switch state[p] {
		case onPath:
			i := slices.Index(path, p)
			t.Errorf("import cycle: %s", strings.Join(append(slices.Clone(path[i:]), p), " → "))
			return false
		case done:
			return true
		}
		state[p] = onPath
		path = append(path, p)
		for _, d := range g.imports[p] {
			if !visit(d) {
				return false
			}
		}
		path = path[:len(path)-1]
		state[p] = done
		return true
	}
	pkgs := make([]string, 0, len(g.imports))
	for p := range g.imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if !visit(p) {
			return
		}
	}
}

// TestStoreImportsNothingAbove keeps the store on leaves and plain types:
// none of the services, the plugin runtime or the front ends is among its
// dependencies, however indirectly.
func TestStoreImportsNothingAbove(t *testing.T) {
	g := load(t)
	if _, ok := g.imports["host/store"]; !ok {
		t.Fatal("host/store not found")
	}
	forbidden := []string{
		"host/agent", "host/api", "host/background", "host/billing", "host/builtin",
		"host/connections", "host/datasources", "host/files", "host/indexing",
		"host/jobs", "host/knowledge", "host/llm", "host/mcpclient", "host/mcpserver",
		"host/server", "host/tools", "host/wasm", "host/webui", "host/rounds",
	}
	deps := g.deps("host/store")
	for _, d := range deps {
		if slices.Contains(forbidden, d) {
			t.Errorf("host/store depends on %s", d)
		}
		if l, ok := place(d); ok && l > store {
			t.Errorf("host/store depends on %s (%s)", d, layerNames[l])
		}
	}
	t.Logf("host/store depends on: %s", strings.Join(deps, " "))
}

// knowledgeOrder ranks the packages of host/knowledge's concerns, lowest
// first (docs/architecture.md#layers): within the services layer, each
// imports only packages of a lower rank, so the concerns stay apart and a
// leaf (chunking, search, memory, passwords) never grows a dependency on
// the pipeline above it.
var knowledgeOrder = map[string]int{
	"host/knowledge/internal/keyed": 0,
	"host/knowledge/chunk":          0,
	"host/knowledge/search":         0,
	"host/knowledge/memory":         0,
	"host/knowledge/unlock":         0,
	"host/knowledge/extract":        1,
	"host/knowledge/ondemand":       2,
	"host/knowledge/ocr":            3,
	"host/knowledge/progress":       4,
	"host/knowledge/ingest":         4,
	"host/knowledge":                5, // the plugins' capability, over all of them
}

func TestKnowledgeConcernsPointDown(t *testing.T) {
	g := load(t)
	for pkg, from := range knowledgeOrder {
		if _, ok := g.imports[pkg]; !ok {
			t.Errorf("%s not found: update knowledgeOrder", pkg)
		}
		for _, imp := range g.imports[pkg] {
			if to, ok := knowledgeOrder[imp]; ok && to >= from {
				t.Errorf("%s (rank %d) imports %s (rank %d): the knowledge concerns point down", pkg, from, imp, to)
			}
		}
	}
	for pkg := range g.imports {
		rest, ok := strings.CutPrefix(pkg, "host/knowledge/")
		if !ok || strings.HasPrefix(rest, "kindex") || strings.HasPrefix(rest, "analysis") || strings.HasPrefix(rest, "agentcontext") {
			continue
		}
		if _, ok := knowledgeOrder[pkg]; !ok {
			t.Errorf("%s has no rank in knowledgeOrder", pkg)
		}
	}
}
