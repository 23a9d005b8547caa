package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenthost/agenthost/host/plugintest"
)

// pluginTestCmd builds a plugin folder (or takes a built .wasm beside it)
// and runs its fixtures (DIR/testdata/*.json) with simulated capabilities;
// it prints the manifest, each tool's schemas and each fixture's result,
// and fails when a fixture does.
func pluginTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wasmFile := fs.String("wasm", "", "run this built plugin instead of building DIR (DIR still holds the fixtures)")
	verbose := fs.Bool("v", false, "print the plugin's log lines")
	cache := addCacheFlags(fs)
	dir, err := parseWithFile(fs, args)
	if err != nil {
		return fmt.Errorf("usage: agenthost plugin test DIR [-wasm FILE]")
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	limits, err := cache.limits()
	if err != nil {
		return err
	}
	// A .wasm given as DIR runs against the fixtures of its folder.
	if strings.HasSuffix(dir, ".wasm") && *wasmFile == "" {
		*wasmFile, dir = dir, filepath.Dir(dir)
	}
	o := plugintest.Options{Dir: dir, Out: stdout, CacheDir: *cache.dir, CacheLimits: limits}
	if *verbose {
		o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	if *wasmFile != "" {
		if o.Module, err = os.ReadFile(*wasmFile); err != nil {
			return err
		}
	}
	rep, err := plugintest.Run(ctx, o)
	if err != nil {
		return err
	}
	if n := rep.Failed(); n > 0 {
		return fmt.Errorf("plugin test: %d of %d fixtures failed", n, len(rep.Outcomes))
	}
	return nil
}
