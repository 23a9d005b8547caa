package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
)

// pluginWarmCmd compiles the built-in plugins into the machine's compile
// cache, one at a time, so that the first `serve` or `plugin call` on this
// machine finds them compiled (`make build` runs it).
func pluginWarmCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin warm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cacheDir := addCacheDirFlag(fs)
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg, err := wasm.NewRegistry(builtin.NewCapabilities().List(wasm.EgressOptions{})...)
	if err != nil {
		return err
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithLogger(logger).WithCapabilities(reg).WithCompilationCacheDir(*cacheDir))
	if err != nil {
		return err
	}
	defer h.Close(context.WithoutCancel(ctx))
	srcs, err := builtin.Sources()
	if err != nil {
		return err
	}
	start := time.Now()
	for _, s := range srcs {
		p, err := h.Load(ctx, s)
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := p.Warm(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "warm %-12s %6.2f s\n", p.Name(), time.Since(t0).Seconds())
	}
	fmt.Fprintf(stdout, "%d built-in plugins ready in %s (%.1f s)\n", len(srcs), *cacheDir, time.Since(start).Seconds())
	return nil
}
