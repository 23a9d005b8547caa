// Package build turns a plugin's source folder into one distributable .wasm:
// it compiles the code (Go for wasip1, or AssemblyScript when the folder
// holds an asconfig.json), learns the tools the code registers by
// running its describe export once in a sandbox, merges them with the folder's
// plugin.json, validates the result and embeds it as the manifest section.
package build

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// Options adjust a build.
type Options struct {
	// Go is the go command (default "go").
	Go string
	// TrustManifestTools keeps the tools listed in plugin.json instead of the
	// ones the code registers. Only for building deliberately lying test
	// plugins: the host compares the two at load and refuses a mismatch.
	TrustManifestTools bool
	// Registry lists the capabilities the build may link while describing
	// (all refuse); nil links the standard ones.
	Registry *wasm.Registry
	// Module is a module another toolchain compiled (any language that
	// speaks docs/plugin-abi.md): it is described and given its manifest
	// instead of compiling dir, which still holds plugin.json.
	Module []byte
}

// Build compiles the plugin in dir and returns the module with its manifest.
func Build(ctx context.Context, dir string, o Options) ([]byte, *manifest.Manifest, error) {
	spec, err := os.ReadFile(filepath.Join(dir, "plugin.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("reading plugin.json: %w", err)
	}
	var m manifest.Manifest
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("%s/plugin.json: %w", dir, err)
	}
	if m.ManifestVersion == 0 {
		m.ManifestVersion = manifest.Version
	}
	module := o.Module
	switch {
	case module != nil:
	case IsAssemblyScript(dir):
		module, err = compileAssemblyScript(ctx, dir)
	default:
		module, err = compile(ctx, dir, o.Go)
	}
	if err != nil {
		return nil, nil, err
	}
	reg := o.Registry
	if reg == nil {
		if reg, err = wasm.NewRegistry(wasm.StandardCapabilities(wasm.EgressOptions{})...); err != nil {
			return nil, nil, err
		}
	}
	// A test plugin that lies keeps plugin.json's tools (or actions)
	// without running its code (one whose initialisation never ends could
	// not be described).
	if !o.TrustManifestTools || len(m.Tools)+len(m.Actions) == 0 {
		d, err := wasm.DescribeModule(ctx, module, reg)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		if err := fill(&m, d); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	out, err := manifest.Embed(module, &m)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	// Read back, so an actions plugin's derived tools are filled in.
	built, err := manifest.Read(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return out, built, nil
}

// fill writes what the code registers into the manifest: the tools of a
// plugin, the actions of an actions plugin (pdk/actions).
func fill(m *manifest.Manifest, d wasm.Description) error {
	if m.Kind == manifest.KindActions {
		if len(d.Tools) > 0 {
			return fmt.Errorf("the code registers tool %q: an actions plugin registers actions only (pdk/actions)", d.Tools[0].Name)
		}
		m.Tools, m.Actions = nil, d.Actions
		return nil
	}
	if len(d.Actions) > 0 {
		return fmt.Errorf(`the code registers action %s: declare "kind": "actions" in plugin.json`, d.Actions[0].ToolName())
	}
	m.Tools = d.Tools
	return nil
}

// compile runs the Go toolchain for wasip1 in dir.
func compile(ctx context.Context, dir, goCmd string) ([]byte, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	tmp, err := os.MkdirTemp("", "agenthost-build")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "plugin.wasm")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build in %s: %w\n%s", dir, err, stderr.String())
	}
	return os.ReadFile(out)
}

// IsAssemblyScript reports whether the plugin folder dir is an AssemblyScript
// project (an asconfig.json beside plugin.json) rather than Go.
func IsAssemblyScript(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "asconfig.json"))
	return err == nil
}

// FindASC returns the AssemblyScript compiler of the npm project dir: the
// node_modules/.bin/asc nearest above it, as npm would run it.
func FindASC(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "node_modules", ".bin", "asc")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s: the AssemblyScript compiler is not installed: run `npm install` there (its package.json names assemblyscript and @agenthost/as-pdk)", dir)
		}
	}
}

// compileAssemblyScript runs asc in dir with the folder's asconfig.json
// (entries, --exportStart _initialize, the PDK's abort handler; see
// pdk/as). The compiler is a Node program: node must be on PATH.
func compileAssemblyScript(ctx context.Context, dir string) ([]byte, error) {
	asc, err := FindASC(dir)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "agenthost-build")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "plugin.wasm")
	cmd := exec.CommandContext(ctx, asc, "--config", "asconfig.json", "--noColors", "--outFile", out)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("asc in %s: %w\n%s", dir, err, stderr.String())
	}
	return os.ReadFile(out)
}
