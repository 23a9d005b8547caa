// Package builtin carries the plugins that ship inside the agenthost binary.
// `make plugins` builds every folder of plugins/ into wasm/; the files are
// embedded at compile time, so `agenthost serve` needs nothing beside it.
package builtin

import (
	"embed"
	"io/fs"
	"path"
	"strings"

	"github.com/agenthost/agenthost/host/wasm"
)

//go:embed wasm
var modules embed.FS

// Sources returns the embedded plugins, ready for wasm.Host.Load. It is empty in
// a binary built without `make plugins` (e.g. plain `go build`).
func Sources() ([]wasm.Source, error) {
	entries, err := fs.ReadDir(modules, "wasm")
	if err != nil {
		return nil, err
	}
	var out []wasm.Source
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".wasm") {
			continue
		}
		name := path.Join("wasm", e.Name())
		b, err := modules.ReadFile(name)
		if err != nil {
			return nil, err
		}
		// ReadFile copies: the host drops its copy once the plugin is
		// loaded and reads it again only if it must instrument it anew.
		reload := func() ([]byte, error) { return modules.ReadFile(name) }
		out = append(out, wasm.Source{Origin: "builtin:" + strings.TrimSuffix(e.Name(), ".wasm"), Module: b, Builtin: true, Reload: reload})
	}
	return out, nil
}

// OptIn reports whether a built-in plugin (by its file name, e.g.
// "mcpconformance") is loaded only when the operator enables it (serve
// -enable-plugin): fixtures for tests, not tools for agents, which would
// otherwise join every tool set that offers all tools.
func OptIn(name string) bool {
	switch name {
	case "mcpconformance":
		return true
	}
	return false
}

// Name is a built-in source's file name ("builtin:NAME" origin).
func Name(s wasm.Source) string { return strings.TrimPrefix(s.Origin, "builtin:") }
