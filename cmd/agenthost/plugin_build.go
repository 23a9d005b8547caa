package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/build"
)

// pluginBuildCmd compiles a plugin folder into one .wasm with its manifest.
func pluginBuildCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output file (default DIR/NAME.wasm)")
	trust := fs.Bool("trust-manifest-tools", false, "keep plugin.json's tools instead of the code's (test plugins that lie)")
	prebuilt := fs.String("wasm", "", "a module another toolchain compiled (any language speaking docs/plugin-abi.md): describe it and embed DIR/plugin.json's manifest instead of compiling DIR")
	dir, rest := "", args
	// Accept the folder before or after the flags.
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		dir, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if dir == "" {
		return fmt.Errorf("usage: agenthost plugin build DIR [-o FILE] [-wasm MODULE]")
	}
	// Describing a plugin links every capability the server offers (each
	// refusing), so plugins importing any of them build.
	reg, err := wasm.NewRegistry(builtin.NewCapabilities().List(wasm.EgressOptions{})...)
	if err != nil {
		return err
	}
	o := build.Options{TrustManifestTools: *trust, Registry: reg}
	if *prebuilt != "" {
		if o.Module, err = os.ReadFile(*prebuilt); err != nil {
			return err
		}
	}
	module, m, err := build.Build(ctx, dir, o)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(dir, m.Name+".wasm")
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*out, module, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %s %s (%d tools, %.1f MB) -> %s\n", m.Name, m.Version, len(m.Tools), float64(len(module))/1e6, *out)
	return nil
}
